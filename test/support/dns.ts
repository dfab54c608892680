/**
 * Stands in for the DNS a deployment gives HAProxy to find the webhook by name: compose's embedded
 * DNS (127.0.0.11 on every compose network), which cannot run outside Docker. A UDP server on
 * loopback answering what that DNS answers for a container's name: an A record with the container's
 * current address (TTL 0: compose's answers are not cached either), no record for another type
 * (AAAA) of a known name, and NXDOMAIN for a name it does not know. The test moves a name to another
 * address as compose does when it recreates the container.
 */
import { createSocket } from "node:dgram";

export interface DnsStandIn {
  /** host:port, as HAProxy's `nameserver` takes it. */
  addr: string;
  /** Points `name` at `ipv4` from the next query on (undefined: the name is gone, NXDOMAIN). */
  set(name: string, ipv4: string | undefined): void;
  /** A queries answered so far for `name`. */
  answered(name: string): number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const CLASS_IN = 1;

/** The question's name (lower case, no trailing dot) and where the question's type begins. */
function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = at;
  while (i < msg.length) {
    const len = msg[i] as number;
    if (len === 0) return { name: labels.join(".").toLowerCase(), end: i + 1 };
    // A query's question is never compressed.
    if (len >= 0xc0) throw new Error("compressed name in a question");
    labels.push(msg.subarray(i + 1, i + 1 + len).toString("latin1"));
    i += 1 + len;
  }
  throw new Error("name runs past the message");
}

export async function startDnsStandIn(): Promise<DnsStandIn> {
  const names = new Map<string, string | undefined>();
  const counts = new Map<string, number>();
  const socket = createSocket("udp4");
  socket.on("message", (msg, from) => {
    let name: string;
    let qtype: number;
    let questionEnd: number;
    try {
      if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return;
      const q = readName(msg, 12);
      name = q.name;
      qtype = msg.readUInt16BE(q.end);
      questionEnd = q.end + 4;
    } catch {
      return;
    }
    const ip = names.get(name);
    const known = ip !== undefined;
    const answer = known && qtype === TYPE_A;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // the query's id
    // QR, the query's opcode and RD, AA, RA; rcode NXDOMAIN for an unknown name.
    const flags = 0x8000 | (msg.readUInt16BE(2) & 0x7900) | 0x0400 | 0x0080 | (known ? 0 : 3);
    header.writeUInt16BE(flags, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer ? 1 : 0, 6);
    const parts = [header, msg.subarray(12, questionEnd)];
    if (answer) {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the question's name
      rr.writeUInt16BE(TYPE_A, 2);
      rr.writeUInt16BE(CLASS_IN, 4);
      rr.writeUInt32BE(0, 6);
      rr.writeUInt16BE(4, 10);
      (ip as string).split(".").forEach((octet, k) => {
        rr[12 + k] = Number(octet);
      });
      parts.push(rr);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    socket.send(Buffer.concat(parts), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address();
  return {
    addr: `127.0.0.1:${port}`,
    set: (name, ipv4) => {
      names.set(name.toLowerCase(), ipv4);
    },
    answered: (name) => counts.get(name.toLowerCase()) ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

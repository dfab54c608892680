/**
 * One write to Redis per turn of the event loop for the quote path, instead of one per quote.
 *
 * Used on Redis Cluster, where every POST /quote stores its quote with one EVALSHA of its own (a
 * single node or a Sentinel-found master takes the turn's quotes in one EVALSHA instead:
 * src/quote-store/redis.ts `put`). ioredis writes each command to its socket as it is sent: one
 * `write` syscall per quote, each waking Redis, which answers each in a packet of its own.
 * On loopback TCP that write was the largest single cost in a steady-state profile of the quote path
 * (about an eighth of its CPU). `hold()` corks the client's sockets before a command is sent, and the
 * next `setImmediate`, which runs after this turn's I/O callbacks (so after every request read in the
 * same turn), uncorks them: Node hands the turn's commands to the kernel in one `writev`, and Redis
 * answers them in one packet. ioredis' own `enableAutoPipelining` batches the same way but through a
 * pipeline object per batch, which cost more CPU per quote than it saved (src/redis/client.ts).
 *
 * Measured with `npm run loadtest -- --rate 4000` (two runs each way, same machine): 3.5 to 4 quotes
 * per write; the webhook's CPU per quote 219-225 µs against 232-235 µs, Redis' 30-32 µs against
 * 42-48 µs, and the p99 lower.
 *
 * What it does not change: the order of commands on a connection (a cork only delays the bytes),
 * ioredis' reply queue and timeouts, and what a disconnect does to commands in flight (a socket that
 * closes while corked fails them as ioredis fails any written command then). The delay is at most the
 * rest of the current turn.
 */
import type { Writable } from "node:stream";
import { Cluster, type Redis } from "ioredis";
import type { RedisClient } from "./client.ts";

/** The client's writable sockets now: the node's (single, Sentinel-found master), or each master's. */
export function clientSockets(redis: RedisClient): Writable[] {
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const out: Writable[] = [];
  for (const n of nodes) if (n.stream?.writable) out.push(n.stream);
  return out;
}

export class WriteCoalescer {
  private readonly corked: Writable[] = [];
  private held = false;
  /** Turns that held the sockets: one write per socket each. */
  readonly stats = { turns: 0 };

  constructor(private readonly sockets: () => Writable[]) {}

  /** Call just before sending a command: its bytes leave with every other command of this turn. */
  hold(): void {
    if (this.held) return;
    this.held = true;
    this.stats.turns++;
    for (const s of this.sockets()) {
      s.cork();
      this.corked.push(s);
    }
    setImmediate(this.release);
  }

  private readonly release = (): void => {
    this.held = false;
    for (const s of this.corked) s.uncork();
    this.corked.length = 0;
  };
}

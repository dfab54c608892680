/**
 * A local Hermes stand-in for tests: serves GET /v2/updates/price/stream over a real socket on
 * loopback, replaying recorded events (an SSE fixture in Hermes' format) to each connection.
 *
 * - Only the requested `ids[]` are sent, and an unknown id answers 404 as Hermes does.
 * - `rebase`: shifts every publish_time so the first event is "now" (a replay of a live stream);
 *   without it the recorded, old timestamps are sent unchanged.
 * - `dropAfter`: the first connection ends after that many events; later connections get the rest,
 *   so a client's reconnect can be observed.
 */
import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReplayOptions {
  rebase?: boolean;
  dropAfter?: number;
  /** Pause between events, ms (a stream, not a burst). */
  intervalMs?: number;
  /** Only the first `limit` fixture events are used. */
  limit?: number;
}

export interface HermesReplay {
  url: string;
  /** Every request's URL, in order. */
  requests: URL[];
  close(): Promise<void>;
}

interface Update {
  id: string;
  price: { publish_time: number };
  ema_price?: { publish_time: number };
  metadata?: { proof_available_time?: number; prev_publish_time?: number };
}

/** The `data:` payloads of an SSE fixture file, parsed. */
export function readFixture(path: string): { binary: unknown; parsed: Update[] }[] {
  const events: { binary: unknown; parsed: Update[] }[] = [];
  for (const block of readFileSync(path, "utf8").split(/\n\n+/)) {
    const data = block
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (data) events.push(JSON.parse(data));
  }
  return events;
}

export async function startHermesReplay(fixture: string, opts: ReplayOptions = {}): Promise<HermesReplay> {
  const events = readFixture(fixture).slice(0, opts.limit);
  const known = new Set(events.flatMap((e) => e.parsed.map((u) => u.id)));
  const first = events[0]?.parsed[0]?.price.publish_time ?? 0;
  const offset = opts.rebase ? Math.floor(Date.now() / 1000) - first : 0;
  const requests: URL[] = [];
  const open = new Set<ServerResponse>();
  let connections = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(url);
    if (url.pathname !== "/v2/updates/price/stream") {
      res.writeHead(404).end("Not Found");
      return;
    }
    const ids = url.searchParams.getAll("ids[]").map((s) => s.replace(/^0x/, "").toLowerCase());
    const missing = ids.filter((id) => !known.has(id));
    if (!ids.length || missing.length) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`Price ids not found: ${missing.join(", ")}`);
      return;
    }
    const n = connections++;
    const from = n === 0 ? 0 : (opts.dropAfter ?? events.length);
    const to = n === 0 && opts.dropAfter !== undefined ? opts.dropAfter : events.length;
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    open.add(res);
    res.on("close", () => open.delete(res));
    void (async () => {
      for (const e of events.slice(from, to)) {
        const parsed = e.parsed.filter((u) => ids.includes(u.id)).map((u) => shift(u, offset));
        if (!parsed.length) continue;
        if (res.destroyed) return;
        res.write(`data:${JSON.stringify({ binary: e.binary, parsed })}\n\n`);
        await new Promise((r) => setTimeout(r, opts.intervalMs ?? 5));
      }
      if (n === 0 && opts.dropAfter !== undefined) res.end();
      // Otherwise hold the stream open, as Hermes does, until the client or close() ends it.
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const r of open) r.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function shift(u: Update, offset: number): Update {
  if (!offset) return u;
  const c = structuredClone(u);
  c.price.publish_time += offset;
  if (c.ema_price) c.ema_price.publish_time += offset;
  if (c.metadata?.proof_available_time) c.metadata.proof_available_time += offset;
  if (c.metadata?.prev_publish_time) c.metadata.prev_publish_time += offset;
  return c;
}

/**
 * `npm run loadtest -- --trace-server`: where the tail is, read from the server's side of the socket.
 *
 * The load test's latency runs from each request's scheduled send to its answer read by the
 * generator: it holds the generator's own lag, the server's queue, the server's work and its wait for
 * Redis, in one figure. With this flag the webhook (and the bare server of `--baseline`, or every
 * target of `--sweep`) runs with a preload (server-trace.mjs) that records each request's arrival and
 * handling, each store write's round trip and the event loop's utilisation; after the measured phase
 * (each step of a sweep) the load test asks every server process for its record (SIGUSR2) and the
 * report splits the tail:
 *
 *   scheduled send -> request event   the generator's lag, the network and the server's queue
 *   request event -> answer written    the server's work, including its wait for the store
 *   store write sent -> reply handled  Redis' round trip plus the event loop's wait to read the reply
 *   event loop busy per 50 ms window   whether the server was saturated, and how often
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeDescendantPids } from "../../tooling/processes.ts";
import { type LatencySummary, percentile, summarize } from "./stats.ts";

/** The preload to pass as `node --import <path>` (with SERVER_TRACE_DIR in the environment). */
export const SERVER_TRACE_PRELOAD = fileURLToPath(new URL("./server-trace.mjs", import.meta.url));

/**
 * The processes a traced step asks for a record: each root and its node descendants (its node:cluster
 * workers, which inherit its node flags and so the preload). Not every descendant: a server under tsx
 * with a cold cache also has esbuild's service as a child, which never writes a record, and the
 * sweep's bare servers failed their first traced step waiting for it.
 */
export function tracedProcesses(roots: readonly number[]): number[] {
  return roots.flatMap((root) => [root, ...nodeDescendantPids(root)]);
}

/**
 * What a server process needs to run with the tracer writing its records to `dir`: its environment
 * and its node flags (both empty without a folder, for a server run untraced).
 */
export function traceSettings(dir: string | undefined): { env: Record<string, string>; nodeArgs: string[] } {
  return dir
    ? { env: { SERVER_TRACE_DIR: dir }, nodeArgs: ["--import", SERVER_TRACE_PRELOAD] }
    : { env: {}, nodeArgs: [] };
}

/** One process's record, as server-trace.mjs writes it (flat rows; null stands for NaN). */
export interface RawServerTrace {
  pid: number;
  /** Rows of 3: arrival epoch ms, x-request-start (null when absent), handling ms. */
  requests: (number | null)[];
  /** Rows of 2: sent epoch ms, ms until the reply was handled. */
  storeCalls: number[];
  /** Rows of 2: window end epoch ms, event loop utilisation in the 50 ms before it. */
  loop: number[];
}

export interface ServerTraceSummary {
  /** Processes that served requests in the window. */
  processes: number;
  requests: number;
  /** x-request-start (the generator's scheduled send) to the server's `request` event. */
  arrivalLagMs: LatencySummary;
  /** The `request` event to the answer's last byte handed to the kernel. */
  handlingMs: LatencySummary;
  /** EVAL/EVALSHA through ioredis (the quote store's put), sent to reply handled. */
  storeCallMs: LatencySummary;
  /** Event loop utilisation per 50 ms window, over every process that served requests. */
  loopBusy: { windows: number; p50: number; p90: number; p99: number; saturatedShare: number };
}

/** A 50 ms window at or above this utilisation counts as saturated. */
export const SATURATED = 0.9;

/** Every record in `dir` (a process's records each cover the time since its previous one). */
export function readServerTraces(dir: string, files = recordFiles(dir)): RawServerTrace[] {
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as RawServerTrace);
}

function recordFiles(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => /^\d+-\d+\.json$/.test(f)) : [];
}

/**
 * Asks each process for its record since the last one (SIGUSR2) and waits until every one has written
 * it. Throws, naming the processes, when one has not within `timeoutMs` (a process started without the
 * preload dies of the signal instead: SIGUSR2's default action).
 */
export async function collectServerTraces(
  pids: readonly number[],
  dir: string,
  timeoutMs = 10_000,
): Promise<RawServerTrace[]> {
  const before = new Set(recordFiles(dir));
  for (const pid of pids) process.kill(pid, "SIGUSR2");
  const fresh = () => recordFiles(dir).filter((f) => !before.has(f));
  const until = Date.now() + timeoutMs;
  for (;;) {
    const written = new Set(fresh().map((f) => Number(f.slice(0, f.indexOf("-")))));
    const missing = pids.filter((p) => !written.has(p));
    if (missing.length === 0) break;
    if (Date.now() > until) {
      throw new Error(
        `--trace-server: no record from process(es) ${missing.join(", ")} within ${timeoutMs} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return readServerTraces(dir, fresh());
}

/** Each process's record of a measured window just ended (`seconds` long from `fromMs`), summarized. */
export async function traceWindow(
  pids: readonly number[],
  dir: string,
  fromMs: number,
  seconds: number,
): Promise<ServerTraceSummary> {
  return summarizeServerTraces(await collectServerTraces(pids, dir), fromMs, fromMs + seconds * 1000);
}

/**
 * The records over the measured window: requests whose scheduled send (x-request-start; the arrival
 * when it is absent) is in [fromMs, toMs), store writes sent and loop windows ended in it.
 */
export function summarizeServerTraces(
  traces: readonly RawServerTrace[],
  fromMs: number,
  toMs: number,
): ServerTraceSummary {
  const lag: number[] = [];
  const handling: number[] = [];
  const store: number[] = [];
  const busy: number[] = [];
  let processes = 0;
  for (const t of traces) {
    const before = handling.length;
    for (let i = 0; i + 2 < t.requests.length; i += 3) {
      const arrived = t.requests[i] as number;
      const scheduled = t.requests[i + 1];
      const at = typeof scheduled === "number" ? scheduled : arrived;
      if (at < fromMs || at >= toMs) continue;
      if (typeof scheduled === "number") lag.push(arrived - scheduled);
      handling.push(t.requests[i + 2] as number);
    }
    if (handling.length === before) continue;
    processes++;
    for (let i = 0; i + 1 < t.storeCalls.length; i += 2) {
      const sent = t.storeCalls[i] as number;
      if (sent >= fromMs && sent < toMs) store.push(t.storeCalls[i + 1] as number);
    }
    for (let i = 0; i + 1 < t.loop.length; i += 2) {
      const end = t.loop[i] as number;
      if (end > fromMs && end <= toMs) busy.push(t.loop[i + 1] as number);
    }
  }
  const sortedBusy = Float64Array.from(busy).sort();
  return {
    processes,
    requests: handling.length,
    arrivalLagMs: summarize(Float64Array.from(lag)),
    handlingMs: summarize(Float64Array.from(handling)),
    storeCallMs: summarize(Float64Array.from(store)),
    loopBusy: {
      windows: busy.length,
      p50: percentile(sortedBusy, 50),
      p90: percentile(sortedBusy, 90),
      p99: percentile(sortedBusy, 99),
      saturatedShare: busy.length ? busy.filter((u) => u >= SATURATED).length / busy.length : Number.NaN,
    },
  };
}

/** The report's lines for the split. */
export function serverTraceText(s: ServerTraceSummary, title = "server side"): string[] {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
  const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : "n/a");
  const tail = (l: LatencySummary) => `p50 ${f(l.p50)}  p99 ${f(l.p99)}  p99.9 ${f(l.p999)}  max ${f(l.max)}`;
  const b = s.loopBusy;
  return [
    `${title} (--trace-server; ${s.processes} process(es), ${s.requests} requests; the CPU figures above include the tracer's cost):`,
    `  scheduled send -> request event ms: ${tail(s.arrivalLagMs)}  (the generator's lag, the network, the server's queue)`,
    `  request event -> answer written ms: ${tail(s.handlingMs)}  (the server's work and its wait for the store)`,
    s.storeCallMs.count
      ? `  store writes (EVAL/EVALSHA) sent -> reply handled ms: ${tail(s.storeCallMs)}  (Redis' round trip and the event loop's wait to read the reply; ${s.storeCallMs.count} writes)`
      : "  store writes: none traced",
    `  event loop busy per 50 ms window: p50 ${pct(b.p50)}  p90 ${pct(b.p90)}  p99 ${pct(b.p99)}; ${pct(b.saturatedShare)} of ${b.windows} windows at ${pct(SATURATED)} or more`,
  ];
}

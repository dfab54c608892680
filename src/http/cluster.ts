/**
 * Every core: WORKERS > 1 runs the webhook as a primary plus N workers (node:cluster) sharing PORT.
 *
 *   primary  composes nothing (no Redis, no chain, no key): it forks the workers, restarts one that
 *            dies (with a backoff, logged, counted in `rfq_worker_restarts_total`), owns ADMIN_PORT and
 *            drains them all on SIGTERM / SIGINT. On ADMIN_PORT it answers /metrics itself (every
 *            worker's registry through prom-client's AggregatorRegistry, plus its own counters) and
 *            passes every other request (/admin/*, /health, /ready) to one worker's operations
 *            listener (loopback, a port of its own per worker). While draining, /ready is 503 at once.
 *   workers  each the whole service as `WORKERS=1` runs it: the operator's routes on the shared PORT
 *            (the primary hands connections round-robin), the operations app on a private port, and
 *            the graceful shutdown of src/http/shutdown.ts (/ready 503, Connection: close, requests in
 *            flight finished, exit 0).
 *
 * State the workers must share already lives in Redis (quotes, claims, reservations, switches,
 * journal); the paper setup (in-process chain, in-memory store) and the embedded fill ledger (PGlite
 * in DATA_DIR) are single-process and refuse WORKERS > 1 (`workerCount`).
 */
import cluster, { type Worker } from "node:cluster";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import os from "node:os";
import { AggregatorRegistry, Counter, Gauge, Registry } from "prom-client";
import { type Config, ConfigError, redisSetting } from "../../config/load.ts";
import { fatalOf } from "../cli/run.ts";
import { StartupError } from "../errors/startup.ts";
import { ledgerLocation } from "../ledger/open.ts";
import type { Logger } from "../observability/logger.ts";
import { DUPLICATE_SIGNAL_MS } from "./shutdown.ts";

/** Set in each worker's environment: its slot (1..N), stable across restarts. */
export const WORKER_SLOT_ENV = "RFQ_WORKER_SLOT";
/** Set in each worker's environment: the primary's operations URL (for the banner). */
export const PRIMARY_OPS_URL_ENV = "RFQ_PRIMARY_OPS_URL";
/**
 * Set in each worker's environment: the names the primary's `.env` set (comma-separated), for the
 * banner: the worker inherits them as its own environment, so its own read of `.env` sets nothing.
 */
export const DOTENV_SET_ENV = "RFQ_DOTENV_SET";

/** Messages between the primary and its workers (over the cluster's IPC channel). */
type ToPrimary =
  | { type: "rfq:listening"; opsPort: number }
  /** A worker could not start: the primary prints the first such text (every worker meets the same). */
  | { type: "rfq:fatal"; code: number; text: string };
type ToWorker = { type: "rfq:shutdown"; signal: string } | { type: "rfq:force"; why: string };

/**
 * How many processes serve. WORKERS when set; otherwise the machine's cores in production mode when
 * everything shared lives outside the process (Redis, DATABASE_URL or LEDGER=off), else 1. More than
 * one where state lives in the process is a configuration error naming why.
 */
export function workerCount(
  config: Config,
  cores = os.availableParallelism(),
): { count: number; singleBecause?: string } {
  const ledger = config.mode === "acceptance" ? undefined : ledgerLocation(config);
  const single =
    config.mode !== "production"
      ? `the ${config.mode} setup keeps its state (${config.mode === "paper" ? "local chain, " : ""}quote store) in one process`
      : redisSetting(config.env) === undefined
        ? "the in-memory quote store (no REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS) lives in one process: a /swap answered by another worker would not find its quote"
        : ledger?.kind === "pglite"
          ? "the embedded fill ledger (PGlite in DATA_DIR) can be opened by one process only: set DATABASE_URL (or LEDGER=off)"
          : undefined;
  const requested = config.env.WORKERS;
  if (requested !== undefined) {
    if (requested > 1 && single) throw new ConfigError(`env: WORKERS: ${requested} is refused: ${single}`);
    return { count: requested };
  }
  return single ? { count: 1, singleBecause: single } : { count: Math.max(1, cores) };
}

/** Delay before restarting a slot whose worker died after living `livedMs` (`deaths` in a row). */
export function restartDelayMs(deaths: number, livedMs: number): number {
  if (livedMs >= 30_000) return 100;
  return Math.min(30_000, 250 * 2 ** Math.max(0, deaths - 1));
}

interface Slot {
  n: number;
  worker?: Worker;
  startedAtMs: number;
  listening: boolean;
  opsPort?: number;
  /** Deaths in a row, each soon after its start (reset by a worker that lived 30 s). */
  deaths: number;
  restartTimer?: NodeJS.Timeout;
}

export interface PrimaryOptions {
  count: number;
  log: Logger;
  adminPort: number;
  adminHost: string;
  /** The workers' own drain (SHUTDOWN_DRAIN_MS) and the forced exit after it (SHUTDOWN_GRACE_MS). */
  graceMs: number;
  /** Resolves with the bound operations URL as soon as ADMIN_PORT listens (before the workers). */
  onOpsListening?: (url: string) => void;
  /** The names the primary's `.env` set (passed to the workers for their banner). */
  dotEnvSet?: readonly string[];
}

/**
 * Runs the primary until every worker has exited after a signal (0: all drained cleanly), or until a
 * worker fails to start (its exit code: a configuration problem or an unreachable dependency stops
 * the whole start, as with one process). ADMIN_PORT that cannot be bound throws a StartupError naming it
 * (one line, exit 69, as with one process).
 */
export async function runPrimary(o: PrimaryOptions): Promise<number> {
  const slots: Slot[] = Array.from({ length: o.count }, (_, i) => ({
    n: i + 1,
    startedAtMs: 0,
    listening: false,
    deaths: 0,
  }));
  const { registry, restarts } = primaryMetrics(o.count, slots);
  const primary = new Primary(o, slots, restarts);
  const ops = opsServer(primary, registry);
  const opsUrl = await listenOps(ops, o);
  o.onOpsListening?.(opsUrl);
  return primary.run(ops, opsUrl);
}

/** The primary's own registry: worker restarts by cause, and workers listening against configured. */
function primaryMetrics(
  count: number,
  slots: readonly Slot[],
): { registry: Registry; restarts: Counter<"cause"> } {
  const registry = new Registry();
  const restarts = new Counter({
    name: "rfq_worker_restarts_total",
    help: "Workers restarted by the primary after dying, by cause (exit code or signal)",
    labelNames: ["cause"] as const,
    registers: [registry],
  });
  new Gauge({
    name: "rfq_workers",
    help: "Workers serving (listening) now, and configured (WORKERS)",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      this.set({ state: "listening" }, slots.filter((s) => s.worker && s.listening).length);
      this.set({ state: "configured" }, count);
    },
  });
  return { registry, restarts };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Passes one request to a worker's operations listener on loopback; 503 when none answers. */
function forward(req: IncomingMessage, res: ServerResponse, port: number): void {
  const up = request(
    { host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  up.on("error", () => {
    if (!res.headersSent) json(res, 503, { status: "not ready", message: "no worker answered" });
    else res.destroy();
  });
  req.pipe(up);
}

/** ADMIN_PORT's server: /metrics answered here, every other request passed round-robin to a worker. */
function opsServer(primary: Primary, registry: Registry): Server {
  const aggregator = new AggregatorRegistry();
  let next = 0;
  return createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      Promise.all([aggregator.clusterMetrics(), registry.metrics()]).then(
        ([workers, own]) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(`${workers}\n${own}`);
        },
        (err: Error) => json(res, 500, { message: `metrics: ${err.message}` }),
      );
      return;
    }
    if (primary.draining && path === "/ready") return json(res, 503, { status: "draining", checks: {} });
    const live = primary.slots.filter((s) => s.worker && s.listening && s.opsPort !== undefined);
    const slot = live[next++ % Math.max(1, live.length)];
    if (!slot?.opsPort) return json(res, 503, { status: "not ready", checks: { workers: false } });
    forward(req, res, slot.opsPort);
  });
}

/** Binds ADMIN_PORT and gives its URL; the same one line as a single process's (src/main.ts) if it cannot. */
async function listenOps(ops: Server, o: PrimaryOptions): Promise<string> {
  // Exit 69 through runMain.
  await new Promise<void>((resolve, reject) => {
    ops.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        new StartupError(
          "ADMIN_PORT",
          `${o.adminHost}:${o.adminPort}`,
          e.code === "EADDRINUSE"
            ? "address in use (EADDRINUSE): another process listens there; stop it or set another ADMIN_PORT"
            : `cannot listen: ${e.code ?? e.message}`,
        ),
      ),
    );
    ops.listen(o.adminPort, o.adminHost, () => resolve());
  });
  const addr = ops.address() as import("node:net").AddressInfo;
  return `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
}

function send(w: Worker | undefined, m: ToWorker): void {
  try {
    if (w?.isConnected()) w.send(m);
  } catch {}
}

/** The primary's life: forks the slots, restarts the dead, drains on a signal, and resolves with the exit code. */
class Primary {
  draining = false;
  private started = false;
  /** The exit code of a worker that could not start: the primary's own. */
  private startFailure: number | undefined;
  /** Whether a worker's reason for not starting has been printed (once, not once per worker). */
  private fatalPrinted = false;
  private first = { signal: "", atMs: 0 };
  private graceTimer: NodeJS.Timeout | undefined;
  private readonly exitCodes: number[] = [];
  private ops!: Server;
  private opsUrl = "";
  private finish: (code: number) => void = () => {};

  constructor(
    private readonly o: PrimaryOptions,
    readonly slots: Slot[],
    private readonly restarts: Counter<"cause">,
  ) {}

  run(ops: Server, opsUrl: string): Promise<number> {
    this.ops = ops;
    this.opsUrl = opsUrl;
    const done = new Promise<number>((resolve) => {
      this.finish = resolve;
    });
    process.on("SIGTERM", () => this.onSignal("SIGTERM"));
    process.on("SIGINT", () => this.onSignal("SIGINT"));
    for (const slot of this.slots) this.fork(slot);
    return done;
  }

  private fork(slot: Slot): void {
    const o = this.o;
    slot.restartTimer = undefined;
    slot.listening = false;
    slot.opsPort = undefined;
    slot.startedAtMs = Date.now();
    const worker = cluster.fork({
      [WORKER_SLOT_ENV]: String(slot.n),
      [PRIMARY_OPS_URL_ENV]: this.opsUrl,
      [DOTENV_SET_ENV]: (o.dotEnvSet ?? []).join(","),
      WORKERS: String(o.count),
    });
    slot.worker = worker;
    worker.on("message", (m: ToPrimary) => this.onMessage(slot, worker, m));
    worker.on("exit", (code, signal) => this.onExit(slot, worker, code, signal));
  }

  private onMessage(slot: Slot, worker: Worker, m: ToPrimary): void {
    const { o, slots } = this;
    if (m?.type === "rfq:fatal") {
      // At start, the one line a single process prints; a restarted worker's, in the log.
      if (this.started) o.log.error({ worker: slot.n, code: m.code }, m.text);
      else if (!this.fatalPrinted) process.stderr.write(`${m.text}\n`);
      this.fatalPrinted = true;
      return;
    }
    if (m?.type !== "rfq:listening") return;
    slot.listening = true;
    slot.opsPort = m.opsPort;
    // A signal that came while this worker was starting reached it before it listened for one.
    if (this.draining && this.startFailure === undefined)
      send(worker, { type: "rfq:shutdown", signal: this.first.signal });
    if (!this.started && slots.every((s) => s.listening)) {
      this.started = true;
      o.log.info(
        { workers: o.count, pids: slots.map((s) => s.worker?.process.pid) },
        "all workers listening",
      );
    }
  }

  private onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    const { o, slots } = this;
    const lived = Date.now() - slot.startedAtMs;
    const wasListening = slot.listening;
    slot.worker = undefined;
    slot.listening = false;
    if (this.draining) {
      this.exitCodes.push(code ?? 1);
      o.log.info({ worker: slot.n, pid: worker.process.pid, code, signal }, "worker exited (draining)");
      if (slots.every((s) => !s.worker)) void this.close(this.startFailure);
      return;
    }
    if (!this.started && !wasListening) {
      this.stopTheStart(slot, code, signal);
      return;
    }
    slot.deaths = lived >= 30_000 ? 1 : slot.deaths + 1;
    const delay = restartDelayMs(slot.deaths, lived);
    this.restarts.inc({ cause: signal ?? `exit ${code}` });
    o.log.error(
      { worker: slot.n, pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delay },
      `worker ${slot.n} died (${signal ?? `exit ${code}`}); restarting in ${delay} ms`,
    );
    slot.restartTimer = setTimeout(() => this.fork(slot), delay);
  }

  /** A worker that could not start (configuration, an unreachable dependency): stop the start. */
  private stopTheStart(slot: Slot, code: number | null, signal: string | null): void {
    const slots = this.slots;
    this.o.log.fatal({ worker: slot.n, code, signal }, "a worker failed to start; stopping the others");
    this.draining = true;
    for (const s of slots) if (s.worker) s.worker.process.kill("SIGKILL");
    const code0 = code && code > 0 ? code : 1;
    this.startFailure = code0;
    const stopAll = () => (slots.every((s) => !s.worker) ? this.close(code0) : setTimeout(stopAll, 50));
    stopAll();
  }

  private async close(code?: number): Promise<void> {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    await new Promise<void>((resolve) => {
      this.ops.close(() => resolve());
      this.ops.closeAllConnections();
    });
    const exitCodes = this.exitCodes;
    const worst = code ?? (exitCodes.every((c) => c === 0) ? 0 : 1);
    if (code === undefined)
      this.o.log.info(
        { exitCodes },
        worst === 0 ? "all workers drained; shut down cleanly" : "workers drained; some did not exit cleanly",
      );
    this.finish(worst);
  }

  private onSignal(signal: string): void {
    const { o, slots } = this;
    const log = o.log;
    if (this.draining) {
      // The first signal delivered twice (npm's forward, the process group's own): not a second one.
      if (signal === this.first.signal && Date.now() - this.first.atMs < DUPLICATE_SIGNAL_MS) return;
      log.error({ signal }, `second ${signal}: forcing the workers out`);
      for (const s of slots) send(s.worker, { type: "rfq:force", why: `second ${signal}` });
      return;
    }
    this.draining = true;
    this.first = { signal, atMs: Date.now() };
    log.info(
      { signal, workers: slots.filter((s) => s.worker).length },
      "shutting down: draining every worker",
    );
    for (const s of slots) {
      if (s.restartTimer) clearTimeout(s.restartTimer);
      s.restartTimer = undefined;
      send(s.worker, { type: "rfq:shutdown", signal });
    }
    if (slots.every((s) => !s.worker)) {
      void this.close();
      return;
    }
    // The workers force themselves out at SHUTDOWN_GRACE_MS; this is the backstop for a hung one.
    this.graceTimer = setTimeout(() => {
      log.error("shutdown forced: workers still running past the grace period; killing them");
      for (const s of slots) s.worker?.process.kill("SIGKILL");
      this.exitCodes.push(1);
    }, o.graceMs + 2_000);
    this.graceTimer.unref();
  }
}

/**
 * A worker's start that failed with a configuration problem or an unreachable dependency: its text goes
 * to the primary, which prints it once for all the workers (each meets the same), and the worker exits
 * with its code; anything else is thrown on.
 */
export async function reportFatalToPrimary(e: unknown): Promise<number> {
  const known = fatalOf(e);
  const send = process.send?.bind(process);
  if (!known || !send) throw e;
  await new Promise<void>((resolve) => {
    send({ type: "rfq:fatal", ...known } satisfies ToPrimary, undefined, {}, () => resolve());
  });
  return known.code;
}

/**
 * The worker's side: tells the primary where its operations app listens, and drains on the
 * primary's word. SIGINT (a terminal's Ctrl-C reaches the whole process group) is left to the primary,
 * which forwards it; SIGTERM sent to the worker itself drains it as it would a single process.
 */
export function workerIpc(shutdown: { begin(signal: string): void; readonly isDraining: boolean }): {
  listening(opsPort: number): void;
} {
  process.on("message", (m: ToWorker) => {
    if (m?.type === "rfq:shutdown" && !shutdown.isDraining) shutdown.begin(m.signal);
    else if (m?.type === "rfq:force") shutdown.begin(m.why);
  });
  process.on("SIGTERM", () => shutdown.begin("SIGTERM"));
  process.on("SIGINT", () => {});
  return { listening: (opsPort) => process.send?.({ type: "rfq:listening", opsPort } satisfies ToPrimary) };
}

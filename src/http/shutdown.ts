/**
 * Graceful shutdown as a load balancer (and an orchestrator's 30 s grace period) understands it.
 *
 * On the first SIGTERM / SIGINT:
 *  1. draining starts at once: `/ready` answers 503 `{"status":"draining"}`, so the balancer takes the
 *     instance out of rotation; every response from now on carries `Connection: close`, so keep-alive
 *     clients (the operator keeps its connections open) reconnect elsewhere after their current answer;
 *  2. for `drainMs` (SHUTDOWN_DRAIN_MS, default 5 s) new connections are still accepted and served,
 *     because the balancer needs a few health checks to notice;
 *  3. then the listener closes, idle sockets are closed, requests in flight (quotes, swaps) finish,
 *     the service's ports stop (a fill sent but not settled stays in the journal for the next start),
 *     and the process exits 0.
 * If that takes longer than `graceMs` from the signal (SHUTDOWN_GRACE_MS, default 25 s), or a second
 * signal arrives, it exits 1 at once with a log line naming what was cut (requests by route, fills
 * still being tracked). The same signal again within `DUPLICATE_SIGNAL_MS` is the first one delivered
 * twice (npm forwards it to node, which the process group's signal also reached; systemd signals the
 * whole group), not a person's second Ctrl-C, and is ignored.
 *
 * The logic lives here, in the process that serves, so it works however node is launched (npm start,
 * the compiled build, a container's PID 1 behind an init).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "../observability/logger.ts";

export interface ShutdownOptions {
  /** The listeners (the operator's and the operations one): drained and closed together. */
  servers: readonly Server[];
  log: Logger;
  /** Time new connections are still served after the signal, ms. */
  drainMs: number;
  /** From the signal to a forced exit, ms. */
  graceMs: number;
  /** Flips the app's readiness to "draining" (GET /ready 503). */
  onDrain: () => void;
  /** Stops the service's ports once no request is in flight. */
  closeService: () => Promise<void>;
  /** Extra facts for the "what was cut" line (e.g. fills still tracked). */
  pendingWork?: () => Record<string, number>;
  now?: () => number;
}

/** A repeat of the first signal this soon after it is a duplicate delivery, not a person's second one. */
export const DUPLICATE_SIGNAL_MS = 250;
export const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

/** A response in `InFlightResponses`: unlinked (all three cleared) once it closes. */
interface InFlightEntry {
  res: ServerResponse | undefined;
  prev: InFlightEntry | undefined;
  next: InFlightEntry | undefined;
}

/**
 * The responses being served, as a doubly linked list of small entries instead of a `Set`.
 *
 * A linked list, not a `Set`: an unlinked entry points at nothing, so an answered response is never
 * kept alive by a table that outlived it.
 */
export class InFlightResponses {
  private head: InFlightEntry | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Links `res` in; the entry is what `remove` takes. */
  add(res: ServerResponse): InFlightEntry {
    const entry: InFlightEntry = { res, prev: undefined, next: this.head };
    if (this.head) this.head.prev = entry;
    this.head = entry;
    this.count++;
    return entry;
  }

  /** Unlinks an entry; a second call for the same entry does nothing. */
  remove(entry: InFlightEntry): void {
    if (entry.res === undefined) return;
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    entry.res = undefined;
    entry.prev = undefined;
    entry.next = undefined;
    this.count--;
  }

  *[Symbol.iterator](): IterableIterator<ServerResponse> {
    for (let e = this.head; e; e = e.next) if (e.res) yield e.res;
  }
}

export class GracefulShutdown {
  /** Requests being served (their route is read only if the shutdown has to name what it cut). */
  private readonly active = new InFlightResponses();
  private draining = false;
  private signalAtMs = 0;
  private firstSignal = "";
  private finish: ((code: number) => void) | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  /** Resolves with the exit code once the shutdown is over (0 clean, 1 forced). */
  readonly done: Promise<number>;
  private readonly now: () => number;

  constructor(private readonly opts: ShutdownOptions) {
    this.now = opts.now ?? Date.now;
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
    // Before the app's own listener, so the header is in place whatever the handler does.
    for (const server of opts.servers) {
      server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
        const entry = this.active.add(res);
        if (this.draining) res.setHeader("Connection", "close");
        res.once("close", () => this.active.remove(entry));
      });
    }
  }

  /** Requests being served now. */
  get inFlight(): number {
    return this.active.size;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** Handles SIGTERM and SIGINT on this process. */
  installSignalHandlers(): void {
    process.on("SIGTERM", () => this.begin("SIGTERM"));
    process.on("SIGINT", () => this.begin("SIGINT"));
  }

  /** The first call starts the drain; a second one cuts it short. */
  begin(signal: string): void {
    const { log } = this.opts;
    if (this.draining) {
      if (signal === this.firstSignal && this.now() - this.signalAtMs < DUPLICATE_SIGNAL_MS) {
        log.debug({ signal }, "shutdown: the same signal delivered twice (npm, process group), ignored");
        return;
      }
      this.force(`second ${signal}`);
      return;
    }
    this.draining = true;
    this.firstSignal = signal;
    this.signalAtMs = this.now();
    this.opts.onDrain();
    for (const res of this.active) if (!res.headersSent) res.setHeader("Connection", "close");
    log.info(
      {
        signal,
        phase: "draining: /ready 503, Connection: close, new connections still served",
        drainMs: this.opts.drainMs,
        graceMs: this.opts.graceMs,
        inFlight: this.active.size,
      },
      "shutting down",
    );
    this.graceTimer = setTimeout(() => this.force("grace period over"), this.opts.graceMs);
    this.graceTimer.unref();
    setTimeout(() => void this.stop(), this.opts.drainMs);
  }

  private async stop(): Promise<void> {
    const { servers, log } = this.opts;
    log.info({ inFlight: this.active.size }, "drain over: listeners closed, finishing requests in flight");
    const closed = servers.map((server) => {
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return done;
    });
    await Promise.all(closed);
    try {
      await this.opts.closeService();
    } catch (err) {
      log.error({ err }, "shutdown: closing the service failed");
    }
    log.info({ tookMs: this.now() - this.signalAtMs, ...this.opts.pendingWork?.() }, "shut down cleanly");
    this.exit(0);
  }

  private force(why: string): void {
    const cut: Record<string, number> = {};
    for (const res of this.active) {
      const route = `${res.req?.method} ${(res.req?.url ?? "").split("?")[0]}`;
      cut[route] = (cut[route] ?? 0) + 1;
    }
    this.opts.log.error(
      {
        reason: why,
        afterMs: this.now() - this.signalAtMs,
        requestsCut: this.active.size,
        byRoute: cut,
        ...this.opts.pendingWork?.(),
      },
      `shutdown forced (${why}): cut ${this.active.size} request(s) in flight${
        this.active.size
          ? ` (${Object.entries(cut)
              .map(([r, n]) => `${n} ${r}`)
              .join(", ")})`
          : ""
      }`,
    );
    this.exit(1);
  }

  private exit(code: number): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    const finish = this.finish;
    this.finish = undefined;
    finish?.(code);
  }
}

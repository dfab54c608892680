/**
 * The one place a Redis connection for the service is made (`createRedisClient`; subscribers are
 * split off it in pricing/subscriber.ts). Settings fail fast, because every caller has a
 * deadline of its own (the operator's 250 ms on the quote path, the swap budget, a poll interval):
 *
 * - no offline queue: while the connection is down a command fails at once instead of waiting in a
 *   queue to be sent late (a quote answered after the operator stopped listening is worth nothing);
 * - a short command timeout (1 s by default) for a server that
 *   accepts the connection but does not answer;
 * - one retry per command at most, and a reconnect every 50-200 ms for as long as it takes, so quoting
 *   resumes within a fraction of a second of Redis coming back;
 * - an error listener on every client: an outage is a warning line naming the client and the address
 *   (once per outage, not per reconnect attempt) and `rfq_redis_up{client}` 0, never ioredis'
 *   "Unhandled error event" on stderr.
 *
 * `waitReady` is for start-up: it resolves once the first connection is up, or throws a
 * `StartupError` naming `REDIS_URL`, the address and the cause.
 */
import { Redis, type RedisOptions } from "ioredis";
import { StartupError } from "../errors/startup.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";

export interface RedisClientOptions {
  /** Name in logs and metrics ("main", "controls-subscriber", ...). */
  client?: string;
  log?: Logger;
  metrics?: Metrics;
  /** Per command, ms (default 1,000). */
  commandTimeoutMs?: number;
  /** Per connection attempt, ms (default 2,000). */
  connectTimeoutMs?: number;
}

export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;

/** Reconnect delay after the n-th failed attempt: 50, 100, ... capped at 500 ms; never gives up. */
export const reconnectDelayMs = (attempt: number): number => Math.min(50 * attempt, 200);

/** `redis://host:port/db` without user or password, for logs and start-up errors. */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "<invalid url>";
  }
}

/** The fail-fast settings, for callers that must build a client themselves (tests, tools). */
export function failFastOptions(
  opts: Pick<RedisClientOptions, "commandTimeoutMs" | "connectTimeoutMs"> = {},
) {
  return {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: opts.connectTimeoutMs ?? 2_000,
    retryStrategy: reconnectDelayMs,
  } satisfies RedisOptions;
}

/** A client for the service's commands (quote store, inventory ledger, controls, prices, journal). */
export function createRedisClient(url: string, opts: RedisClientOptions = {}): Redis {
  const redis = new Redis(url, failFastOptions(opts));
  watchRedis(redis, { ...opts, address: redisAddress(url) });
  return redis;
}

/**
 * The error listener every client gets: one warning when a connection is lost (with the cause), one
 * info line when it is back, the `rfq_redis_up{client}` gauge and `rfq_redis_errors_total{client}`.
 * Only the error's code and message are logged, never the command it belonged to (arguments, Lua).
 */
export function watchRedis(redis: Redis, opts: RedisClientOptions & { address: string }): void {
  const client = opts.client ?? "main";
  let down = false;
  let lastError = "";
  // Until the first connection the start-up check (`waitReady`) owns the report: one line, not two.
  let everReady = redis.status === "ready";
  redis.on("error", (err: NodeJS.ErrnoException) => {
    opts.metrics?.redisErrors.inc({ client });
    const cause = err.code ?? err.message;
    if (!everReady || (down && cause === lastError)) return;
    down = true;
    lastError = cause;
    opts.metrics?.redisUp.set({ client }, 0);
    opts.log?.warn(
      { redis: client, address: opts.address, error: `${err.code ? `${err.code}: ` : ""}${err.message}` },
      "redis unavailable",
    );
  });
  redis.on("ready", () => {
    everReady = true;
    opts.metrics?.redisUp.set({ client }, 1);
    if (down) opts.log?.info({ redis: client, address: opts.address }, "redis available again");
    down = false;
    lastError = "";
  });
  redis.on("close", () => {
    opts.metrics?.redisUp.set({ client }, 0);
  });
}

/**
 * Resolves once `redis` is connected; otherwise throws a StartupError naming the setting, the address
 * and the last cause after `timeoutMs`. The client keeps reconnecting in the background either way.
 */
export function waitReady(redis: Redis, setting: string, address: string, timeoutMs = 5_000): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    let cause = "no answer";
    const onError = (err: NodeJS.ErrnoException) => {
      cause = err.code ? `${err.code} (${err.message})` : err.message;
    };
    const done = () => {
      clearTimeout(timer);
      redis.off("error", onError);
      redis.off("ready", onReady);
    };
    const onReady = () => {
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      reject(new StartupError(setting, address, `not reachable within ${timeoutMs} ms: ${cause}`));
    }, timeoutMs);
    redis.on("error", onError);
    redis.on("ready", onReady);
  });
}

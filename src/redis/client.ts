/**
 * The one place a Redis client for the service is made (`createRedisClient`; subscribers are split
 * off it in pricing/subscriber.ts), for whichever topology the environment names (`redisTarget`):
 *
 * - a single node: `REDIS_URL` (`redis://` or `rediss://` for TLS, or `unix:///path/redis.sock` for a
 *   Redis on the same host);
 * - Redis Cluster: `REDIS_CLUSTER_NODES`, seed nodes; an ioredis `Cluster` follows MOVED/ASK and
 *   routes every command to the master of its key's slot;
 * - Sentinel: `REDIS_SENTINELS` + `REDIS_SENTINEL_MASTER`; the client asks the sentinels for the
 *   master and, once they promote a replica, reconnects to it (its reconnect loop asks them again).
 *
 * TLS options (`REDIS_TLS`, `REDIS_TLS_CA_FILE`, ...) apply to every topology. Nothing else in the
 * code knows which topology it talks to: the stores' multi-key operations keep their keys in one slot
 * (hash tags), which a single node ignores and a cluster requires.
 *
 * Settings fail fast, because every caller has a deadline of its own (the operator's 250 ms on the
 * quote path, the swap budget, a poll interval):
 *
 * - no offline queue: while the connection is down a command fails at once instead of waiting in a
 *   queue to be sent late (a quote answered after the operator stopped listening is worth nothing);
 * - a short command timeout (1 s by default) for a server that
 *   accepts the connection but does not answer;
 * - one retry per command at most, and a reconnect every 50-200 ms for as long as it takes, so quoting
 *   resumes within a fraction of a second of Redis coming back; a Redis still loading its data is
 *   asked again every 100 ms (`maxLoadingRetryTime`), not after its own estimate of the load;
 * - an error listener on every client: an outage is a warning line naming the client and the address
 *   (once per outage, not per reconnect attempt) and `rfq_redis_up{client}` 0, never ioredis'
 *   "Unhandled error event" on stderr.
 *
 * `waitReady` is for start-up: it resolves once the first connection is up, or throws a
 * `StartupError` naming the setting (`REDIS_URL`, ...), the address and the cause.
 */
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { EnvConfig } from "../../config/schema.ts";
import { StartupError } from "../errors/startup.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";

/** A client for any topology: the stores take this and never ask which one it is. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** Name in logs and metrics ("main", "controls-subscriber", ...). */
  client?: string;
  log?: Logger;
  metrics?: Metrics;
  /** Per command, ms (default 1,000). */
  commandTimeoutMs?: number;
  /** Per connection attempt, ms (default 2,000). */
  connectTimeoutMs?: number;
  /**
   * "service" (default): fail-fast commands, reconnect for ever. "probe" (doctor): connect on the first
   * command, queue it until then, never reconnect: one answer or one failure.
   */
  use?: "service" | "probe";
}

export interface HostPort {
  host: string;
  port: number;
}

/** Where Redis is and how to reach it, from the environment (`redisTarget`). */
export type RedisTarget = (
  | { kind: "single"; url: string }
  | { kind: "cluster"; nodes: HostPort[] }
  | { kind: "sentinel"; sentinels: HostPort[]; master: string }
) & {
  /** The environment variable that names it, for start-up errors. */
  setting: string;
  /** Host(s) and port(s) without credentials, for logs. */
  address: string;
  username?: string;
  password?: string;
  sentinelPassword?: string;
  /** TLS options, when the connection is TLS. */
  tls?: ConnectionOptions;
};

const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 1_000;

/** Reconnect delay after the n-th failed attempt: 50, 100, ... capped at 200 ms; never gives up. */
const reconnectDelayMs = (attempt: number): number => Math.min(50 * attempt, 200);

/** `redis://host:port/db` without user or password, for logs and start-up errors. */
function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "<invalid url>";
  }
}

/**
 * The socket path and database of a `unix:///path/to/redis.sock[?db=N]` URL (config/schema.ts has
 * checked its shape), or undefined for a TCP URL. ioredis 5 reads no `unix:` scheme of its own.
 */
export function unixSocketOptions(url: string): { path: string; db?: number } | undefined {
  if (!url.startsWith("unix:")) return undefined;
  const u = new URL(url);
  const db = u.searchParams.get("db");
  return { path: decodeURIComponent(u.pathname), ...(db !== null ? { db: Number(db) } : {}) };
}

/** A plain ioredis client for one node's URL, `unix:` included (tools that need no fail-fast client). */
export function redisFromUrl(url: string, options: RedisOptions = {}): Redis {
  const socket = unixSocketOptions(url);
  return socket ? new Redis({ ...options, ...socket }) : new Redis(url, options);
}

/** `host:port` or a `redis://` / `rediss://` URL; `rediss://` asks for TLS. */
function parseNode(entry: string, setting: string): HostPort & { tls: boolean } {
  const text = entry.trim();
  const withScheme = /^rediss?:\/\//.test(text) ? text : `redis://${text}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new StartupError(setting, text, "not host:port");
  }
  const port = Number(u.port || 6379);
  if (!u.hostname || !Number.isInteger(port) || port <= 0 || port > 65_535) {
    throw new StartupError(setting, text, "not host:port");
  }
  return { host: u.hostname.replace(/^\[|\]$/g, ""), port, tls: u.protocol === "rediss:" };
}

function readPem(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new StartupError(setting, path, `cannot read: ${(e as Error).message}`);
  }
}

/** The TLS options from REDIS_TLS_* (read once, at start). */
function tlsOptions(env: EnvConfig): ConnectionOptions {
  const tls: ConnectionOptions = { rejectUnauthorized: env.REDIS_TLS_REJECT_UNAUTHORIZED };
  if (env.REDIS_TLS_CA_FILE) tls.ca = readPem("REDIS_TLS_CA_FILE", env.REDIS_TLS_CA_FILE);
  if (env.REDIS_TLS_CERT_FILE) tls.cert = readPem("REDIS_TLS_CERT_FILE", env.REDIS_TLS_CERT_FILE);
  if (env.REDIS_TLS_KEY_FILE) tls.key = readPem("REDIS_TLS_KEY_FILE", env.REDIS_TLS_KEY_FILE);
  if (env.REDIS_TLS_SERVERNAME) tls.servername = env.REDIS_TLS_SERVERNAME;
  return tls;
}

/**
 * The Redis the environment names, or undefined when none is set (the paper setup's in-memory
 * stores). config/load.ts has already refused more than one topology. Throws a StartupError for a
 * node list it cannot read or a TLS file it cannot open.
 */
export function redisTarget(env: EnvConfig): RedisTarget | undefined {
  const auth = {
    ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}),
    ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}),
  };
  if (env.REDIS_URL?.startsWith("unix:")) {
    if (env.REDIS_TLS) {
      throw new StartupError("REDIS_TLS", "1", "TLS does not apply to a unix socket (REDIS_URL=unix://...)");
    }
    // No credentials in a unix URL: a single node on a socket takes them from REDIS_USERNAME/PASSWORD.
    return {
      kind: "single",
      url: env.REDIS_URL,
      setting: "REDIS_URL",
      address: redisAddress(env.REDIS_URL),
      ...auth,
    };
  }
  if (env.REDIS_URL) {
    const tls = env.REDIS_URL.startsWith("rediss:") || env.REDIS_TLS;
    return {
      kind: "single",
      url: env.REDIS_URL,
      setting: "REDIS_URL",
      address: redisAddress(env.REDIS_URL),
      ...(tls ? { tls: tlsOptions(env) } : {}),
    };
  }
  if (env.REDIS_CLUSTER_NODES) {
    const parsed = list(env.REDIS_CLUSTER_NODES).map((e) => parseNode(e, "REDIS_CLUSTER_NODES"));
    const tls = env.REDIS_TLS || parsed.some((n) => n.tls);
    const nodes = parsed.map(({ host, port }) => ({ host, port }));
    return {
      kind: "cluster",
      nodes,
      setting: "REDIS_CLUSTER_NODES",
      address: `cluster ${tls ? "rediss" : "redis"}://${nodes.map(hostPort).join(",")}`,
      ...auth,
      ...(tls ? { tls: tlsOptions(env) } : {}),
    };
  }
  if (env.REDIS_SENTINELS && env.REDIS_SENTINEL_MASTER) {
    const sentinels = list(env.REDIS_SENTINELS).map((e) => {
      const { host, port } = parseNode(e, "REDIS_SENTINELS");
      return { host, port };
    });
    return {
      kind: "sentinel",
      sentinels,
      master: env.REDIS_SENTINEL_MASTER,
      setting: "REDIS_SENTINELS",
      address: `sentinel ${env.REDIS_SENTINEL_MASTER}@${sentinels.map(hostPort).join(",")}`,
      ...auth,
      ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
      ...(env.REDIS_TLS ? { tls: tlsOptions(env) } : {}),
    };
  }
  return undefined;
}

const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
const hostPort = (n: HostPort) => (n.host.includes(":") ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`);

/** How often a client asks a loading Redis whether it is done (ms). */
const LOADING_RETRY_MS = 100;

/** The fail-fast settings, for callers that must build a client themselves (tests, tools). */
function failFastOptions(opts: Pick<RedisClientOptions, "commandTimeoutMs" | "connectTimeoutMs"> = {}) {
  return {
    // Off: a quote's one command rarely shares a tick, and a Pipeline per batch costs more than it saves.
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: opts.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: opts.connectTimeoutMs ?? 2_000,
    retryStrategy: reconnectDelayMs,
    // A Redis loading its AOF or RDB answers LOADING with an estimate (often 10 s for a 1 s load);
    // ioredis then waits the whole estimate before asking again unless this caps it: ask every 100 ms,
    // so the client is ready (and quoting resumes) within 0.1 s of the load ending.
    maxLoadingRetryTime: LOADING_RETRY_MS,
  } satisfies RedisOptions;
}

/** One try, connecting on the first command (the doctor's probe). */
const PROBE_OPTIONS = {
  lazyConnect: true,
  maxRetriesPerRequest: 1,
  connectTimeout: 2_000,
  retryStrategy: () => null,
} satisfies RedisOptions;

/**
 * A client for the service's commands (quote store, inventory ledger, controls, prices, journal), on
 * whichever topology `target` names (a string is a single node's URL).
 */
export function createRedisClient(target: RedisTarget | string, opts: RedisClientOptions = {}): RedisClient {
  const t: RedisTarget =
    typeof target === "string"
      ? { kind: "single", url: target, setting: "REDIS_URL", address: redisAddress(target) }
      : target;
  const probe = opts.use === "probe";
  const base: RedisOptions = probe ? { ...PROBE_OPTIONS } : failFastOptions(opts);
  const auth: RedisOptions = {
    ...(t.username ? { username: t.username } : {}),
    ...(t.password ? { password: t.password } : {}),
    ...(t.tls ? { tls: t.tls } : {}),
  };
  let redis: RedisClient;
  switch (t.kind) {
    case "single":
      redis = redisFromUrl(t.url, { ...base, ...auth });
      break;
    case "cluster": {
      const { enableAutoPipelining, enableOfflineQueue, retryStrategy, lazyConnect, ...perNode } = base;
      const clusterOpts: ClusterOptions = {
        ...(enableAutoPipelining !== undefined ? { enableAutoPipelining } : {}),
        ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
        ...(lazyConnect !== undefined ? { lazyConnect } : {}),
        clusterRetryStrategy: probe ? () => null : reconnectDelayMs,
        // A failover or resharding: retry the command shortly rather than fail it.
        retryDelayOnFailover: 50,
        retryDelayOnClusterDown: 50,
        retryDelayOnTryAgain: 50,
        slotsRefreshTimeout: opts.connectTimeoutMs ?? 2_000,
        redisOptions: { ...perNode, ...auth },
      };
      redis = new Cluster(t.nodes, clusterOpts);
      break;
    }
    case "sentinel":
      redis = new Redis({
        ...base,
        ...auth,
        sentinels: t.sentinels,
        name: t.master,
        ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
        ...(t.tls ? { enableTLSForSentinelMode: true, sentinelTLS: t.tls } : {}),
        sentinelRetryStrategy: probe ? () => null : reconnectDelayMs,
        // No failoverDetector: in ioredis 5.11 a +switch-master that arrives while the client is
        // reconnecting leaves it ended for good (status "end"; test/faults/sentinel.fault.ts saw it).
        // The reconnect loop (every 50-200 ms, asking the sentinels each time) finds the promoted
        // replica as soon as the sentinels name it.
        failoverDetector: false,
      });
      break;
  }
  if (probe) {
    // An unreachable Redis is a FAIL row in doctor's table, not a stack trace on stderr.
    redis.on("error", () => {});
  } else {
    watchRedis(redis, { ...opts, address: t.address });
  }
  return redis;
}

/**
 * The error listener every client gets: one warning when a connection is lost (with the cause), one
 * info line when it is back, the `rfq_redis_up{client}` gauge and `rfq_redis_errors_total{client}`.
 * Only the error's code and message are logged, never the command it belonged to (arguments, Lua).
 */
function watchRedis(redis: RedisClient, opts: RedisClientOptions & { address: string }): void {
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
export async function waitReady(
  redis: RedisClient,
  setting: string,
  address: string,
  timeoutMs = 5_000,
): Promise<void> {
  await connected(redis, setting, address, timeoutMs);
  // ioredis is ready even when the URL's SELECT failed, and then writes to database 0.
  const db = redis instanceof Redis ? redis.options.db : undefined;
  if (db) {
    try {
      await redis.select(db);
    } catch (e) {
      throw new StartupError(
        setting,
        address,
        `database ${db} (the URL's /${db}) cannot be selected: ${(e as Error).message}; use one below the server's \`databases\` setting (16 by default)`,
      );
    }
  }
}

function connected(redis: RedisClient, setting: string, address: string, timeoutMs: number): Promise<void> {
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

/**
 * A subscriber connection split off a Redis client, for the shared switches and the Redis price
 * source. It keeps an offline queue (SUBSCRIBE is sent when the connection comes up, and ioredis
 * re-subscribes after a reconnect; nothing here has a deadline to miss) and no command timeout, and it
 * has an error listener: an outage is one warning naming the connection (and one line when it is back),
 * never ioredis' "Unhandled error event".
 *
 * On Redis Cluster the subscriber is a Cluster client too: it subscribes on one node, and classic
 * (not sharded) PUBLISH reaches every node's subscribers, so the channels work unchanged. The channels
 * carry a few messages a second at most (switch changes, price updates), so broadcasting them over the
 * cluster bus costs nothing worth sharding for.
 */
import type { Cluster, ClusterOptions, Redis, RedisOptions } from "ioredis";
import type { Logger } from "pino";

export function subscriberOf(redis: Redis | Cluster, name: string, log?: Logger): Redis | Cluster {
  // ioredis takes a command timeout of 0 as "time out at once": leave it unset.
  const patient = { enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined };
  const sub = redis.isCluster
    ? (redis as Cluster).duplicate([], {
        enableOfflineQueue: true,
        redisOptions: { ...(redis as Cluster).options.redisOptions, ...patient },
      } as ClusterOptions)
    : (redis as Redis).duplicate(patient as RedisOptions);
  let down = false;
  sub.on("error", (err: NodeJS.ErrnoException) => {
    if (down) return;
    down = true;
    log?.warn(
      { redis: name, error: `${err.code ? `${err.code}: ` : ""}${err.message}` },
      "redis unavailable",
    );
  });
  sub.on("ready", () => {
    if (down) log?.info({ redis: name }, "redis available again");
    down = false;
  });
  return sub;
}

/**
 * Wraps a read (one that handles its own failures) so that calls overlapping a read in progress
 * coalesce into at most one more read: a burst of change messages costs two reads, not one each.
 * `idle()` resolves once no read runs (for close()).
 */
export function coalescing(readOnce: () => Promise<void>): { run(): Promise<void>; idle(): Promise<void> } {
  let reading: Promise<void> | undefined;
  let again = false;
  return {
    run() {
      if (reading) {
        again = true;
        return reading;
      }
      reading = (async () => {
        do {
          again = false;
          await readOnce();
        } while (again);
      })().finally(() => {
        reading = undefined;
      });
      return reading;
    },
    idle: () => reading ?? Promise.resolve(),
  };
}

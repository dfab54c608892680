/**
 * A subscriber connection split off a Redis client, for the shared switches and the Redis price
 * source. It keeps an offline queue (SUBSCRIBE is sent when the connection comes up, and ioredis
 * re-subscribes after a reconnect; nothing here has a deadline to miss) and no command timeout, and it
 * has an error listener: an outage is one warning naming the connection (and one line when it is back),
 * never ioredis' "Unhandled error event".
 */
import type { Redis, RedisOptions } from "ioredis";
import type { Logger } from "pino";

export function subscriberOf(redis: Redis, name: string, log?: Logger): Redis {
  // ioredis takes a command timeout of 0 as "time out at once": leave it unset.
  const sub = redis.duplicate({
    enableOfflineQueue: true,
    maxRetriesPerRequest: null,
    commandTimeout: undefined,
  } as RedisOptions);
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

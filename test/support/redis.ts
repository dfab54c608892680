/** A real Redis connection for integration tests (REDIS_URL is set by scripts/with-redis.ts). */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll } from "vitest";

export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error("REDIS_URL is not set: run the tests through `npm test`");
  return url;
}

/** A connection plus a key prefix unique to this test file run. */
export function testRedis(): { redis: Redis; prefix: string } {
  return { redis: new Redis(redisUrl(), { lazyConnect: false }), prefix: `test:${randomUUID()}:` };
}

/**
 * `testRedis()` owned by one test file: after all its tests, every key under the prefix is deleted
 * and the connection dropped. Call at the top level of the file.
 */
export function fileRedis(): { redis: Redis; prefix: string } {
  const r = testRedis();
  afterAll(async () => {
    await deleteKeys(r.redis, `${r.prefix}*`);
    r.redis.disconnect();
  });
  return r;
}

/** Deletes every key matching `pattern` (tests only: KEYS walks the whole keyspace). */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  const keys = await redis.keys(pattern);
  if (keys.length) await redis.del(...keys);
}

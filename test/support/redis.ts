/** A real Redis connection for integration tests (REDIS_URL is set by scripts/with-redis.mjs). */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error("REDIS_URL is not set: run the tests through `npm test`");
  return url;
}

/** A connection plus a key prefix unique to this test file run. */
export function testRedis(): { redis: Redis; prefix: string } {
  return { redis: new Redis(redisUrl(), { lazyConnect: false }), prefix: `test:${randomUUID()}:` };
}

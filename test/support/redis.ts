/**
 * Real Redis connections for integration tests: REDIS_URL (a single node) and, when set,
 * REDIS_TEST_CLUSTER_NODES (a three-master Redis Cluster); scripts/with-redis.ts starts both.
 */
import { randomUUID } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { afterAll } from "vitest";
import type { RedisClient } from "../../src/redis/client.ts";

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

/** The test cluster's seed nodes ("127.0.0.1:p1,..."), when scripts/with-redis.ts started one. */
export function clusterNodes(): { host: string; port: number }[] | undefined {
  const raw = process.env.REDIS_TEST_CLUSTER_NODES;
  if (!raw) return undefined;
  return raw.split(",").map((n) => {
    const [host, port] = n.trim().split(":");
    return { host: host ?? "127.0.0.1", port: Number(port) };
  });
}

/** A Redis topology the shared-state suites run on. */
export interface Topology {
  name: "single node" | "cluster";
  /** A new connection (the caller disconnects it). */
  connect(): RedisClient;
}

/**
 * Every topology available to this run: the single node always; the three-master cluster when
 * REDIS_TEST_CLUSTER_NODES is set (`npm test` sets it). On the cluster a multi-key command whose keys
 * are in different slots fails (CROSSSLOT from Redis, or ioredis refusing a pipeline that spans
 * nodes), so a suite that passes there keeps every group of keys in one slot.
 */
export function topologies(): Topology[] {
  const out: Topology[] = [{ name: "single node", connect: () => new Redis(redisUrl()) }];
  const nodes = clusterNodes();
  if (nodes) out.push({ name: "cluster", connect: () => new Cluster(nodes) });
  return out;
}

/** `topology.connect()` with a unique prefix, cleaned and disconnected after the file. */
export function fileRedisOn(topology: Topology): { redis: RedisClient; prefix: string } {
  const r = { redis: topology.connect(), prefix: `test:${randomUUID()}:` };
  afterAll(async () => {
    await deleteKeys(r.redis, `${r.prefix}*`);
    r.redis.disconnect();
  });
  return r;
}

/** The masters of a cluster (each as its own connection), or the single node itself. */
export function mastersOf(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes("master") : [redis];
}

/** Deletes every key matching `pattern` (tests only: KEYS walks the whole keyspace, on every master). */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  for (const node of mastersOf(redis)) {
    const keys = await node.keys(pattern);
    // One DEL per key: on a cluster the keys sit in different slots.
    await Promise.all(keys.map((k) => node.del(k)));
  }
}

/**
 * The webhook on a Redis it reaches over a unix socket (REDIS_URL=unix:///.../redis.sock), composed as
 * `npm run sandbox` composes it with the stack's `redisSocket` (what `npm run loadtest --
 * --redis-socket` runs): the operator simulator's order is quoted, a swap lands end to end, and every
 * connection Redis has is on the socket (the webhook's are not on a TCP port in disguise).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { type RedisClient, redisFromUrl } from "../../src/redis/client.ts";
import { landSmallSwap } from "../support/land.ts";
import { fileTempDir } from "../support/tmp.ts";

describe("the webhook on a Redis over a unix socket", () => {
  const dir = fileTempDir("socket-stack");
  let stack: Stack;
  let redis: RedisClient;
  let client: TakerClient;

  beforeAll(async () => {
    stack = await startStack({
      dir,
      takers: [{ name: "s", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n } }],
      webhookLogLevel: "warn",
      redisSocket: true,
    });
    redis = redisFromUrl(stack.redis);
    client = new TakerClient(stack.operatorUrl, stack.chainUrl);
  }, 180_000);
  afterAll(async () => {
    redis?.disconnect();
    await stack?.close();
  });

  it("quotes and lands a swap end to end, its quote and claim stored through the socket", async () => {
    expect(stack.redis).toMatch(/^unix:\/\/\/.+\/redis\.sock$/);
    const q = await landSmallSwap(client, stack);
    expect(await redis.exists(`rfq:quote:{${q}}:q`, `rfq:quote:{${q}}:claim`)).toBe(2);
  });

  it("has every Redis connection on the socket, the webhook's included", async () => {
    const path = stack.redis.slice("unix://".length);
    const clients = String(await redis.call("CLIENT", "LIST"))
      .trim()
      .split("\n");
    // This test's own connection, and the webhook's (its main client and the controls subscriber).
    expect(clients.length).toBeGreaterThanOrEqual(3);
    for (const c of clients) expect(c).toContain(`laddr=${path}`);
  });
});

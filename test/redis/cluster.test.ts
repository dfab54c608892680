/**
 * The webhook on a real three-master Redis Cluster (REDIS_TEST_CLUSTER_NODES, started by
 * scripts/with-redis.ts), composed as `npm run sandbox` composes it but with REDIS_CLUSTER_NODES
 * instead of REDIS_URL: the operator simulator's orders are quoted, a swap lands end to end, the kill
 * switch (admin API: MULTI SET + PUBLISH, read back through pub/sub and the poll) stops and restarts
 * quoting, inventory reservations are made and visible, and the keys are spread over all three masters.
 */
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { MINT } from "../support/config.ts";
import { clusterNodes } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const nodes = clusterNodes();
const ADMIN_KEY = "cluster-test-admin-key-0123456789";

describe.skipIf(!nodes)("the webhook on a three-master Redis Cluster", () => {
  const dir = fileTempDir("cluster-stack");
  let stack: Stack;
  let cluster: Cluster;
  let client: TakerClient;

  beforeAll(async () => {
    stack = await startStack({
      dir,
      takers: [{ name: "c", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n, JUP: 5_000_000_000n } }],
      webhookLogLevel: "warn",
      webhookAdminApiKey: ADMIN_KEY,
      redisClusterNodes: process.env.REDIS_TEST_CLUSTER_NODES as string,
    });
    cluster = new Cluster(nodes ?? []);
    client = new TakerClient(stack.operatorUrl, stack.chainUrl);
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    // The stack's keys (prefix rfq:) on the shared test cluster.
    if (cluster) {
      for (const m of cluster.nodes("master")) {
        const keys = await m.keys("rfq:*");
        await Promise.all(keys.map((k) => m.del(k)));
      }
      cluster.disconnect();
    }
  });

  const admin = (path: string, body?: unknown) =>
    fetch(`${stack.webhookAdminUrl}${path}`, {
      method: "POST",
      headers: { "X-ADMIN-API-KEY": ADMIN_KEY, "content-type": "application/json" },
      body: JSON.stringify(body ?? {}),
    });
  const sell = { inputMint: MINT.USDC, outputMint: MINT.SOL, amount: 10_000_000n };

  it("quotes, claims, reserves inventory and lands a swap end to end", async () => {
    const taker = stack.takers[0]!.keypair;
    const order = await client.order(sell, taker.publicKey);
    expect(order.ok && order.body.maker).toBe(stack.maker);
    if (!order.ok) return;
    const result = await client.execute(order.body, taker);
    expect(result.ok && result.body.status).toBe("Success");
    // The exactly-once claim and the swap's outcome are in the cluster, under the quoteId's tag.
    const q = order.body.quoteId;
    expect(await cluster.exists(`rfq:quote:{${q}}:claim`, `rfq:quote:{${q}}:outcome`)).toBe(2);
    // The swap reserved through the ledger's Lua scripts (under the maker's tag), whose balances are there.
    const balances = await cluster.hgetall(`rfq:inv:{${stack.maker}}:bal`);
    expect(Object.keys(balances)).toContain(MINT.USDC);
  });

  it("stops quoting on the kill switch and quotes again on resume", async () => {
    const taker = stack.takers[0]!.keypair;
    expect((await admin("/admin/pause", { reason: "cluster test" })).status).toBe(200);
    expect(await cluster.get("rfq:ctl:paused")).toContain("cluster test");
    const paused = await client.order(sell, taker.publicKey);
    expect(paused.ok && paused.body.maker).not.toBe(stack.maker);
    expect((await admin("/admin/resume")).status).toBe(200);
    const again = await client.order(sell, taker.publicKey);
    expect(again.ok && again.body.maker).toBe(stack.maker);
  });

  it("spreads the service's keys over all three masters", async () => {
    const taker = stack.takers[0]!.keypair;
    for (let i = 0; i < 30; i++) {
      const o = await client.order({ ...sell, amount: 1_000_000n + BigInt(i) }, taker.publicKey);
      expect(o.ok && o.body.maker).toBe(stack.maker);
    }
    const masters = cluster.nodes("master");
    expect(masters).toHaveLength(3);
    const perMaster = await Promise.all(masters.map(async (m) => (await m.keys("rfq:*")).length));
    for (const n of perMaster) expect(n).toBeGreaterThan(0);
    console.log(`rfq:* keys per master: ${perMaster.join(", ")}`);
  });
});

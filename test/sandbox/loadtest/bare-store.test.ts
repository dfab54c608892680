/**
 * The sweep's store baseline (sandbox/loadtest/bare.ts --kind store): node:http with the webhook's own
 * quote store `put` before each answer, the floor for any webhook that keeps every quote in Redis
 * before answering it. Its figures mean that only if the put really happens, through the same script
 * as the webhook's (its claim check included), in a real bare server process on a real socket.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startBareTarget } from "../../../sandbox/loadtest/sweep.ts";
import { fileRedis } from "../../support/redis.ts";

const { redis } = fileRedis();
const dir = mkdtempSync(join(tmpdir(), "bare-store-"));
const keys: string[] = [];
afterAll(async () => {
  if (keys.length) await redis.del(...keys);
  rmSync(dir, { recursive: true, force: true });
});

const SOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const request = (quoteId: string) => ({
  requestId: randomUUID(),
  quoteId,
  tokenIn: SOL,
  tokenOut: USDC,
  amount: "1000000000",
  quoteType: "exactIn",
  protocol: "v1",
  feeBps: 0,
});

describe("sweep baseline: bare node:http + store", () => {
  it("stores each quote through the quote store's put before its 200, and answers 404 for a quoteId a swap has claimed", async () => {
    const t = await startBareTarget("store", 1, dir);
    try {
      expect(t.name).toBe("bare node:http + store ×1");
      const url = t.urls[0] as URL;
      const post = (body: object) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });

      const quoteId = randomUUID();
      keys.push(`rfq:bare:{${quoteId}}:q`);
      const body = request(quoteId);
      const res = await post(body);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ quoteId, requestId: body.requestId, amountIn: body.amount });
      // Written as the webhook writes it: the StoredQuote as JSON.
      const raw = (await redis.get(`rfq:bare:{${quoteId}}:q`)) ?? "null";
      expect(JSON.parse(raw)).toMatchObject({
        quoteId,
        request: body,
        response: { quoteId, amountIn: body.amount },
      });
      expect(await redis.pttl(`rfq:bare:{${quoteId}}:q`)).toBeGreaterThan(55_000);

      // The put script's claim check: a claimed quoteId is not stored again, and not answered 200.
      const claimed = randomUUID();
      keys.push(`rfq:bare:{${claimed}}:claim`, `rfq:bare:{${claimed}}:q`);
      await redis.set(`rfq:bare:{${claimed}}:claim`, '{"messageHash":"x","claimedAtMs":0}', "PX", 60_000);
      const refused = await post(request(claimed));
      expect(refused.status).toBe(404);
      expect(await redis.exists(`rfq:bare:{${claimed}}:q`)).toBe(0);
    } finally {
      await t.close();
    }
  });

  it("runs the bare server's node with BARE_NODE_ARGS and exits on SIGTERM, so that a --cpu-prof profile of the floor is written", async () => {
    const profiles = join(dir, "profiles");
    const before = process.env.BARE_NODE_ARGS;
    process.env.BARE_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${profiles}`;
    let t: Awaited<ReturnType<typeof startBareTarget>>;
    try {
      t = await startBareTarget("http", 1, dir);
    } finally {
      if (before === undefined) delete process.env.BARE_NODE_ARGS;
      else process.env.BARE_NODE_ARGS = before;
    }
    const res = await fetch(t.urls[0] as URL, {
      method: "POST",
      body: JSON.stringify(request(randomUUID())),
    });
    expect(res.status).toBe(200);
    await t.close();
    // Node writes the profiles (the server's thread and tsx's loader thread) on its way out: a server
    // killed by the signal leaves none.
    expect(readdirSync(profiles).filter((f) => f.endsWith(".cpuprofile")).length).toBeGreaterThan(0);
  });
});

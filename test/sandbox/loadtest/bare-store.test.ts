/**
 * The sweep's store baseline (sandbox/loadtest/bare.ts --kind store): node:http with the webhook's own
 * quote store `put` before each answer, the floor for any webhook that keeps every quote in Redis
 * before answering it. Its figures mean that only if the put really happens, through the same script
 * as the webhook's (its claim check included), in a real bare server process on a real socket.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
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
      const stored = JSON.parse((await redis.get(`rfq:bare:{${quoteId}}:q`)) ?? "null");
      expect(stored).toMatchObject({ quoteId, request: body, response: { quoteId, amountIn: body.amount } });
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
});

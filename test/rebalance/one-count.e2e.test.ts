/**
 * One count of what the maker holds: two one-sided fills push maker A's JUP below its band, and a
 * rebalancing pass started at once (the fills' reservations not yet settled by a balance read) buys
 * the deficit once, not twice, and A ends inside its band. Two ways a landed fill is still reserved:
 * - committed and waiting for a balance read `settleMarginMs` after it (raised here to 5 s, so the
 *   pass surely starts inside that window);
 * - open, because the webhook's confirmation poll has not come round yet (set to a minute here); the
 *   rebalancer learns from the webhooks' fill journal and the chain that it landed.
 * Each test first checks that the fills' reservations are still held, so it exercises the overlap.
 */
import { PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import type { SwapTuning } from "../../src/wiring/swap-ports.ts";
import { MINT } from "../support/config.ts";
import { fileRedis } from "../support/redis.ts";
import { fundedTaker, type TwoMakers, takerBuys, twoMakers } from "./support.ts";

const JUP = new PublicKey(MINT.JUP);
const SEEDED = 10_000_000n * 1_000_000n;
const BAND = 500n * 1_000_000n;

const vary =
  (settleMarginMs: number) =>
  (f: FileConfig): FileConfig => ({
    ...f,
    inventory: { ...f.inventory, settleMarginMs },
    rebalance: {
      ...f.rebalance,
      targets: {
        JUP: {
          target: SEEDED.toString(),
          band: BAND.toString(),
          maxTrade: (5_000n * 1_000_000n).toString(),
          against: "USDC",
          maxSlippageBps: 100,
          cooldownMs: 0,
          dailyNotionalUsd: "1000000",
        },
      },
    },
  });

const redis = fileRedis();

function scenario(name: string, settleMarginMs: number, swapA: SwapTuning, held: "committed" | "open"): void {
  describe(name, () => {
    let s: TwoMakers;
    beforeAll(async () => {
      s = await twoMakers(redis, vary(settleMarginMs), swapA);
    });
    afterAll(async () => {
      await s?.close();
    });

    it(`two fills, then a pass at once (fills ${held} but not settled): A's JUP ends inside its band`, async () => {
      const a = s.a.maker.publicKey;
      const taker = fundedTaker(s.a);
      // Only A is registered: both buys fill against A (about 740 JUP each, together about 3 bands).
      // Amounts differ by one unit so the two fills are two transactions.
      const quoteIds: string[] = [];
      for (let i = 0; i < 2; i++) {
        const o = await takerBuys(s.op, taker, MINT.USDC, MINT.JUP, 600_000_000n + BigInt(i));
        quoteIds.push(o.quoteId as string);
      }
      await s.registerB();
      const onChain = tokenBalance(s.a.chain, a, JUP);
      const deficit = SEEDED - onChain;
      expect(deficit).toBeGreaterThan(2n * BAND);
      // The overlap this test is about: the fills have landed and their units are still reserved. The
      // webhook commits a landed fill's reservation in the background: give a loaded machine a moment.
      const states = async () =>
        (await s.a.inventory.reservations()).filter((r) => quoteIds.includes(r.quoteId)).map((r) => r.state);
      for (let until = Date.now() + 10_000; Date.now() < until; ) {
        if ((await states()).every((x) => x === held)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await states()).toEqual([held, held]);

      const report = await s.rebalancer.runPass();
      expect(report.trades).toHaveLength(1);
      const t = report.trades[0]!;
      expect(t.outcome, t.detail).toBe("landed");
      // Planned from the chain balance alone: the deficit once.
      const whole = `${onChain / 1_000_000n}.${(onChain % 1_000_000n).toString().padStart(6, "0")}`;
      expect(t.trade.why).toContain(`JUP ${whole} free is below its band`);
      const after = tokenBalance(s.a.chain, a, JUP);
      expect(after - onChain).toBe(t.outAmount);
      expect(after).toBeGreaterThanOrEqual(SEEDED - BAND);
      expect(after).toBeLessThanOrEqual(SEEDED + BAND);
    }, 60_000);
  });
}

scenario("a pass inside the inventory's settle margin", 5_000, {}, "committed");
scenario("a pass before the webhook has seen its fills land", 2_000, { confirmationPollMs: 60_000 }, "open");

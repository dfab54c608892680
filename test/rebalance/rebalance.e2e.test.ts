/**
 * The rebalancer end to end in the sandbox (test/rebalance/support.ts: two makers on one local chain
 * behind the operator simulator, every hop a real socket). One-sided fills push maker A's JUP below
 * its band; A's rebalancer buys it back from maker B through the operator's order and execute API,
 * within its price limit, and the balance read from the chain ends inside the band. A dry run before
 * changes nothing. Orders whose transactions do more than they say: hostile-order-api.security.test.ts.
 */
import { PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import { testRedis } from "../support/redis.ts";
import { fundedTaker, type TwoMakers, takerBuys, twoMakers } from "./support.ts";

const JUP = new PublicKey(MINT.JUP);
const USDC = new PublicKey(MINT.USDC);
const SEEDED = 10_000_000n * 1_000_000n; // harness default: 10,000,000 JUP
const BAND = 1_000n * 1_000_000n;
const MAX_SLIPPAGE_BPS = 100;

const vary = (f: FileConfig): FileConfig => ({
  ...f,
  rebalance: {
    ...f.rebalance,
    targets: {
      JUP: {
        target: SEEDED.toString(),
        band: BAND.toString(),
        maxTrade: (5_000n * 1_000_000n).toString(),
        against: "USDC",
        maxSlippageBps: MAX_SLIPPAGE_BPS,
        cooldownMs: 0,
        dailyNotionalUsd: "100000",
      },
    },
  },
});

const redis = testRedis();
let s: TwoMakers;

beforeAll(async () => {
  s = await twoMakers(redis, vary);
});
afterAll(async () => {
  await s?.close();
  await redis.redis.quit();
});

/** The rebalancer's reservations by state (a committed one counts until a later balance read settles it). */
const rebalanceReservations = async (state: "open" | "committed") =>
  (await s.a.inventory.reservations()).filter(
    (r) => r.quoteId.startsWith("rebalance:") && (r as { state?: string }).state === state,
  );

const balances = (owner: PublicKey) => ({
  jup: tokenBalance(s.a.chain, owner, JUP),
  usdc: tokenBalance(s.a.chain, owner, USDC),
});

describe("rebalancing through the operator's order and execute API", () => {
  it("one-sided fills push A's JUP below its band; a dry run says what it would buy and changes nothing", async () => {
    const taker = fundedTaker(s.a);
    // Only A is registered: the taker's buys all fill against A (about 1,600 JUP each).
    // Amounts differ by one unit: two identical orders within one blockhash and expiry second are
    // one and the same transaction (the fill has no nonce), which the maker fills once.
    for (let i = 0; i < 2; i++) await takerBuys(s.op, taker, MINT.USDC, MINT.JUP, 1_300_000_000n + BigInt(i));
    const a = s.a.maker.publicKey;
    expect(balances(a).jup).toBeLessThan(SEEDED - BAND);
    // A committed fill's units stay reserved until a balance read that starts settleMarginMs (2 s)
    // after it: wait so the free balance is the chain's.
    await new Promise((r) => setTimeout(r, 2_200));
    await s.registerB();

    const before = { a: balances(a), b: balances(s.b.maker.publicKey) };
    const dry = await s.rebalancer.runPass({ dryRun: true });
    expect(dry.trades).toHaveLength(1);
    const t = dry.trades[0]!;
    expect(t.outcome).toBe("dryRun");
    expect(t.trade).toMatchObject({ symbol: "JUP", side: "buy", inputMint: MINT.USDC, outputMint: MINT.JUP });
    expect(t.trade.why).toMatch(/below its band/);
    expect(t.detail).toMatch(/within the price limit/);
    expect(s.signer.count).toBe(0);
    expect({ a: balances(a), b: balances(s.b.maker.publicKey) }).toEqual(before);
    expect(await rebalanceReservations("open")).toEqual([]);
    expect(await rebalanceReservations("committed")).toEqual([]);
  });

  it("buys JUP back from maker B within its price limit; the chain shows A inside its band", async () => {
    const a = s.a.maker.publicKey;
    const b = s.b.maker.publicKey;
    const before = { a: balances(a), b: balances(b) };
    const report = await s.rebalancer.runPass();
    expect(report.trades).toHaveLength(1);
    const t = report.trades[0]!;
    expect(t.outcome, t.detail).toBe("landed");
    expect(t.orderMaker).toBe(b.toBase58());
    expect(t.signature).toBeTruthy();
    expect(s.signer.count).toBe(1);

    const after = { a: balances(a), b: balances(b) };
    // Read from the chain: A paid exactly inAmount of USDC and received at least outAmount of JUP.
    expect(before.a.usdc - after.a.usdc).toBe(t.inAmount);
    expect(after.a.jup - before.a.jup).toBe(t.outAmount);
    expect(t.outAmount!).toBeGreaterThanOrEqual(t.trade.minOut);
    expect(t.slippageBps!).toBeLessThanOrEqual(MAX_SLIPPAGE_BPS);
    expect(after.a.jup).toBeGreaterThanOrEqual(SEEDED - BAND);
    expect(after.a.jup).toBeLessThanOrEqual(SEEDED + BAND);
    // B is the other side of the same trade.
    expect(before.b.jup - after.b.jup).toBe(t.outAmount);

    // A's own webhook was asked too, and declined its own wallet.
    expect(await s.a.metrics.registry.metrics()).toMatch(/rfq_no_quote_total\{reason="SELF_TRADE"\} [1-9]/);
    // One line ties the order, the execute and the signature together.
    const line = s.lines.find((l) => l.msg === "rebalanced");
    expect(line).toMatchObject({
      symbol: "JUP",
      outcome: "landed",
      requestId: t.requestId,
      quoteId: t.quoteId,
      orderMaker: b.toBase58(),
      executeCode: 0,
      signature: t.signature,
    });
    // Metrics: one landed rebalance, its slippage against the mid observed once.
    const text = await s.metrics.registry.metrics();
    expect(text).toContain('rfq_rebalances_total{symbol="JUP",outcome="landed"} 1');
    expect(text).toContain('rfq_rebalance_slippage_bps_count{symbol="JUP"} 1');
    // What it sold was reserved and is now committed (nothing left open), and the next pass has
    // nothing to do.
    expect(await rebalanceReservations("open")).toEqual([]);
    expect((await rebalanceReservations("committed")).map((r) => [r.mint, r.amount])).toEqual([
      [MINT.USDC, t.inAmount],
    ]);
    const next = await s.rebalancer.runPass();
    expect(next.trades).toEqual([]);
    expect(next.plan.skipped[0]?.why).toMatch(/inside/);
  });
});

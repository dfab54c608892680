import { describe, expect, it } from "vitest";
import { QuotingBook } from "../../pricing/book.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { StaticPriceSource } from "../../pricing/static.ts";
import { MINT, testConfig } from "../support/config.ts";

function book() {
  const config = testConfig();
  const source = config.file.priceSources.static;
  if (source?.kind !== "static") throw new Error("the default config prices from a static source");
  const src = new StaticPriceSource("static", source.prices);
  return new QuotingBook(config, new Map<string, PriceSource>([["static", src]]));
}

describe("QuotingBook: exact amounts, rounded in the maker's favour", () => {
  // SOL/USDC mid 180.25, first level 5 bps. 1 SOL = 10^9 lamports, 1 USDC = 10^6 units. The pair's lot
  // (no rfqV2.lotSizeBase: the default) is 0.0001 SOL = 10^5 lamports, 18,025 USDC units at mid; the
  // first level is 18,025 x 1.0005 = 18,034.0125 -> 18,035 units per lot to buy (ask, rounded up) and
  // 18,025 x 0.9995 = 18,015.9875 -> 18,015 to sell (bid, rounded down).
  it("prices exactIn USDC->SOL at the ask's price per lot, flooring what the taker receives", () => {
    const q = book().price({
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amount: 1_000_000n,
      quoteType: "exactIn",
    });
    expect(q.ok).toBe(true);
    if (!q.ok) return;
    // out = floor(1e6 x 1e5 / 18,035) = floor(5,544,774.05)
    expect(q.amountOut).toBe(5_544_774n);
    expect(q.amountIn).toBe(1_000_000n);
    expect(q.takerSide).toBe("buy");
  });

  it("widens a flagged taker's quote by extraSpreadBps on top of the level's spread, flooring what it receives", () => {
    const q = book().price({
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amount: 1_000_000n,
      quoteType: "exactIn",
      extraSpreadBps: 20,
    });
    expect(q).toMatchObject({ ok: true, spreadBps: 25 });
    if (!q.ok) return;
    // 25 bps: 18,025 x 1.0025 = 18,070.0625 -> 18,071 per lot; floor(1e11 / 18,071) = floor(5,533,728.07)
    expect(q.amountOut).toBe(5_533_728n);
  });

  it("prices exactOut SOL<-USDC (taker wants 1 USDC) at the bid's price per lot, ceiling what the taker pays", () => {
    const q = book().price({
      tokenIn: MINT.SOL,
      tokenOut: MINT.USDC,
      amount: 1_000_000n,
      quoteType: "exactOut",
    });
    expect(q.ok).toBe(true);
    if (!q.ok) return;
    // in = ceil(1e6 x 1e5 / 18,015) = ceil(5,550,929.78)
    expect(q.amountIn).toBe(5_550_930n);
    expect(((q.amountIn - 1n) * 18_015n) / 100_000n).toBeLessThan(1_000_000n);
  });

  it("never lets the taker gain from a round trip (buy then sell back)", () => {
    const b = book();
    let roundTrips = 0;
    for (const amount of [1_000_000n, 7_777_777n, 123_456_789n, 999_999_999_999n]) {
      const buy = b.price({ tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount, quoteType: "exactIn" });
      if (!buy.ok) continue;
      const sell = b.price({
        tokenIn: MINT.SOL,
        tokenOut: MINT.USDC,
        amount: buy.amountOut,
        quoteType: "exactIn",
      });
      if (!sell.ok) continue;
      roundTrips++;
      expect(sell.amountOut).toBeLessThan(amount);
    }
    // The sizes within the pair's limits are priced both ways: a book refusing everything fails here.
    expect(roundTrips).toBe(3);
  });

  it("widens the spread with size (levels)", () => {
    const b = book();
    const small = b.price({
      tokenIn: MINT.SOL,
      tokenOut: MINT.USDC,
      amount: 1_000_000_000n,
      quoteType: "exactIn",
    });
    const large = b.price({
      tokenIn: MINT.SOL,
      tokenOut: MINT.USDC,
      amount: 200_000_000_000n,
      quoteType: "exactIn",
    });
    expect(small.ok && large.ok).toBe(true);
    if (small.ok && large.ok) {
      expect(small.spreadBps).toBe(5);
      expect(large.spreadBps).toBe(25);
      // Per-SOL proceeds are lower for the large order.
      expect(large.amountOut * 1_000_000_000n).toBeLessThan(small.amountOut * 200_000_000_000n);
    }
  });

  it.each([
    ["below the pair's minimum size", MINT.SOL, MINT.USDC, 999_999n, "SIZE_BELOW_MIN"],
    ["above the pair's maximum size", MINT.SOL, MINT.USDC, 500_000_000_001n, "SIZE_ABOVE_MAX"],
    ["for a pair we do not trade", MINT.USDT, MINT.JUP, 1_000_000n, "PAIR_NOT_SUPPORTED"],
    ["when the output rounds to nothing", MINT.USDC, MINT.USDT, 1n, "AMOUNT_TOO_SMALL"],
  ])("declines a quote %s", (_name, tokenIn, tokenOut, amount, reason) => {
    const q = book().price({ tokenIn, tokenOut, amount, quoteType: "exactIn" });
    expect(q).toMatchObject({ ok: false, code: reason });
  });

  it("declines when the price is older than the source allows", () => {
    const stale: PriceSource = {
      name: "stale",
      maxAgeMs: 1_000,
      price: () => ({ mid: { num: 180n, den: 1n }, updatedAtMs: 0 }),
      start: async () => {},
      close: async () => {},
    };
    const config = testConfig();
    const b = new QuotingBook(config, new Map([["static", stale]]), { now: () => 5_000 });
    expect(
      b.price({ tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: 1_000_000_000n, quoteType: "exactIn" }),
    ).toMatchObject({
      ok: false,
      code: "PRICE_STALE",
    });
  });
});

/**
 * RFQ v2 levels from the quoting book: the program's walk (the reference's worked vectors), levels in
 * whole lots rounded the maker's way, the wire price that converts back to the exact per-lot price, the
 * inventory cut, and the book's gates (pause, pair switch, stale price) withdrawing a pair.
 */
import { describe, expect, it } from "vitest";
import { QuotingBook } from "../../pricing/book.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { StaticPriceSource } from "../../pricing/static.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { pairLevels, wireLevel } from "../../src/rfq-v2/levels.ts";
import { MINT, testConfig } from "../support/config.ts";

function book(deps: ConstructorParameters<typeof QuotingBook>[2] = {}) {
  const config = testConfig();
  const source = config.file.priceSources.static;
  if (source?.kind !== "static") throw new Error("the default config prices from a static source");
  return new QuotingBook(
    config,
    new Map<string, PriceSource>([["static", new StaticPriceSource("static", source.prices)]]),
    deps,
  );
}
const always = () => true;

describe("the program's walk of a level list (fill_exact_in)", () => {
  it("matches the reference's worked vectors: whole lots, floors, stop when spent", () => {
    expect(sweep("ask", 4_000_000n, [{ perLot: 199_990n, lots: 1_000n }], 1_000_000n)).toEqual({
      spent: 4_000_000n,
      out: 799_960n,
      lots: 4n,
    });
    expect(sweep("bid", 42_706_402n, [{ perLot: 853_875n, lots: 50n }], 10_000_000n)).toEqual({
      spent: 42_693_750n,
      out: 500_000_000n,
      lots: 50n,
    });
    expect(sweep("ask", 270_106_537n, [{ perLot: 856_477n, lots: 50n }], 10_000_000n)).toEqual({
      spent: 270_000_000n,
      out: 23_124_879n,
      lots: 27n,
    });
    expect(
      sweep(
        "bid",
        1_000n,
        [
          { perLot: 100n, lots: 5n },
          { perLot: 200n, lots: 5n },
        ],
        1n,
      ),
    ).toEqual({ spent: 900n, out: 7n, lots: 7n });
  });
});

describe("levels from the book (SOL/USDC, mid 180.25, spreads 5/10/25 bps)", () => {
  const lot = 100_000n; // 0.0001 SOL
  it("rounds the maker's asks up and its bids down to whole quote atoms per lot", () => {
    const l = book().ladders("SOL/USDC");
    if (!l.ok) throw new Error(l.context);
    const levels = pairLevels(l, always);
    // ask: 180.25 USDC x 1.0005 per SOL = 18,034.0125 atoms per 0.0001 SOL -> 18,035; bid x 0.9995 -> 18,015.9875 -> 18,015
    expect(levels.asks[0]).toEqual({ lots: 100_000n, perLot: 18_035n });
    expect(levels.bids[0]).toEqual({ lots: 100_000n, perLot: 18_015n });
    // the next bands hold the lots between the bounds (10 -> 100 SOL, 100 -> 500 SOL)
    expect(levels.asks.map((x) => x.lots)).toEqual([100_000n, 900_000n, 4_000_000n]);
    expect(levels.asks.map((x) => x.perLot)).toEqual([18_035n, 18_044n, 18_071n]);
    expect(levels.bids.map((x) => x.perLot)).toEqual([18_015n, 18_006n, 17_979n]);
  });

  it("costs, swept to each level's bound, exactly what /quote answers for that size (one model of size)", () => {
    const b = book();
    const l = b.ladders("SOL/USDC");
    if (!l.ok) throw new Error(l.context);
    const levels = pairLevels(l, always);
    let bound = 0n;
    let cost = 0n;
    for (const [i, a] of levels.asks.entries()) {
      bound += a.lots * lot;
      cost += a.lots * a.perLot;
      const q = b.price({ tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount: bound, quoteType: "exactOut" });
      expect(q.ok && q.amountIn, `ask level ${i}`).toBe(cost);
    }
    expect(bound).toBe(500_000_000_000n);
    // 10 SOL at 18,035 per lot, 90 at 18,044, 400 at 18,071
    expect(cost).toBe(100_000n * 18_035n + 900_000n * 18_044n + 4_000_000n * 18_071n);
    bound = 0n;
    cost = 0n;
    for (const [i, x] of levels.bids.entries()) {
      bound += x.lots * lot;
      cost += x.lots * x.perLot;
      const q = b.price({ tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: bound, quoteType: "exactIn" });
      expect(q.ok && q.amountOut, `bid level ${i}`).toBe(cost);
    }
  });

  it("sends a wire price that the operator's conversion (price x lot / 10^9, floored) turns back into the per-lot price", () => {
    for (const [level, side] of [
      [{ lots: 3n, perLot: 18_035n }, "ask"],
      [{ lots: 3n, perLot: 18_015n }, "bid"],
    ] as const) {
      const w = wireLevel(level, lot, 9, side);
      expect(w.volume).toBe(300_000n);
      expect((w.price * lot) / 10n ** 9n).toBe(level.perLot);
    }
    // a lot that does not divide 10^decimals: asks round the wire price up, bids down
    expect((wireLevel({ lots: 1n, perLot: 7n }, 3n, 2, "ask").price * 3n) / 100n).toBeGreaterThanOrEqual(7n);
    expect((wireLevel({ lots: 1n, perLot: 7n }, 3n, 2, "bid").price * 3n) / 100n).toBeLessThanOrEqual(7n);
  });

  it("cuts a side where the inventory stops carrying it, to the largest whole number of lots it carries", () => {
    const l = book().ladders("SOL/USDC");
    if (!l.ok) throw new Error(l.context);
    // the maker holds 12.345 SOL and 1,000 USDC
    const fits = (side: "bid" | "ask", base: bigint, quote: bigint) =>
      side === "ask" ? base <= 12_345_000_000n : quote <= 1_000_000_000n;
    const levels = pairLevels(l, fits);
    expect(levels.asks.map((x) => x.lots)).toEqual([100_000n, 23_450n]);
    const bidLots = levels.bids.reduce((s, x) => s + x.lots, 0n);
    expect(bidLots).toBe(1_000_000_000n / 18_015n);
  });

  it("withdraws the pair when quoting is paused, the pair is switched off, or its price is stale", () => {
    const paused = book({ controls: { isPaused: () => true, pairOverride: () => undefined } }).ladders(
      "SOL/USDC",
    );
    expect(paused).toMatchObject({ ok: false, code: "PAUSED" });
    const off = book({
      controls: { isPaused: () => false, pairOverride: (k) => (k === "SOL/USDC" ? false : undefined) },
    }).ladders("SOL/USDC");
    expect(off).toMatchObject({ ok: false, code: "PAIR_DISABLED" });
    expect(book().ladders("NOPE/USDC")).toMatchObject({ ok: false, code: "PAIR_NOT_SUPPORTED" });
    const stale: PriceSource = {
      name: "stale",
      maxAgeMs: 1_000,
      price: () => ({ mid: { num: 180n, den: 1n }, updatedAtMs: 0 }),
      start: async () => {},
      close: async () => {},
    };
    const old = new QuotingBook(testConfig(), new Map([["static", stale]]), { now: () => 5_000 });
    expect(old.ladders("SOL/USDC")).toMatchObject({ ok: false, code: "PRICE_STALE" });
  });
});

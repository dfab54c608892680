/**
 * The one model of size both channels price with (amounts/ladder.ts): levels swept one by one, the
 * base inside a level at its price per lot pro rata, rounded once in the maker's favour. Hand-computed
 * on a small ladder: lot 10 base atoms, 7 quote atoms per lot up to 30 base atoms, then 9 per lot up to
 * 55 (a last bound that is not a whole number of lots).
 */
import { describe, expect, it } from "vitest";
import { type Band, costTimesLot, lotSizeFor, perLotAt, sweptAmounts } from "../../amounts/ladder.ts";

const LOT = 10n;
const BANDS: Band[] = [
  { upToBase: 30n, perLot: 7n },
  { upToBase: 55n, perLot: 9n },
];

describe("costTimesLot: the exact cost of a size along the levels, times the lot", () => {
  it("sums each level's share of the size at its price per lot, the level's last atom at its own price", () => {
    expect(costTimesLot(BANDS, 0n)).toBe(0n);
    expect(costTimesLot(BANDS, 25n)).toBe(25n * 7n);
    expect(costTimesLot(BANDS, 30n)).toBe(210n);
    expect(costTimesLot(BANDS, 31n)).toBe(210n + 9n);
    expect(costTimesLot(BANDS, 55n)).toBe(210n + 25n * 9n);
  });

  it("has no cost for a size beyond the last level's bound, nor for any size of an empty ladder", () => {
    expect(costTimesLot(BANDS, 56n)).toBeUndefined();
    expect(costTimesLot([], 0n)).toBeUndefined();
  });
});

describe("sweptAmounts: each side and quote type, the taker receiving floor and paying ceil", () => {
  it("a taker selling a fixed base (exactIn) receives the proceeds floored: 25 atoms -> 175/10 -> 17", () => {
    expect(sweptAmounts("sell", "exactIn", 25n, BANDS, LOT)).toEqual({
      amountIn: 25n,
      amountOut: 17n,
      baseAmount: 25n,
    });
  });

  it("a taker buying a fixed base (exactOut) pays the cost ceiled: 25 atoms -> 175/10 -> 18", () => {
    expect(sweptAmounts("buy", "exactOut", 25n, BANDS, LOT)).toEqual({
      amountIn: 18n,
      amountOut: 25n,
      baseAmount: 25n,
    });
  });

  it("a taker wanting a fixed quote (exactOut) gives the least base whose proceeds, floored, reach it", () => {
    // 17 quote atoms: 170 / 7 = 24.3 -> 25 atoms (24 atoms give 168/10 -> 16)
    expect(sweptAmounts("sell", "exactOut", 17n, BANDS, LOT)).toEqual({
      amountIn: 25n,
      amountOut: 17n,
      baseAmount: 25n,
    });
    // 22 across the first level's 210: 30 + (220 - 210) / 9 = 31.1 -> 32 (31 atoms give 219/10 -> 21)
    expect(sweptAmounts("sell", "exactOut", 22n, BANDS, LOT)).toMatchObject({ amountIn: 32n });
  });

  it("a taker paying a fixed quote (exactIn) receives the most base whose cost, ceiled, is within it", () => {
    // 17: 170 / 7 = 24.3 -> 24 atoms (cost 168/10 -> 17; 25 atoms would cost 18)
    expect(sweptAmounts("buy", "exactIn", 17n, BANDS, LOT)).toEqual({
      amountIn: 17n,
      amountOut: 24n,
      baseAmount: 24n,
    });
    // 22: 30 + 10 / 9 = 31.1 -> 31 atoms (cost 219/10 -> 22; 32 atoms would cost 23)
    expect(sweptAmounts("buy", "exactIn", 22n, BANDS, LOT)).toMatchObject({ amountOut: 31n });
  });

  it("gives whole lots at a level's bound exactly, either way", () => {
    expect(sweptAmounts("buy", "exactIn", 21n, BANDS, LOT)).toMatchObject({ amountOut: 30n });
    expect(sweptAmounts("sell", "exactOut", 21n, BANDS, LOT)).toMatchObject({ amountIn: 30n });
    expect(sweptAmounts("sell", "exactIn", 30n, BANDS, LOT)).toMatchObject({ amountOut: 21n });
    expect(sweptAmounts("buy", "exactOut", 30n, BANDS, LOT)).toMatchObject({ amountIn: 21n });
  });

  it("reaches the ladder's end exactly and nothing beyond it", () => {
    const one: Band[] = [{ upToBase: 30n, perLot: 7n }];
    expect(sweptAmounts("buy", "exactIn", 21n, one, LOT)).toMatchObject({ amountOut: 30n });
    expect(sweptAmounts("sell", "exactOut", 21n, one, LOT)).toMatchObject({ amountIn: 30n });
    expect(sweptAmounts("buy", "exactIn", 22n, one, LOT)).toBeUndefined();
    expect(sweptAmounts("sell", "exactOut", 22n, one, LOT)).toBeUndefined();
    expect(sweptAmounts("sell", "exactIn", 55n, BANDS, LOT)).toMatchObject({ amountOut: 43n });
    expect(sweptAmounts("buy", "exactOut", 55n, BANDS, LOT)).toMatchObject({ amountIn: 44n });
    // 44 quote atoms: 440 is past the whole ladder's 435 (210 + 25 x 9)
    expect(sweptAmounts("sell", "exactOut", 44n, BANDS, LOT)).toBeUndefined();
    expect(sweptAmounts("buy", "exactIn", 44n, BANDS, LOT)).toBeUndefined();
    expect(sweptAmounts("sell", "exactIn", 56n, BANDS, LOT)).toBeUndefined();
    expect(sweptAmounts("buy", "exactOut", 56n, BANDS, LOT)).toBeUndefined();
  });
});

describe("perLotAt: a price per base atom as whole quote atoms per lot", () => {
  it("rounds the maker's bid down and its ask up, and an exact price not at all", () => {
    const price = { num: 180_340_125n, den: 10_000n * 100_000n }; // 18,034.0125 per 10^5 atoms
    expect(perLotAt(price, 100_000n, "bid")).toBe(18_034n);
    expect(perLotAt(price, 100_000n, "ask")).toBe(18_035n);
    expect(perLotAt({ num: 7n, den: 10n }, 10n, "ask")).toBe(7n);
    expect(perLotAt({ num: 7n, den: 10n }, 10n, "bid")).toBe(7n);
  });
});

describe("lotSizeFor: the default lot", () => {
  it("is the smallest power of ten at which one quote atom per lot is at most 1 bps: 0.0001 SOL at 180.25 USDC", () => {
    expect(lotSizeFor({ num: 18_025n, den: 100_000n }, 9, 6)).toBe(100_000n);
    // a token worth 1,000 USDC with 6 decimals: 1,000 quote atoms per atom -> 10 atoms
    expect(lotSizeFor({ num: 1_000n, den: 1n }, 6, 6)).toBe(10n);
    // one quote atom per base atom: 10,000 atoms make exactly 1 bps, and the search stops there
    expect(lotSizeFor({ num: 1n, den: 1n }, 6, 6)).toBe(10_000n);
  });

  it("starts at 10^(base decimals - quote decimals), and at 1 when the quote has more decimals", () => {
    expect(lotSizeFor({ num: 1_000_000n, den: 1n }, 9, 6)).toBe(1_000n);
    expect(lotSizeFor({ num: 1_000_000n, den: 1n }, 6, 9)).toBe(1n);
  });

  it("stops at 10^(base decimals + 2) for a token worth almost nothing", () => {
    expect(lotSizeFor({ num: 1n, den: 10n ** 12n }, 6, 6)).toBe(10n ** 8n);
  });
});

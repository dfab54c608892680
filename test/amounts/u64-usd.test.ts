/**
 * The u64 bounds of an on-chain amount (amounts/u64.ts) and the exact USD conversions behind the
 * USD-denominated limits (amounts/usd.ts).
 */
import { describe, expect, it } from "vitest";
import { fitsU64, U64_MAX } from "../../amounts/u64.ts";
import { unitsForUsd, usdValue } from "../../amounts/usd.ts";

describe("fitsU64", () => {
  it("is 2^64 - 1 at most", () => {
    expect(U64_MAX).toBe(18_446_744_073_709_551_615n);
  });

  it("accepts 0 through 2^64 - 1 and refuses one past either end", () => {
    expect(fitsU64(0n)).toBe(true);
    expect(fitsU64(1n)).toBe(true);
    expect(fitsU64(U64_MAX)).toBe(true);
    expect(fitsU64(-1n)).toBe(false);
    expect(fitsU64(U64_MAX + 1n)).toBe(false);
  });
});

describe("usdValue", () => {
  it("is units x price over the token's scale, exactly", () => {
    // 2.5 tokens of 6 decimals at 180.25 USD = 450.625 USD
    const v = usdValue(2_500_000n, { num: 18025n, den: 100n }, 1_000_000n);
    expect(v).toEqual({ num: 2_500_000n * 18025n, den: 100n * 1_000_000n });
    expect((v.num * 1000n) / v.den).toBe(450_625n);
  });
});

describe("unitsForUsd", () => {
  it("converts a USD amount to smallest units at the price", () => {
    // 9 USD at 1.5 USD per token of 2 decimals = 6 tokens = 600 units
    expect(unitsForUsd({ num: 9n, den: 1n }, { num: 3n, den: 2n }, 100n)).toBe(600n);
  });

  it("rounds down, so a limit converted to units never grows", () => {
    // 10 USD at 3 USD per whole-unit token = 3.33 units
    expect(unitsForUsd({ num: 10n, den: 1n }, { num: 3n, den: 1n }, 1n)).toBe(3n);
    // 0.5 USD at 0.3 USD per token of 1 decimal = 16.67 units
    expect(unitsForUsd({ num: 1n, den: 2n }, { num: 3n, den: 10n }, 10n)).toBe(16n);
  });

  it("has no answer at a zero price", () => {
    expect(unitsForUsd({ num: 9n, den: 1n }, { num: 0n, den: 1n }, 100n)).toBeUndefined();
  });
});

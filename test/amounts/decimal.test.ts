/**
 * The exact amount maths every quote and limit goes through (amounts/decimal.ts): what a price string
 * parses to, which way each division rounds, how a ratio prints and how two ratios compare.
 */
import { describe, expect, it } from "vitest";
import {
  compareRatio,
  formatRatio,
  formatUnits,
  mulDivCeil,
  mulDivFloor,
  parseDecimal,
} from "../../amounts/decimal.ts";

describe("parseDecimal", () => {
  it("reads a price string as an exact ratio: the digits over 10^(fraction digits)", () => {
    expect(parseDecimal("180.25")).toEqual({ num: 18025n, den: 100n });
    expect(parseDecimal("0.0045")).toEqual({ num: 45n, den: 10_000n });
    expect(parseDecimal("12")).toEqual({ num: 12n, den: 1n });
    expect(parseDecimal("7")).toEqual({ num: 7n, den: 1n });
  });

  it.each(["", "a1", "1a", "-1", "1.", ".5", "1.2.3", "1e3", " 1", "1,5", "abc"])(
    "refuses %j, naming the string",
    (s) => {
      expect(() => parseDecimal(s)).toThrow(`not a decimal number: ${s}`);
    },
  );
});

describe("mulDivFloor / mulDivCeil", () => {
  it("floor rounds an inexact quotient down, ceil rounds it up", () => {
    // 7 x 2 / 3 = 4.67
    expect(mulDivFloor(7n, 2n, 3n)).toBe(4n);
    expect(mulDivCeil(7n, 2n, 3n)).toBe(5n);
  });

  it("an exact quotient is the same both ways (ceil does not add one)", () => {
    expect(mulDivFloor(6n, 5n, 3n)).toBe(10n);
    expect(mulDivCeil(6n, 5n, 3n)).toBe(10n);
    expect(mulDivCeil(0n, 5n, 3n)).toBe(0n);
  });

  it("a quotient just above a whole number rounds up by exactly one", () => {
    // 10 x 1 / 9 = 1.11
    expect(mulDivCeil(10n, 1n, 9n)).toBe(2n);
    expect(mulDivFloor(10n, 1n, 9n)).toBe(1n);
  });
});

describe("formatRatio", () => {
  it("prints six places by default, rounded down", () => {
    expect(formatRatio({ num: 2n, den: 3n })).toBe("0.666666");
    expect(formatRatio({ num: 18025n, den: 100n })).toBe("180.250000");
  });

  it("pads a small ratio with leading zeros", () => {
    expect(formatRatio({ num: 1n, den: 100n }, 6)).toBe("0.010000");
    expect(formatRatio({ num: 1n, den: 1_000_000n }, 6)).toBe("0.000001");
    expect(formatRatio({ num: 0n, den: 1n }, 2)).toBe("0.00");
  });

  it("prints a whole number without a point at zero places", () => {
    expect(formatRatio({ num: 5n, den: 2n }, 0)).toBe("2");
    expect(formatRatio({ num: 123n, den: 1n }, 0)).toBe("123");
  });
});

describe("formatUnits", () => {
  it("prints smallest units as the token amount without trailing zeros", () => {
    expect(formatUnits(1_500_000n, 6)).toBe("1.5");
    expect(formatUnits(1_050_000n, 6)).toBe("1.05");
    expect(formatUnits(1_000n, 6)).toBe("0.001");
    expect(formatUnits(1n, 9)).toBe("0.000000001");
  });

  it("drops the point of a whole amount, keeping the zeros of the integer part", () => {
    expect(formatUnits(1_000_000n, 6)).toBe("1");
    expect(formatUnits(100_000_000n, 6)).toBe("100");
    expect(formatUnits(0n, 6)).toBe("0");
  });

  it("keeps every digit of a token with no decimals", () => {
    expect(formatUnits(100n, 0)).toBe("100");
    expect(formatUnits(0n, 0)).toBe("0");
  });
});

describe("compareRatio", () => {
  it.each([
    [{ num: 1n, den: 3n }, { num: 1n, den: 2n }, -1],
    [{ num: 1n, den: 2n }, { num: 1n, den: 3n }, 1],
    [{ num: 5n, den: 1n }, { num: 4n, den: 2n }, 1],
    [{ num: 4n, den: 2n }, { num: 5n, den: 1n }, -1],
    [{ num: 1n, den: 2n }, { num: 2n, den: 4n }, 0],
    [{ num: 3n, den: 1n }, { num: 3n, den: 1n }, 0],
  ] as const)("orders %o against %o as %i, across denominators", (a, b, want) => {
    expect(compareRatio(a, b)).toBe(want);
  });
});

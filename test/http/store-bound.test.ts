import { describe, expect, it } from "vitest";
import { storeBound } from "../../src/routes/quote.ts";

describe("storeBound: the quote store write's time bound", () => {
  it("is floored to a multiple of 16 ms once 64 ms or more are left, and never exceeds what is left", () => {
    for (let left = 64; left <= 250; left += 0.5) {
      const b = storeBound(left);
      expect(b % 16).toBe(0);
      expect(b).toBeLessThanOrEqual(left);
      expect(left - b).toBeLessThan(16);
    }
  });

  it("gives the usual budget's bounds (230-245 ms left) two timer durations, not one per millisecond", () => {
    const durations = new Set<number>();
    for (let left = 230; left <= 245; left += 0.5) durations.add(storeBound(left));
    expect([...durations].sort()).toEqual([224, 240]);
  });

  it("is exact below 64 ms, where a step would take a large share of what is left", () => {
    for (const left of [0.5, 7.5, 15, 40, 63.5]) expect(storeBound(left)).toBe(left);
  });
});

import { describe, expect, it } from "vitest";
import {
  maxShedRatio,
  pricedShareAt,
  type ShedRound,
  shedSummaryText,
  summarizeShedRounds,
} from "../../../sandbox/loadtest/shed-model.ts";

describe("bench:shed's overload model", () => {
  it("prices (1 - o·r) / (o·(1 - r)) of quotes at o times capacity: 75% at 1.2x needs r = 1/3", () => {
    expect(pricedShareAt(1.2, 1 / 3)).toBeCloseTo(0.75, 12);
    expect(pricedShareAt(1.2, 0.5)).toBeCloseTo(2 / 3, 12);
    // Free shedding: the core prices exactly its capacity, 1/1.2 of what is sent.
    expect(pricedShareAt(1.2, 0)).toBeCloseTo(1 / 1.2, 12);
    // A shed that costs as much as a price leaves nothing, and one that costs more cannot go negative.
    expect(pricedShareAt(1.2, 1)).toBe(0);
    expect(pricedShareAt(2, 0.9)).toBe(0);
    // At or below capacity every quote is priced.
    expect(pricedShareAt(1, 0.7)).toBe(1);
  });

  it("gives the largest r for a wanted share, the inverse of the priced share", () => {
    expect(maxShedRatio(1.2, 0.75)).toBeCloseTo(1 / 3, 12);
    for (const [o, p] of [
      [1.2, 0.6],
      [1.5, 0.5],
      [1.1, 0.8],
    ] as const)
      expect(pricedShareAt(o, maxShedRatio(o, p))).toBeCloseTo(p, 12);
    expect(() => maxShedRatio(1, 0.5)).toThrow(/overload 1 must be > 1/);
  });

  it("takes every ratio within a round, so a machine that halves its speed in one round moves no ratio", () => {
    const base: ShedRound = { floor: 40, http: 50, shed: 60, priced: 120 };
    const scaled = (k: number): ShedRound => ({
      floor: base.floor * k,
      http: base.http * k,
      shed: base.shed * k,
      priced: base.priced * k,
    });
    const s = summarizeShedRounds([scaled(1), scaled(2), scaled(0.5)]);
    expect(s.r).toBeCloseTo(0.5, 12);
    expect(s.rFloor).toBeCloseTo(1 / 3, 12);
    expect(s.perBare.shed).toBeCloseTo(1.2, 12);
    expect(s.perBare.floor).toBeCloseTo(0.8, 12);
    expect(s.rateRatioCpu).toBeCloseTo(50 / 120, 12);
    expect(s.pricedAt12).toBeCloseTo(2 / 3, 12);
    expect(s.pricedAt12Floor).toBeCloseTo(0.75, 12);
    // The µs figures are the median round's, for scale.
    expect(s.cpuUs).toEqual(base);
  });

  it("refuses a round with a figure missing or not positive, naming the round and the server", () => {
    const ok: ShedRound = { floor: 40, http: 50, shed: 60, priced: 120 };
    expect(() => summarizeShedRounds([ok, { ...ok, shed: 0 }])).toThrow(/round 2: no CPU figure for shed/);
    expect(() => summarizeShedRounds([])).toThrow(/no rounds/);
  });

  it("reports r, what it prices at 1.2x, and the ceiling Node's floor sets", () => {
    const text = shedSummaryText(
      summarizeShedRounds([{ floor: 40, http: 50, shed: 60, priced: 120 }]),
      2000,
    ).join("\n");
    expect(text).toContain("at 2000/s");
    expect(text).toContain("r (shed / priced): 0.50  ->  at 1.2x capacity the model prices 66.7% of quotes");
    expect(text).toContain("(75% needs r <= 0.33)");
    expect(text).toContain(
      "Node's floor / priced: 0.33  ->  no shedding inside Node can price more than 75.0% at 1.2x",
    );
    expect(text).toContain("bare node:http / priced: 0.42");
  });
});

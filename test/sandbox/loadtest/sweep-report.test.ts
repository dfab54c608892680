/**
 * The sweep's verdict when a target never missed. A target that held the last rate of `--rates` has
 * its limit somewhere above it, so the highest rate it held is a floor and a ratio against it is a
 * bound. On 2026-11-24 bare node:http held every step up to 16,000/s and the report printed
 * "webhook / this: 0.50" as if measured; it now says "at most 0.50" and names the floor. The same
 * holds below: a target that missed the first rate printed "none/s" and no ratio (a sweep of
 * 2026-11-24 starting at 7,000/s), where its limit is known to be below that rate.
 */
import { describe, expect, it } from "vitest";
import {
  heldRatio,
  OVERLOAD_FACTORS,
  type StepResult,
  type SweepReport,
  type SweepSummary,
  sweepHtml,
  sweepText,
} from "../../../sandbox/loadtest/sweep.ts";

const step = (target: string, rate: number, holds: boolean): StepResult => ({
  target,
  rate,
  kind: "sweep",
  measured: rate * 10,
  p50: 1,
  p99: holds ? 10 : 120,
  p999: holds ? 20 : 150,
  max: holds ? 30 : 200,
  withinBudget: 1,
  pricedWithinBudget: holds ? 1 : 0.5,
  unexpectedNoQuote: holds ? 0 : 0.5,
  errors: 0,
  holds,
  cpuUsPerRequest: {},
  cpuCoreShare: {},
  processes: {},
  sendLagP99: 1,
});

const summary = (
  target: string,
  workers: number,
  highestHeld: number | null,
  heldTopStep: boolean,
): SweepSummary => ({
  target,
  workers,
  highestHeld,
  heldTopStep,
});

function report(summaries: SweepSummary[], rates: number[]): SweepReport {
  const steps: StepResult[] = [];
  for (const s of summaries)
    for (const rate of rates) {
      const holds = s.highestHeld !== null && rate <= s.highestHeld;
      steps.push(step(s.target, rate, holds));
      if (!holds) break;
    }
  return {
    startedAt: "2026-11-24T02:03:13.186Z",
    machine: { nproc: 2 },
    settings: { rates: rates.join(","), budgetMs: 250 },
    steps,
    summary: summaries,
  };
}

const rates = [1000, 2000, 4000, 8000, 16000];

describe("sweep report: a target that never missed", () => {
  it("says a baseline that held the top step held that rate or more, and the webhook's ratio to it is at most the quotient", () => {
    const text = sweepText(
      report([summary("webhook ×1", 1, 8000, false), summary("bare node:http ×1", 1, 16000, true)], rates),
    );
    expect(text).toContain("workers 1: webhook ×1: 8000/s\n");
    expect(text).toContain(
      "workers 1: bare node:http ×1: 16000/s or more (it held the top step: raise --rates to find its limit) (webhook / this: at most 0.50)",
    );
  });

  it("gives an exact ratio when both missed, a lower bound when only the webhook held the top step, and none when both did", () => {
    const hook = summary("webhook ×1", 1, 8000, false);
    expect(heldRatio(hook, summary("bare", 1, 16000, false))).toBe("0.50");
    expect(heldRatio(summary("webhook ×1", 1, 16000, true), summary("bare", 1, 8000, false))).toBe(
      "at least 2.00",
    );
    expect(heldRatio(summary("webhook ×1", 1, 16000, true), summary("bare", 1, 16000, true))).toBe(
      "unknown (both held the top step)",
    );
    expect(heldRatio(hook, summary("bare", 1, null, false))).toBe("");
  });

  it("bounds the two-worker scaling the same way", () => {
    const text = sweepText(
      report([summary("webhook ×1", 1, 4000, false), summary("webhook ×2", 2, 16000, true)], rates),
    );
    expect(text).toContain("workers 2: webhook ×2 / webhook ×1: at least 4.00");
  });
});

describe("sweep report: the step past capacity", () => {
  it("gives the webhook's 1.2x step: the share of priceable quotes priced within budget, the rest shed or late", () => {
    const overload = (target: string, rate: number, priced: number): StepResult => ({
      ...step(target, rate, false),
      kind: "overload",
      pricedWithinBudget: priced,
      unexpectedNoQuote: 1 - priced,
    });
    const alone = {
      ...summary("webhook ×1", 1, 7000, false),
      overload: overload("webhook ×1", 8400, 0.7896),
    };
    const text = sweepText(report([alone, summary("bare node:http ×1", 1, 16000, false)], rates));
    expect(text).toMatch(
      /workers 1: webhook ×1 at 1\.2x \(8400\/s\): [\d.]+% answered within budget, 78\.96% of priceable quotes priced within budget, 21\.04% shed or late 404s/,
    );
  });

  it("gives every step past capacity (1.2x, 1.5x, 2x, 3x) with its share answered within budget", () => {
    const past = OVERLOAD_FACTORS.map(
      (factor, i): StepResult => ({
        ...step("webhook ×1", Math.round(7000 * factor), false),
        kind: "overload",
        factor,
        withinBudget: 0.9995 - i * 0.0001,
      }),
    );
    const text = sweepText(
      report([{ ...summary("webhook ×1", 1, 7000, false), overload: past[0], overloads: past }], rates),
    );
    expect(text).toContain("workers 1: webhook ×1 at 1.2x (8400/s): 99.95% answered within budget");
    expect(text).toContain("workers 1: webhook ×1 at 1.5x (10500/s): 99.94% answered within budget");
    expect(text).toContain("workers 1: webhook ×1 at 2x (14000/s): 99.93% answered within budget");
    expect(text).toContain("workers 1: webhook ×1 at 3x (21000/s): 99.92% answered within budget");
  });
});

describe("sweep report: the store baseline, the floor under the webhook", () => {
  it("gives bare node:http + store against bare node:http as the most a webhook that stores each quote reaches", () => {
    const text = sweepText(
      report(
        [
          summary("webhook ×1", 1, 4000, false),
          summary("bare node:http ×1", 1, 16000, false),
          summary("bare node:http + store ×1", 1, 8000, false),
        ],
        rates,
      ),
    );
    expect(text).toContain("workers 1: bare node:http + store ×1: 8000/s (webhook / this: 0.50)");
    expect(text).toContain(
      "workers 1: bare node:http + store / bare node:http: 0.50 (the most a webhook that stores each quote before answering reaches here)",
    );
  });

  it("prints no floor line without the store baseline", () => {
    const text = sweepText(
      report([summary("webhook ×1", 1, 4000, false), summary("bare node:http ×1", 1, 16000, false)], rates),
    );
    expect(text).not.toContain("+ store");
  });
});

describe("sweep report: a target that missed the first step", () => {
  it("says a target that missed the first step held less than it, and bounds the ratios either way", () => {
    const first = { firstRate: 7000 };
    const text = sweepText(
      report(
        [
          { ...summary("webhook ×1", 1, null, false), ...first },
          { ...summary("bare node:http ×1", 1, 8500, false), ...first },
        ],
        [7000, 7500, 8000, 8500, 9000],
      ),
    );
    expect(text).toContain(
      "workers 1: webhook ×1: below 7000/s (it missed the first step: lower --rates to find its limit)\n",
    );
    expect(text).toContain("workers 1: bare node:http ×1: 8500/s (webhook / this: below 0.82)");
    expect(
      heldRatio(
        { ...summary("webhook ×1", 1, 8000, false), ...first },
        { ...summary("bare", 1, null, false), ...first },
      ),
    ).toBe("above 1.14");
    // Both missed the first step, or a report written before the first rate was recorded: no ratio.
    expect(
      heldRatio(
        { ...summary("webhook ×1", 1, null, false), ...first },
        { ...summary("bare", 1, null, false), ...first },
      ),
    ).toBe("");
    expect(heldRatio(summary("webhook ×1", 1, null, false), summary("bare", 1, 8000, false))).toBe("");
    expect(sweepText(report([summary("webhook ×1", 1, null, false)], rates))).toContain(
      "workers 1: webhook ×1: none/s",
    );
  });
});

describe("sweep report: the start-up load", () => {
  it("prints the load a target takes right after it starts as not counted, and leaves it out of the plot and the verdict", () => {
    const rep = report([summary("webhook ×1", 1, 2000, false)], [1000, 2000, 4000]);
    // A cold first second that misses: printed, yet the target still holds 2000/s.
    rep.steps.unshift({ ...step("webhook ×1", 1000, false), kind: "start-up", p99: 77.7 });
    const text = sweepText(rep);
    expect(text).toContain("webhook ×1:\n  start-up (not counted): 1000/s MISSES: p50 1.0 p99 77.7 ");
    expect(text).toContain("workers 1: webhook ×1: 2000/s");
    const html = sweepHtml(rep);
    // Each plot has a dot per counted step (1000, 2000 and the 4000/s miss), none for the start-up.
    const plots = html.match(/<svg /g)?.length ?? 0;
    expect(plots).toBeGreaterThan(0);
    expect(html.match(/<circle /g)?.length).toBe(plots * 3);
  });
});

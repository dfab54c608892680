import { describe, expect, it } from "vitest";
import { FillRateTracker } from "../../../sandbox/operator/fill-rate.ts";

const MIN = 60_000;

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function recordMany(f: FillRateTracker, name: string, fills: number, failures: number): void {
  for (let i = 0; i < fills; i++) f.record(name, "filled");
  for (let i = 0; i < failures; i++) f.record(name, "failed");
}

describe("fill-rate tracker", () => {
  it("keeps a maker at or above 95% in service", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, failureDecayPerFill: 1 });
    recordMany(f, "mm", 19, 1);
    const s = f.status("mm");
    expect(s.rate).toBeCloseTo(0.95);
    expect(s.suspended).toBe(false);
  });

  it("suspends a maker below 95% for 5, then 10, 20 and 30 minutes, and 30 after that", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 2 });
    const expected = [5, 10, 20, 30, 30];
    for (const minutes of expected) {
      f.record("mm", "failed");
      f.record("mm", "failed");
      const s = f.status("mm");
      expect(s.suspended).toBe(true);
      expect(s.suspendedUntilMs).toBe(c.now() + minutes * MIN);
      c.advance(minutes * MIN - 1);
      expect(f.isSuspended("mm")).toBe(true);
      c.advance(1);
      expect(f.isSuspended("mm")).toBe(false);
    }
  });

  it("gives no verdict below the minimum number of counted swaps", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 10 });
    recordMany(f, "mm", 0, 9);
    expect(f.isSuspended("mm")).toBe(false);
    f.record("mm", "failed");
    expect(f.isSuspended("mm")).toBe(true);
  });

  it("forgets outcomes older than one hour", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 5, failureDecayPerFill: 1 });
    recordMany(f, "mm", 10, 0);
    f.record("mm", "failed");
    c.advance(60 * MIN + 1);
    expect(f.status("mm")).toMatchObject({ fills: 0, failures: 0, rate: 1 });
  });

  it("does not count honest rejections or swaps the user held longer than 20 s", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 1 });
    f.record("mm", "honestRejection");
    f.record("mm", "failed", 20_001);
    expect(f.status("mm")).toMatchObject({ fills: 0, failures: 0, suspended: false });
    f.record("mm", "failed", 20_000);
    expect(f.isSuspended("mm")).toBe(true);
  });

  it("lowers the weight of earlier failures by 20% with each confirmed fill", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 1000 });
    f.record("mm", "failed");
    f.record("mm", "filled");
    f.record("mm", "filled");
    const s = f.status("mm");
    expect(s.failureWeight).toBeCloseTo(0.64);
    expect(s.rate).toBeCloseTo(2 / 2.64);
  });

  it("restarts the suspension ladder after an hour without a suspension", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 1 });
    f.record("mm", "failed");
    expect(f.status("mm").suspendedUntilMs).toBe(c.now() + 5 * MIN);
    c.advance(5 * MIN + 60 * MIN);
    f.record("mm", "failed");
    expect(f.status("mm").suspendedUntilMs).toBe(c.now() + 5 * MIN);
  });

  it("keeps each maker's record separate", () => {
    const c = clock();
    const f = new FillRateTracker({ now: c.now, minSamples: 1 });
    f.record("bad", "failed");
    f.record("good", "filled");
    expect(f.isSuspended("bad")).toBe(true);
    expect(f.isSuspended("good")).toBe(false);
  });
});

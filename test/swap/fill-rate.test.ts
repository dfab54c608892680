/** The rolling one-hour fill-rate view: what counts, the window, the gauge and the 95% warning. */
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { FillRate } from "../../src/swap/fill-rate.ts";

function setUp(opts: { minSample?: number } = {}) {
  let now = 1_700_000_000_000;
  const lines: { level: number; msg: string; fillRate?: number }[] = [];
  const log = createLogger("info", { write: (s: string) => lines.push(JSON.parse(s)) });
  const metrics = new Metrics();
  const rate = new FillRate({ metrics, log, now: () => now, minSample: opts.minSample ?? 20 });
  const gauge = async () => (await metrics.fillRate.get()).values[0]?.value;
  const decided = async () => (await metrics.fillRateDecided.get()).values[0]?.value;
  return { rate, lines, gauge, decided, advance: (ms: number) => (now += ms) };
}

const warnings = (lines: { level: number; msg: string }[]) => lines.filter((l) => l.level === 40);

describe("FillRate", () => {
  it("reports no rate before any swap is decided: the gauge has no sample (no data; it was 1, issue 61) over 0 decided", async () => {
    const { rate, gauge, decided } = setUp();
    expect(rate.snapshot().ratio).toBeUndefined();
    // No data: no sample at all (not 1, not 0, not NaN).
    expect(await gauge()).toBeUndefined();
    expect(await decided()).toBe(0);
    rate.settle(rate.recordDecision("accepted")!, false);
    expect(await decided()).toBe(1);
  });

  it("drops the gauge's sample again once the hour holds no decided swap (no data, not the last rate)", async () => {
    const { rate, gauge, advance } = setUp();
    rate.settle(rate.recordDecision("accepted")!, false);
    expect(await gauge()).toBe(0);
    advance(2 * 60 * 60_000);
    rate.report();
    expect(await gauge()).toBeUndefined();
  });

  it("counts an accepted swap only once its fill has settled, landed or not", async () => {
    const { rate, gauge } = setUp();
    const landed = rate.recordDecision("accepted");
    const lost = rate.recordDecision("accepted");
    expect(rate.snapshot()).toMatchObject({ counted: 2, pending: 2, decided: 0, ratio: undefined });
    rate.settle(landed!, true);
    expect(rate.snapshot()).toMatchObject({ decided: 1, landed: 1, ratio: 1 });
    rate.settle(lost!, false);
    expect(rate.snapshot()).toMatchObject({ decided: 2, landed: 1, ratio: 0.5 });
    expect(await gauge()).toBe(0.5);
  });

  it("leaves honest rejections out and counts every other rejection against the rate", () => {
    const { rate } = setUp();
    rate.settle(rate.recordDecision("accepted")!, true);
    rate.recordDecision("honestRejection");
    rate.recordDecision("honestRejection");
    rate.recordDecision("rejected");
    expect(rate.snapshot()).toMatchObject({ counted: 2, landed: 1, ratio: 0.5 });
  });

  it("forgets requests older than one hour", () => {
    const { rate, advance } = setUp();
    rate.recordDecision("rejected");
    advance(30 * 60_000);
    rate.settle(rate.recordDecision("accepted")!, true);
    expect(rate.snapshot().ratio).toBe(0.5);
    advance(31 * 60_000);
    expect(rate.snapshot()).toMatchObject({ counted: 1, ratio: 1 });
  });

  it("settles a fill whose request already left the window without touching the current one", () => {
    const { rate, advance } = setUp();
    const old = rate.recordDecision("accepted")!;
    advance(61 * 60_000);
    rate.recordDecision("rejected");
    rate.settle(old, true);
    expect(rate.snapshot()).toMatchObject({ counted: 1, landed: 0, ratio: 0 });
  });

  it("warns when the rate drops below 95% over enough requests, at most once a minute", () => {
    const { rate, lines, advance } = setUp({ minSample: 20 });
    for (let i = 0; i < 19; i++) rate.settle(rate.recordDecision("accepted")!, true);
    rate.recordDecision("rejected");
    expect(rate.snapshot().ratio).toBe(0.95);
    expect(warnings(lines)).toHaveLength(0);
    rate.recordDecision("rejected");
    expect(warnings(lines)).toHaveLength(1);
    expect(warnings(lines)[0]?.msg).toMatch(/below the operator's 95% line/);
    rate.recordDecision("rejected");
    expect(warnings(lines)).toHaveLength(1);
    advance(61_000);
    rate.recordDecision("rejected");
    expect(warnings(lines)).toHaveLength(2);
  });

  it("does not warn on a small sample", () => {
    const { rate, lines } = setUp({ minSample: 20 });
    for (let i = 0; i < 5; i++) rate.recordDecision("rejected");
    expect(rate.snapshot().ratio).toBe(0);
    expect(warnings(lines)).toHaveLength(0);
  });

  it("logs the rate on report()", () => {
    const { rate, lines } = setUp();
    rate.settle(rate.recordDecision("accepted")!, true);
    rate.report();
    expect(lines.at(-1)).toMatchObject({ msg: "fill rate (rolling 1 h)", fillRate: 1 });
  });
});

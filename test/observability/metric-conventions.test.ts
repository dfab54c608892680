/**
 * Finding 8 of issue 47, the metrics: Prometheus' conventions on a freshly started service's /metrics
 * (the operations listener of a service composed as `npm start` composes it): no sample is NaN
 * (`rfq_fill_rate_1h` was NaN until the first swap), no gauge is named `_total` (a counter suffix),
 * and the counters whose labels are a closed set are present at 0 before their first event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { REJECTION_REASONS } from "../../src/contract/swap.ts";
import { QUOTE_DECLINE_CODES } from "../../src/refusal/codes.ts";
import { listen } from "../support/harness.ts";
import { testService } from "../support/service.ts";

let service: Service;
let text: string;

beforeAll(async () => {
  service = await testService();
  const ops = await listen(service.opsApp);
  try {
    text = await (await ops.fetch("/metrics", {})).text();
  } finally {
    await ops.close();
  }
}, 60_000);
afterAll(async () => {
  await service?.close();
});

const types = () =>
  [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1] as string, type: m[2] as string }));

describe("finding 8: /metrics follows Prometheus' conventions from the first scrape", () => {
  it("has no NaN sample; the fill rate has no sample (no data, issue 61: it was 1) over 0 decided swaps", () => {
    expect(text.split("\n").filter((l) => !l.startsWith("#") && /\sNaN$/.test(l))).toEqual([]);
    expect(text).toMatch(/^# TYPE rfq_fill_rate_1h gauge$/m);
    expect(text).not.toMatch(/^rfq_fill_rate_1h[ {]/m);
    expect(text).toMatch(/\nrfq_fill_rate_decided_1h 0\n/);
  });

  it("names no gauge with the counter suffix _total", () => {
    expect(types().filter((t) => t.type === "gauge" && t.name.endsWith("_total"))).toEqual([]);
  });

  it("shows the fill outcomes and ledger write errors at 0 before any fill", () => {
    for (const outcome of ["landed", "failed", "expired"])
      expect(text).toContain(`\nrfq_fills_total{outcome="${outcome}"} 0\n`);
    expect(text).toMatch(/\nrfq_ledger_write_errors_total 0\n/);
  });

  it("shows rfq_swaps_total at 0 for every state and contract reason before any swap", () => {
    const series = [...text.matchAll(/^rfq_swaps_total\{(.*)\} 0$/gm)].map((m) => m[1]);
    expect(series.sort()).toEqual(
      [
        'state="accepted",reason="none"',
        'state="rejected",reason="none"',
        ...REJECTION_REASONS.map((r) => `state="rejectedWithReason",reason="${r}"`),
      ].sort(),
    );
  });

  it("shows rfq_no_quote_total at 0 for each reason a quote can be declined with, before any quote", () => {
    const reasons = [...text.matchAll(/^rfq_no_quote_total\{reason="(\w+)"\} 0$/gm)].map((m) => m[1]);
    // From the book, the inventory, the issuance rules, the toxic-flow controls and the route itself.
    for (const r of [
      "PRICE_STALE",
      "INVENTORY_INSUFFICIENT",
      "ISSUANCE_CAP_EXCEEDED",
      "TAKER_DENIED",
      "DEADLINE",
      "QUOTE_STORE_FULL",
    ])
      expect(reasons).toContain(r);
    expect(reasons.sort()).toEqual([...QUOTE_DECLINE_CODES].sort());
  });
});

/**
 * The Grafana dashboard and the alert rules in deploy/monitoring/ name only metrics the webhook
 * exports: a real webhook process (production shape: Redis, the chain over JSON-RPC) is started and
 * its /metrics read; every metric any panel, variable or rule names must be declared there
 * (histogram series `_bucket`, `_sum`, `_count` by their family). The dashboard is also checked against
 * a zod schema of the Grafana fields it uses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultStack, faultStack } from "../faults/stack.ts";
import {
  alertRules,
  type Dashboard,
  dashboardExpressions,
  dashboardJson,
  dashboardSchema,
  family,
  metricNames,
} from "./promql.ts";

/** Series Prometheus makes itself, not the webhook: `up` (did the scrape answer). */
const PROMETHEUS_OWN = new Set(["up"]);

describe("metricNames (what an expression selects)", () => {
  it("finds the metrics and leaves out functions, labels, keywords, strings, ranges and variables", () => {
    expect(
      metricNames(
        'sum by (job, instance) (increase(rfq_quote_duration_seconds_count{outcome="quoted"}[5m]) or 0 * rfq_build_info) == 0 unless on (job, instance) (rfq_paused == 1)',
      ).sort(),
    ).toEqual(["rfq_build_info", "rfq_paused", "rfq_quote_duration_seconds_count"]);
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (outcome, le) (rate(rfq_quote_duration_seconds_bucket{instance=~"$instance"}[$__rate_interval])))',
      ),
    ).toEqual(["rfq_quote_duration_seconds_bucket"]);
    expect(metricNames("rfq_maker_sol_lamports < 2 * rfq_maker_sol_floor_lamports / 1e9")).toEqual([
      "rfq_maker_sol_lamports",
      "rfq_maker_sol_floor_lamports",
    ]);
    expect(metricNames("label_values(rfq_build_info, instance)")).toEqual(["rfq_build_info"]);
    expect(metricNames('rfq_price_max_age_seconds{pair="a"} < +Inf')).toEqual(["rfq_price_max_age_seconds"]);
    expect(family("rfq_markout_bps_sum")).toBe("rfq_markout_bps");
  });
});

describe("the Grafana dashboard (deploy/monitoring/grafana/dashboards/rfq-maker.json)", () => {
  it("loads and passes the schema of the Grafana fields it uses; ids unique, no two panels overlap", () => {
    const d = dashboardSchema.parse(dashboardJson());
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of d.panels) {
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          const cell = `${x},${y}`;
          expect(cells.has(cell), `panel "${p.title}" overlaps another at ${cell}`).toBe(false);
          cells.add(cell);
        }
    }
  });

  it("charts what the issue asks for: quotes by outcome, budget left, no-quote reasons, swaps, fill rate against 95%, fees, markouts, inventory and SOL", () => {
    const d = dashboardSchema.parse(dashboardJson());
    const named = new Set(dashboardExpressions(d).flatMap(metricNames).map(family));
    for (const m of [
      "rfq_quote_duration_seconds",
      "rfq_quote_budget_left_seconds",
      "rfq_no_quote_total",
      "rfq_swaps_total",
      "rfq_fill_rate_1h",
      "rfq_operator_fee_owed_units_total",
      "rfq_markout_bps",
      "rfq_inventory_balance_units",
      "rfq_inventory_floor_units",
      "rfq_maker_sol_lamports",
      "rfq_maker_sol_floor_lamports",
      "rfq_redis_up",
      "rfq_rpc_up",
    ])
      expect(named, m).toContain(m);
    const fillRate = d.panels.find(
      (p) => p.type !== "row" && p.targets.some((t) => /rfq_fill_rate_1h/.test(t.expr)),
    );
    const steps = fillRate?.type === "row" ? [] : (fillRate?.fieldConfig.defaults.thresholds?.steps ?? []);
    expect(steps.map((s) => s.value)).toContain(0.95);
  });
});

describe("metric names against a running webhook's /metrics", () => {
  let stack: FaultStack;
  let declared: Set<string>;
  beforeAll(async () => {
    stack = await faultStack();
    const text = await (await fetch(`${stack.opsUrl}/metrics`)).text();
    declared = new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1] as string));
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("declares every metric the dashboard's panels and variables name", () => {
    const d: Dashboard = dashboardSchema.parse(dashboardJson());
    const names = [...new Set(dashboardExpressions(d).flatMap(metricNames))];
    expect(names.length).toBeGreaterThan(20);
    const missing = names.filter((n) => !declared.has(family(n)) && !declared.has(n));
    expect(missing).toEqual([]);
  });

  it("declares every metric the alert rules name (Prometheus' own `up` aside)", () => {
    const names = [...new Set(alertRules().flatMap((r) => metricNames(r.expr)))];
    expect(names).toContain("rfq_rpc_up");
    const missing = names.filter(
      (n) => !PROMETHEUS_OWN.has(n) && !declared.has(family(n)) && !declared.has(n),
    );
    expect(missing).toEqual([]);
  });

  it("has a sample for the RPC and Redis gauges the 'down' alerts read (1 while both answer)", async () => {
    const text = await (await fetch(`${stack.opsUrl}/metrics`)).text();
    expect(text).toMatch(/^rfq_rpc_up 1$/m);
    expect(text).toMatch(/^rfq_redis_up\{client="main"\} 1$/m);
  });
});

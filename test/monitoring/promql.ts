/**
 * The monitoring files (deploy/monitoring/) as the tests read them: the alert rules, the Grafana
 * dashboard under a zod schema of the fields it uses, and the metric names a PromQL expression names.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { REPO_ROOT } from "../../tooling/processes.ts";

export const MONITORING = join(REPO_ROOT, "deploy/monitoring");
export const RULES_FILE = join(MONITORING, "prometheus/alerts.yml");
export const RULE_TESTS_FILE = join(MONITORING, "prometheus/alerts.test.yml");
export const DASHBOARD_FILE = join(MONITORING, "grafana/dashboards/rfq-maker.json");

const ruleSchema = z.strictObject({
  alert: z.string().regex(/^Rfq[A-Za-z]+$/),
  expr: z.string().min(1),
  for: z.string().regex(/^\d+[smh]$/),
  labels: z.strictObject({ severity: z.enum(["warning", "critical"]) }),
  annotations: z.strictObject({
    summary: z.string().min(1),
    description: z.string().min(1),
    runbook_url: z
      .string()
      .regex(/^\{\{ \$externalLabels\.runbook_base_url \}\}\/docs\/runbook\.md#[a-z0-9-]+$/),
  }),
});
const rulesSchema = z.strictObject({
  groups: z.array(z.strictObject({ name: z.string(), rules: z.array(ruleSchema).min(1) })).min(1),
});
export type AlertRule = z.infer<typeof ruleSchema>;

export function alertRules(): AlertRule[] {
  return rulesSchema.parse(parse(readFileSync(RULES_FILE, "utf8"))).groups.flatMap((g) => g.rules);
}

const datasource = z.strictObject({ type: z.literal("prometheus"), uid: z.literal("rfq-prometheus") });
const gridPos = z
  .strictObject({
    x: z.number().int().min(0).max(23),
    y: z.number().int().min(0),
    w: z.number().int().min(1).max(24),
    h: z.number().int().min(1),
  })
  .refine((g) => g.x + g.w <= 24, "must fit in the 24 columns");
const target = z.strictObject({
  refId: z.string().regex(/^[A-Z]$/),
  datasource,
  expr: z.string().min(1),
  legendFormat: z.string(),
});
const threshold = z.strictObject({ color: z.string(), value: z.number().nullable() });
const fieldConfig = z.strictObject({
  defaults: z.strictObject({
    unit: z.string().optional(),
    min: z.number().optional(),
    max: z.number().optional(),
    thresholds: z
      .strictObject({ mode: z.literal("absolute"), steps: z.array(threshold).min(1) })
      .refine((t) => t.steps[0]?.value === null, "the first step is the base (value null)")
      .optional(),
    custom: z.strictObject({ thresholdsStyle: z.strictObject({ mode: z.literal("line") }) }).optional(),
  }),
  overrides: z.array(z.unknown()),
});
const rowPanel = z.strictObject({
  id: z.number().int().positive(),
  type: z.literal("row"),
  title: z.string().min(1),
  collapsed: z.literal(false),
  gridPos,
  panels: z.array(z.never()),
});
const dataPanel = z
  .strictObject({
    id: z.number().int().positive(),
    type: z.enum(["timeseries", "stat", "table"]),
    title: z.string().min(1),
    description: z.string().optional(),
    datasource,
    gridPos,
    targets: z.array(target).min(1),
    fieldConfig,
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((p) => new Set(p.targets.map((t) => t.refId)).size === p.targets.length, "refIds must differ");
export const dashboardSchema = z.strictObject({
  uid: z.string().min(1),
  title: z.string().min(1),
  description: z.string(),
  tags: z.array(z.string()),
  timezone: z.string(),
  schemaVersion: z.number().int().min(30),
  version: z.number().int(),
  editable: z.boolean(),
  refresh: z.string(),
  time: z.strictObject({ from: z.string(), to: z.string() }),
  templating: z.strictObject({
    list: z.array(
      z.strictObject({
        name: z.string(),
        type: z.literal("query"),
        label: z.string(),
        datasource,
        query: z.strictObject({ query: z.string(), refId: z.string() }),
        definition: z.string(),
        includeAll: z.boolean(),
        multi: z.boolean(),
        allValue: z.string(),
        current: z.strictObject({ text: z.string(), value: z.string() }),
        refresh: z.number().int(),
      }),
    ),
  }),
  annotations: z.strictObject({ list: z.array(z.unknown()) }),
  panels: z.array(z.union([rowPanel, dataPanel])).min(1),
});
export type Dashboard = z.infer<typeof dashboardSchema>;

export function dashboardJson(): unknown {
  return JSON.parse(readFileSync(DASHBOARD_FILE, "utf8"));
}

/** Every PromQL expression of the dashboard: panel targets and template variable queries. */
export function dashboardExpressions(d: Dashboard): string[] {
  return [
    ...d.panels.flatMap((p) => (p.type === "row" ? [] : p.targets.map((t) => t.expr))),
    ...d.templating.list.map((v) => v.query.query),
  ];
}

const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "Inf",
  "NaN",
  "inf",
  "nan",
]);

/**
 * The metric names an expression selects. Strings, label matchers, ranges, the label lists of
 * by/without/on/ignoring/group_*, Grafana's $variables and numbers are dropped; an identifier followed
 * by "(" is a function or an aggregation; what is left of the identifiers are metric names.
 * `label_values(metric, label)` (a Grafana variable query) names `metric`.
 */
export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/label_values\(\s*([a-zA-Z_:][\w:]*)\s*,\s*\w+\s*\)/g, " $1 ")
    .replace(/"(?:[^"\\]|\\.)*"/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\$\w+/g, " ")
    .replace(/(?<![\w.])[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi, " ");
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][\w:]*(\s*\()?/g)) {
    const [word, call] = [m[0].replace(/\s*\($/, ""), m[1]];
    if (call || KEYWORDS.has(word)) continue;
    names.add(word);
  }
  return [...names];
}

/** A histogram's or summary's series name back to its family (the name /metrics declares). */
export function family(name: string): string {
  return name.replace(/_(?:bucket|sum|count)$/, "");
}

/**
 * The alert rules (deploy/monitoring/prometheus/alerts.yml): `promtool check rules` and the rule unit
 * tests `promtool test rules alerts.test.yml` (each threshold on both sides: fill rate 0.94 fires the
 * critical alert, 0.96 only the warning, nothing with no swap decided or under the minimum volume of 20 decided swaps; ...), and every rule's runbook anchor exists.
 *
 * promtool is Debian's `prometheus` package. Without it on the PATH these tests are skipped, except
 * when REQUIRE_PROMTOOL=1 (CI sets it in .ci/run, after installing the package): then they fail, so CI
 * can never pass them by not running them.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { alertRules, MONITORING, RULE_TESTS_FILE, RULES_FILE } from "./promql.ts";

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const available = promtool.status === 0;
const required = process.env.REQUIRE_PROMTOOL === "1";

function run(args: string[]): { status: number | null; out: string } {
  const r = spawnSync("promtool", args, { encoding: "utf8", cwd: join(MONITORING, "prometheus") });
  return { status: r.status, out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

describe.skipIf(!available && !required)(
  "promtool (REQUIRE_PROMTOOL=1 makes a missing promtool fail)",
  () => {
    it("promtool is on the PATH", () => {
      expect(available, "promtool not found: sudo apt-get install -y prometheus").toBe(true);
    });

    it("`promtool check rules` accepts alerts.yml", () => {
      const r = run(["check", "rules", RULES_FILE]);
      expect(r.out).toMatch(/SUCCESS: \d+ rules found/);
      expect(r.status).toBe(0);
    });

    it("`promtool check config` accepts the monitoring profile's prometheus.yml (rules included)", () => {
      const r = run(["check", "config", "prometheus.yml"]);
      expect(r.out).toMatch(/SUCCESS/);
      expect(r.status).toBe(0);
    });

    it("`promtool test rules` passes: the alerts fire on the wrong side of each threshold and not on the right one", () => {
      const r = run(["test", "rules", RULE_TESTS_FILE]);
      expect(r.out).toMatch(/SUCCESS/);
      expect(r.status).toBe(0);
    });
  },
);

/** GitHub's anchor for a markdown heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");
}

describe("docs/runbook.md", () => {
  const runbook = readFileSync(join(REPO_ROOT, "docs/runbook.md"), "utf8");
  const anchors = new Set([...runbook.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] as string)));

  it("links every alert absolutely: the runbook_base_url external label, which Prometheus fills from RUNBOOK_BASE_URL in compose", () => {
    const prom = readFileSync(join(REPO_ROOT, "deploy/monitoring/prometheus/prometheus.yml"), "utf8");
    expect(prom).toMatch(/^ {4}runbook_base_url: \$\{RUNBOOK_BASE_URL\}$/m);
    const compose = readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8");
    expect(compose).toContain("--enable-feature=expand-external-labels");
    expect(compose).toMatch(/RUNBOOK_BASE_URL: \$\{RUNBOOK_BASE_URL:-\}/);
    for (const r of alertRules())
      expect(r.annotations.runbook_url, r.alert).toMatch(
        /^\{\{ \$externalLabels\.runbook_base_url \}\}\/docs\/runbook\.md#/,
      );
  });

  it("has the section every alert's runbook_url points at", () => {
    const rules = alertRules();
    expect(rules.length).toBeGreaterThanOrEqual(10);
    const missing = rules
      .map((r) => ({ alert: r.alert, anchor: r.annotations.runbook_url.split("#")[1] as string }))
      .filter((r) => !anchors.has(r.anchor));
    expect(missing).toEqual([]);
  });

  it("names each alert in its section, and covers Redis, RPC, suspension, stale prices, inventory/SOL and key compromise", () => {
    for (const a of [
      "redis-down",
      "rpc-down",
      "suspended-by-the-operator-for-fill-rate",
      "prices-stale",
      "inventory-or-sol-low",
      "key-compromise",
    ])
      expect(anchors, a).toContain(a);
    for (const r of alertRules()) expect(runbook, r.alert).toContain(`\`${r.alert}\``);
  });

  it("links only to its own sections", () => {
    const links = [...runbook.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThan(3);
    expect(links.filter((l) => !anchors.has(l))).toEqual([]);
  });

  it("uses only `npm run` commands package.json has", () => {
    const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: object })
      .scripts;
    const named = [...new Set([...runbook.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1] as string))];
    expect(named).toEqual(expect.arrayContaining(["doctor", "report"]));
    expect(named.filter((n) => !Object.hasOwn(scripts, n))).toEqual([]);
  });
});

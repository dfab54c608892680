/**
 * Issue 61, finding 6: the monitoring profile's alerts went to no Alertmanager, and the monitoring
 * README's command left out variables compose requires. No Docker engine here: docker-compose.yml and
 * the Prometheus and Alertmanager files are parsed (`yaml`) and their routing checked; `amtool
 * check-config` (Debian's `prometheus-alertmanager`) validates alertmanager.yml as Alertmanager reads it.
 * Without amtool on the PATH that check is skipped, except when REQUIRE_PROMTOOL=1 (CI installs both).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO_ROOT } from "../../tooling/processes.ts";

const read = (p: string) => readFileSync(join(REPO_ROOT, p), "utf8");
const AM_FILE = "deploy/monitoring/alertmanager/alertmanager.yml";

interface Route {
  receiver?: string;
  matchers?: string[];
  routes?: Route[];
}
interface AmConfig {
  route: Route;
  receivers: ({ name: string } & Record<string, unknown>)[];
}
const compose = parse(read("docker-compose.yml")) as {
  services: Record<
    string,
    { profiles?: string[]; volumes?: string[]; command?: string[]; depends_on?: string[] }
  >;
};
const prometheus = parse(read("deploy/monitoring/prometheus/prometheus.yml")) as {
  alerting?: { alertmanagers?: { static_configs?: { targets?: string[] }[] }[] };
};
const am = parse(read(AM_FILE)) as AmConfig;

function receiversOf(route: Route): string[] {
  return [...(route.receiver ? [route.receiver] : []), ...(route.routes ?? []).flatMap(receiversOf)];
}

describe("finding 6: the monitoring profile routes alerts to an Alertmanager", () => {
  it("compose runs Alertmanager in the monitoring profile with deploy/monitoring/alertmanager/, and Prometheus waits for it", () => {
    const svc = compose.services.alertmanager;
    expect(svc?.profiles).toEqual(["monitoring"]);
    expect(svc?.volumes).toContain("./deploy/monitoring/alertmanager:/etc/alertmanager:ro");
    expect(svc?.command).toContain("--config.file=/etc/alertmanager/alertmanager.yml");
    expect(compose.services.prometheus?.depends_on).toContain("alertmanager");
  });

  it("Prometheus sends its alerts to that Alertmanager (alertmanager:9093)", () => {
    const targets = (prometheus.alerting?.alertmanagers ?? []).flatMap((a) =>
      (a.static_configs ?? []).flatMap((s) => s.targets ?? []),
    );
    expect(targets).toEqual(["alertmanager:9093"]);
  });

  it("every route ends at a defined receiver, and the maker's receiver notifies somewhere (a config to fill in, not a null receiver)", () => {
    const names = am.receivers.map((r) => r.name);
    expect(am.route.receiver).toBe("maker");
    for (const r of receiversOf(am.route)) expect(names, r).toContain(r);
    const maker = am.receivers.find((r) => r.name === "maker") ?? {};
    const notifiers = Object.keys(maker).filter((k) => k.endsWith("_configs"));
    expect(notifiers.length).toBeGreaterThan(0);
    // Critical alerts have their own route.
    expect((am.route.routes ?? []).some((r) => r.matchers?.includes('severity="critical"'))).toBe(true);
  });

  const amtool = spawnSync("amtool", ["--version"], { encoding: "utf8" });
  it.skipIf(amtool.status !== 0 && process.env.REQUIRE_PROMTOOL !== "1")(
    "`amtool check-config` accepts alertmanager.yml (REQUIRE_PROMTOOL=1 makes a missing amtool fail)",
    () => {
      const r = spawnSync("amtool", ["check-config", join(REPO_ROOT, AM_FILE)], { encoding: "utf8" });
      expect(`${r.stdout}${r.stderr}${r.error ?? ""}`).toMatch(/SUCCESS/);
      expect(r.status).toBe(0);
    },
  );
});

describe("finding 6: the monitoring README's command names every variable compose requires", () => {
  it("the `docker compose --profile monitoring up` command sets every variable docker-compose.yml requires (`:?`)", () => {
    const yamlLines = read("docker-compose.yml")
      .split("\n")
      .filter((l) => !l.trim().startsWith("#"))
      .join("\n");
    const required = [...yamlLines.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1] as string);
    expect(required).toEqual(expect.arrayContaining(["API_KEY", "CONFIG_FILE", "ADMIN_API_KEY"]));
    const block = read("deploy/monitoring/README.md")
      .split("```")
      .find((b) => b.includes("docker compose --profile monitoring up"));
    expect(block, "a code block with the command").toBeDefined();
    for (const name of new Set(required)) expect(block).toMatch(new RegExp(`(^|\\s)${name}=`));
  });
});

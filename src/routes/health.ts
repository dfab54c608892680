/**
 * GET /health (the process is alive) and GET /ready (every port answers and no named condition blocks
 * it; 503 naming the failing probe or condition, or 503 `{"status":"draining"}` at once while the
 * process shuts down, so a load balancer stops sending it new work).
 */
import type { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import type { Conditions } from "../observability/conditions.ts";

/** A named reachability probe; false or a throw means not ready. */
export type ReadinessProbe = [name: string, probe: () => Promise<boolean>];

const PROBE_TIMEOUT_MS = 2_000;

async function runProbe(probe: () => Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([probe().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `allowed`: the production allowances in force (ALLOW_NO_API_KEY, ...), listed on /ready as
 * `allowedUnsafe` so that a load balancer's or an engineer's look at readiness shows them.
 * `draining`: true once the process is shutting down; /ready then answers 503 at once.
 * `mode`: paper, production or acceptance, on /ready so that nobody mistakes one for another.
 * `conditions`: the named conditions held (src/observability/conditions.ts), listed as `conditions`
 * (name -> detail); one that `blocksReady` answers 503, listed under `blocking` too.
 */
export function registerHealthRoutes(
  app: Hono<AppEnv>,
  probes: readonly ReadinessProbe[],
  allowed: readonly string[] = [],
  draining: () => boolean = () => false,
  mode?: string,
  conditions?: Conditions,
): void {
  app.get("/health", (c) => c.json({ status: "ok" }));
  app.get("/ready", async (c) => {
    if (draining()) return c.json({ status: "draining", checks: {} }, 503);
    const results = await Promise.all(probes.map(async ([name, p]) => [name, await runProbe(p)] as const));
    const checks = Object.fromEntries(results);
    conditions?.refresh();
    const held = conditions?.list() ?? [];
    const blocking = held.filter((h) => h.blocksReady).map((h) => h.name);
    const ready = results.every(([, ok]) => ok) && blocking.length === 0;
    return c.json(
      {
        status: ready ? "ready" : "not ready",
        ...(mode ? { mode } : {}),
        checks,
        ...(held.length ? { conditions: Object.fromEntries(held.map((h) => [h.name, h.detail])) } : {}),
        ...(blocking.length ? { blocking } : {}),
        ...(allowed.length ? { allowedUnsafe: allowed } : {}),
      },
      ready ? 200 : 503,
    );
  });
}

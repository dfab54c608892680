/** GET /metrics: Prometheus text exposition. */
import type { Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import type { Metrics } from "../observability/metrics.ts";

export function registerMetricsRoute(app: Hono<AppEnv>, metrics: Metrics): void {
  app.get("/metrics", async (c) => {
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { "content-type": metrics.registry.contentType });
  });
}

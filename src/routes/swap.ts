/** POST /swap: parse, then hand to the SwapHandler (the executor, or acceptance mode's canned answers). */
import type { Hono } from "hono";
import { REJECTION_REASONS, swapRequestSchema } from "../contract/swap.ts";
import { parseJsonBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { SwapHandler } from "../swap/handler.ts";

export function registerSwapRoute(app: Hono<AppEnv>, handler: SwapHandler, metrics: Metrics): void {
  // Every state and reason the answer can carry, at 0 before the first swap.
  for (const state of ["accepted", "rejected"]) metrics.swaps.inc({ state, reason: "none" }, 0);
  for (const reason of REJECTION_REASONS) metrics.swaps.inc({ state: "rejectedWithReason", reason }, 0);
  app.post("/swap", async (c) => {
    const started = performance.now();
    const req = await parseJsonBody(c, swapRequestSchema);
    const log = c.get("log").child({ requestId: req.requestId, quoteId: req.quoteId });
    c.set("log", log);
    const res = await handler.execute(req, log);
    const state = typeof res.state === "string" ? res.state : "rejectedWithReason";
    // Never an empty label value: answers without a contract reason count under "none".
    const reason = typeof res.state === "string" ? "none" : res.state.rejectedWithReason;
    metrics.swaps.inc({ state, reason });
    metrics.swapLatency.observe({ state }, (performance.now() - started) / 1000);
    // Every /swap is logged at info (a handful a minute), tying it to its quote through the child's ids.
    log.info(
      { state: res.state, rejectionReason: res.rejectionReason, txSignature: res.txSignature },
      "swap answered",
    );
    return c.json(res);
  });
}

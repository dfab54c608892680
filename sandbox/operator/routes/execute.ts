/** POST /ultra/v1/execute and POST /swap/v2/execute: the same RFQ execution under both generations' paths. */
import type { Hono } from "hono";
import { z } from "zod";
import { type ExecuteDeps, executeOrder } from "../execute.ts";
import { ExecuteCode } from "../wire.ts";

const executeBodySchema = z.object({
  signedTransaction: z.string().min(1).max(4096),
  requestId: z.string().min(1).max(128),
  lastValidBlockHeight: z.union([z.string(), z.number()]).optional(),
});

export function registerExecuteRoutes(app: Hono, deps: ExecuteDeps): void {
  const handler = async (c: import("hono").Context) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json(
        { error: "body: must be a JSON object", code: ExecuteCode.INVALID_SIGNED_TRANSACTION },
        400,
      );
    }
    const parsed = executeBodySchema.safeParse(raw);
    if (!parsed.success) {
      const error = parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ");
      return c.json({ error, code: ExecuteCode.INVALID_SIGNED_TRANSACTION }, 400);
    }
    const answer = await executeOrder(deps, parsed.data);
    return c.json(answer.body, answer.status);
  };
  app.post("/ultra/v1/execute", handler);
  app.post("/swap/v2/execute", handler);
}

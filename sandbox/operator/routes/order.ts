/**
 * GET /ultra/v1/order (seed: "GET {base_url}/ultra/v1/order"); 400/500 answer `{error}`.
 *
 * Query parameters the simulator does not model (`slippageBps`, `webhookId`, `excludeDexes`,
 * `broadcastFeeType`, `priorityFeeLamports`, `asLegacyTransaction`, ...) are accepted and ignored, as
 * the operator's own clients send them. Router names: the seed's `router_1`..`router_4` and the public
 * clients' `metis` (aggregator) and `jupiterz` (RFQ) are both understood in `excludeRouters`.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { base58Pubkey, positiveU64 } from "../../../src/contract/common.ts";
import { type OrderDeps, placeOrder } from "../order.ts";

const orderQuerySchema = z
  .object({
    inputMint: base58Pubkey,
    outputMint: base58Pubkey,
    amount: positiveU64,
    taker: base58Pubkey.optional(),
    swapMode: z.enum(["ExactIn", "ExactOut"]).default("ExactIn"),
    receiver: base58Pubkey.optional(),
    payer: base58Pubkey.optional(),
    wrapAndUnwrapSol: z.enum(["true", "false"]).optional(),
    useWsol: z.enum(["true", "false"]).optional(),
    excludeRouters: z.string().optional(),
    mode: z.string().max(32).optional(),
  })
  .superRefine((q, ctx) => {
    if (q.inputMint === q.outputMint)
      ctx.addIssue({ code: "custom", path: ["outputMint"], message: "must differ from inputMint" });
    // Coming changes the simulator does not build (yet): say so rather than build something else.
    if (q.receiver && q.receiver !== q.taker) {
      ctx.addIssue({
        code: "custom",
        path: ["receiver"],
        message: "a receiver other than the taker is not simulated",
      });
    }
    if (q.payer)
      ctx.addIssue({ code: "custom", path: ["payer"], message: "a separate payer is not simulated" });
  });

/** The RFQ router's names: the seed's and the public clients' spellings. */
const RFQ_ROUTER_NAMES: ReadonlySet<string> = new Set(["router_2", "jupiterz"]);

export function registerOrderRoute(app: Hono, deps: OrderDeps): void {
  app.get("/ultra/v1/order", async (c) => {
    const parsed = orderQuerySchema.safeParse(c.req.query());
    if (!parsed.success) {
      const error = parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ");
      return c.json({ error }, 400);
    }
    const q = parsed.data;
    const excluded = (q.excludeRouters ?? "").split(",").map((r) => r.trim().toLowerCase());
    if (excluded.some((r) => RFQ_ROUTER_NAMES.has(r))) {
      return c.json(
        { error: "Failed to get quotes (router_2 / jupiterz, the only simulated router, is excluded)" },
        400,
      );
    }
    const answer = await placeOrder(deps, {
      inputMint: q.inputMint,
      outputMint: q.outputMint,
      amount: BigInt(q.amount),
      swapMode: q.swapMode,
      ...(q.taker ? { taker: q.taker } : {}),
      ...(q.wrapAndUnwrapSol === "false" || q.useWsol === "true" ? { isWsol: true } : {}),
      ...(q.mode ? { mode: q.mode } : {}),
    });
    return c.json(answer.body, answer.status);
  });
}

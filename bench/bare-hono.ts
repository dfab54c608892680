/**
 * The quote benchmark's baseline: a bare Hono endpoint on @hono/node-server that reads the JSON body
 * and answers a fixed quote-shaped JSON, with none of the webhook's work (auth, validation, pricing,
 * store). The webhook's throughput is reported as a ratio to this.
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const answer = {
  requestId: "629bddf3-0038-43a6-8956-f5433d6b1191",
  quoteId: "59db3e19-c7b0-4753-a8aa-206701004498",
  tokenIn: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  tokenOut: "So11111111111111111111111111111111111111112",
  quoteType: "exactIn",
  protocol: "v1",
  amountIn: "1000000",
  amountOut: "5545077",
  maker: "7wCiid5CRcyHKsW9UTSf78jPq2vpHv6k4MDJiwkVQG2n",
  prioritizationFeeToUse: 10000,
};

const app = new Hono();
app.get("/health", (c) => c.json({ status: "ok" }));
app.post("/quote", async (c) => {
  await c.req.json();
  return c.json(answer);
});
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 8099), hostname: "127.0.0.1" });

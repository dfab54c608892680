/**
 * No self-trade: a quote request whose taker is this maker's own wallet (its rebalancer buying through
 * the operator's order API) is answered 404 with its own reason, over a real socket, and counted under
 * its own label; the same request from another taker is quoted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { listen } from "../support/harness.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

let svc: Service;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  svc = await testService();
  server = await listen(svc.app);
});
afterAll(async () => {
  await server?.close();
  await svc?.close();
});

const post = (body: Record<string, unknown>) => fetch(`${server.url}/quote`, jsonPost(body));

describe("self-trade", () => {
  it("answers 404 SELF_TRADE to a quote whose taker is the maker's own wallet", async () => {
    const maker = svc.signer.publicKey.toBase58();
    const res = await post(quoteBody({ taker: maker }));
    expect(res.status).toBe(404);
    const body = (await res.json()) as { message: string };
    expect(body.message).toContain("is this maker's own wallet (no self-trade)");
    expect(body.message).toContain(maker);
    const metrics = await svc.metrics.registry.metrics();
    expect(metrics).toMatch(/rfq_no_quote_total\{reason="SELF_TRADE"\} 1/);
  });

  it("quotes the same request for any other taker", async () => {
    const res = await post(quoteBody({ taker: "5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9" }));
    expect(res.status).toBe(200);
  });
});

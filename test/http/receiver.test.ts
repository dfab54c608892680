/**
 * A quote whose `receiver` is not its taker cannot be filled as asked (the order-engine fill pays only
 * the taker's own output account), so it is answered 404 with the reason, over a real socket, and
 * counted under its own label; the same request with the receiver equal to the taker is quoted.
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
const TAKER = "5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9";
const OTHER = "FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B";

describe("receiver", () => {
  it("answers 404 RECEIVER_NOT_TAKER to a quote whose receiver is not its taker, and counts it", async () => {
    const res = await post(quoteBody({ taker: TAKER, receiver: OTHER }));
    expect(res.status).toBe(404);
    const body = (await res.json()) as { message: string };
    expect(body.message).toBe(
      `no quote: receiver ${OTHER} is not the taker ${TAKER}: a fill pays only its taker`,
    );
    const metrics = await svc.metrics.registry.metrics();
    expect(metrics).toMatch(/rfq_no_quote_total\{reason="RECEIVER_NOT_TAKER"\} 1\b/);
  });

  it("answers 404 to an indicative quote (no taker) that names a receiver", async () => {
    const res = await post(quoteBody({ receiver: OTHER }));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toContain("is not the taker (none given)");
  });

  it("quotes, echoing it, a receiver that is the taker", async () => {
    const res = await post(quoteBody({ taker: TAKER, receiver: TAKER }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { receiver: string }).receiver).toBe(TAKER);
  });
});

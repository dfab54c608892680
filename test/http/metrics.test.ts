import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { MINT } from "../support/config.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

let svc: Service;
beforeAll(async () => {
  svc = await testService();
});
afterAll(() => svc.close());

describe("GET /metrics", () => {
  it("counts quote latency by outcome and answers by status after real requests", async () => {
    await svc.app.request("/quote", jsonPost(quoteBody()));
    await svc.app.request("/quote", jsonPost(quoteBody({ amount: "0" })));
    await svc.app.request(
      "/quote",
      jsonPost(quoteBody({ tokenOut: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", tokenIn: MINT.USDC })),
    );
    const text = await (await svc.opsApp.request("/metrics")).text();
    expect(text).toMatch(/rfq_quote_duration_seconds_count\{outcome="quoted"\} 1/);
    expect(text).toMatch(/rfq_quote_duration_seconds_count\{outcome="bad_request"\} 1/);
    expect(text).toMatch(/rfq_quote_duration_seconds_count\{outcome="no_quote"\} 1/);
    expect(text).toMatch(/rfq_no_quote_total\{reason="TOKEN_NOT_SUPPORTED"\} 1/);
    expect(text).toMatch(/rfq_http_responses_total\{route="\/quote",status="200"\} 1/);
    expect(text).toMatch(/rfq_http_responses_total\{route="\/quote",status="400"\} 1/);
  });
});

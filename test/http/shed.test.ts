/**
 * Past capacity the quote route sheds before reading the body (src/http/shed.ts): the decision is a
 * pure function of the clock, the deadline and how long the quote has waited, tested here without
 * timing; the route is driven through the operator's x-request-start with margins of seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { shedDecision } from "../../src/http/shed.ts";
import { jsonPost, quoteBody, readJson } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

describe("shedDecision", () => {
  const base = {
    nowMs: 1_000_000,
    deadlineAtMs: 1_000_250,
    minBudgetMs: 15,
    queuedMs: 0,
    budgetMs: 250,
    shedShare: 0.5,
  };

  it("prices a quote with budget left that has not waited long", () => {
    expect(shedDecision(base)).toBeUndefined();
    expect(shedDecision({ ...base, queuedMs: 125 })).toBeUndefined();
  });

  it("sheds OVERLOADED once the quote has waited more than the share of its budget", () => {
    expect(shedDecision({ ...base, queuedMs: 125.5 })).toBe("OVERLOADED");
    expect(shedDecision({ ...base, queuedMs: 125.5, budgetMs: 2_000 })).toBeUndefined();
    expect(shedDecision({ ...base, queuedMs: 1_000.5, budgetMs: 2_000 })).toBe("OVERLOADED");
  });

  it("never sheds for the wait when the share is 0 (off)", () => {
    expect(shedDecision({ ...base, queuedMs: 200, shedShare: 0 })).toBeUndefined();
  });

  it("sheds DEADLINE when less than the minimum budget is left, before any other reason", () => {
    expect(shedDecision({ ...base, nowMs: 1_000_236 })).toBe("DEADLINE");
    expect(shedDecision({ ...base, nowMs: 1_000_236, queuedMs: 236 })).toBe("DEADLINE");
    expect(shedDecision({ ...base, nowMs: 1_000_235 })).toBeUndefined();
  });
});

describe("POST /quote past capacity (limits.shedAfterQueuedShare, default 0.6 of the budget)", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await testService();
  });
  afterAll(() => svc.close());

  const count = async (reason: string) =>
    (await svc.metrics.noQuotes.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  const sentAgo = (ms: number) => ({ "x-request-start": String(Date.now() - ms) });

  it("answers 404 OVERLOADED to a quote that waited 7 s of its 10 s budget, storing nothing, counted", async () => {
    const before = await count("OVERLOADED");
    const body = quoteBody();
    const res = await svc.app.request("/quote", jsonPost(body, sentAgo(7_000)));
    expect(res.status).toBe(404);
    expect((await readJson(res)).message).toMatch(/overloaded/);
    expect(await svc.store.get(body.quoteId as string)).toBeUndefined();
    expect((await count("OVERLOADED")) - before).toBe(1);
  });

  it("prices a quote the operator stamped just now (its clock a second ahead of ours)", async () => {
    const res = await svc.app.request("/quote", jsonPost(quoteBody(), sentAgo(-1_000)));
    expect(res.status).toBe(200);
  });

  it("sheds a quote whose budget is spent before reading its body (a body that is not JSON is not looked at)", async () => {
    const before = await count("DEADLINE");
    const res = await svc.app.request(
      "/quote",
      jsonPost("{not json", { ...sentAgo(5_000), "x-request-timeout": "5000" }),
    );
    expect(res.status).toBe(404);
    expect((await count("DEADLINE")) - before).toBe(1);
  });

  it("prices a quote that waited 4 s of its 10 s budget (under the share)", async () => {
    const res = await svc.app.request("/quote", jsonPost(quoteBody(), sentAgo(4_000)));
    expect(res.status).toBe(200);
  });

  it("never sheds for the wait with limits.shedAfterQueuedShare 0", async () => {
    const off = await testService({
      vary: (f) => ({ ...f, limits: { ...f.limits, shedAfterQueuedShare: 0 } }),
    });
    try {
      const res = await off.app.request("/quote", jsonPost(quoteBody(), sentAgo(7_000)));
      expect(res.status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

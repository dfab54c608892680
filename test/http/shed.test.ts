/**
 * Past capacity the quote route sheds before reading the body (src/http/shed.ts): the decision is a
 * pure function of the clock, the deadline and how long the quote has waited, tested here without
 * timing; the route is driven through the operator's x-request-start with margins of seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import {
  AFTER_ADMISSION_RESERVE,
  LAG_TICK_MS,
  LOOP_CROSSINGS,
  LoopLag,
  STANDING_WINDOW_MS,
  StandingQueue,
  shedDecision,
} from "../../src/http/shed.ts";
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

describe("StandingQueue: a standing queue halves the share, a passing stall does not", () => {
  /** An idle event loop: only the waits are under test here. */
  const noLag = () => 0;
  const SHARE = 0.6;
  /** Quotes every 10 ms from t0 for `ms`, each having waited `queuedMs` of a 250 ms budget. */
  const feed = (q: StandingQueue, t0: number, ms: number, queuedMs: (t: number) => number) => {
    let share = SHARE;
    for (let t = t0; t < t0 + ms; t += 10) share = q.shareFor(t, queuedMs(t), 250, SHARE);
    return share;
  };

  it("keeps the full share while quotes do not wait", () => {
    const q = new StandingQueue(noLag);
    expect(feed(q, 0, 1_000, () => 0)).toBe(SHARE);
    expect(q.standing).toBe(false);
  });

  it("halves the share once every quote of a whole window waited more than a tenth of its budget", () => {
    const q = new StandingQueue(noLag);
    feed(q, 0, STANDING_WINDOW_MS, () => 0);
    // A full window in which every quote waited 40 ms (0.16 of 250): the next window sheds at 0.3.
    feed(q, STANDING_WINDOW_MS, STANDING_WINDOW_MS, () => 40);
    expect(q.shareFor(2 * STANDING_WINDOW_MS, 40, 250, SHARE)).toBe(SHARE / 2);
    expect(q.standing).toBe(true);
    // 80 ms queued: priced at the full share, shed (OVERLOADED) at the halved one.
    const at = { nowMs: 0, deadlineAtMs: 250, minBudgetMs: 15, queuedMs: 80, budgetMs: 250 };
    expect(shedDecision({ ...at, shedShare: SHARE })).toBeUndefined();
    expect(shedDecision({ ...at, shedShare: SHARE / 2 })).toBe("OVERLOADED");
  });

  it("does not halve it for one long stall when the quotes around it did not wait", () => {
    const q = new StandingQueue(noLag);
    // One quote in each window waited 200 ms (a stall), the rest did not.
    const share = feed(q, 0, 1_000, (t) => (t % STANDING_WINDOW_MS === 50 ? 200 : 0));
    expect(share).toBe(SHARE);
    expect(q.standing).toBe(false);
  });

  it("gives the full share back after a window in which a quote did not wait", () => {
    const q = new StandingQueue(noLag);
    feed(q, 0, 3 * STANDING_WINDOW_MS, () => 40);
    expect(q.standing).toBe(true);
    feed(q, 3 * STANDING_WINDOW_MS, STANDING_WINDOW_MS, (t) => (t === 3 * STANDING_WINDOW_MS + 50 ? 0 : 40));
    expect(q.shareFor(4 * STANDING_WINDOW_MS, 40, 250, SHARE)).toBe(SHARE);
  });
});

describe("StandingQueue: the event loop's delay is the wait still to come", () => {
  const SHARE = 0.6;

  it("prices only a quote whose wait plus LOOP_CROSSINGS times the loop's delay leaves AFTER_ADMISSION_RESERVE of its budget", () => {
    let lag = 0;
    const q = new StandingQueue(() => lag);
    expect(q.shareFor(0, 0, 250, SHARE)).toBe(SHARE);
    // 25 ms behind: 250 x (1 - 0.2) - 2 x 25 = 150 ms, the share's own bound: unchanged.
    lag = 25;
    expect(q.shareFor(1, 0, 250, SHARE)).toBeCloseTo(SHARE, 12);
    // 50 ms behind: 200 - 100 = 100 ms of wait admitted (0.4 of 250).
    lag = 50;
    const share = q.shareFor(2, 0, 250, SHARE);
    expect(share).toBeCloseTo(1 - AFTER_ADMISSION_RESERVE - (LOOP_CROSSINGS * 50) / 250, 12);
    const at = { nowMs: 0, deadlineAtMs: 250, minBudgetMs: 15, budgetMs: 250, shedShare: share };
    expect(shedDecision({ ...at, queuedMs: 99 })).toBeUndefined();
    expect(shedDecision({ ...at, queuedMs: 101 })).toBe("OVERLOADED");
  });

  it("sheds every quote that waited at all once the loop's delay alone uses up the share (never turns shedding off)", () => {
    const q = new StandingQueue(() => 100);
    const share = q.shareFor(0, 1, 250, SHARE);
    expect(share).toBeGreaterThan(0);
    expect(
      shedDecision({
        nowMs: 0,
        deadlineAtMs: 250,
        minBudgetMs: 15,
        budgetMs: 250,
        shedShare: share,
        queuedMs: 1,
      }),
    ).toBe("OVERLOADED");
  });

  it("measures the loop's delay: a loop blocked for 60 ms reads at least 40 ms, an idle one soon reads under 5 ms", async () => {
    const lag = new LoopLag().start();
    try {
      await new Promise((r) => setTimeout(r, 3 * LAG_TICK_MS));
      const until = performance.now() + 60;
      while (performance.now() < until) {
        // a blocked event loop
      }
      expect(lag.ms).toBeGreaterThanOrEqual(40);
      await new Promise((r) => setTimeout(r, 20 * LAG_TICK_MS));
      expect(lag.ms).toBeLessThan(5 + LAG_TICK_MS);
    } finally {
      lag.stop();
    }
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

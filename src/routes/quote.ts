/**
 * POST /quote on the Hono app: reads the operator's deadline from the headers, sheds past capacity
 * before the body is read (src/http/shed.ts: `DEADLINE` when the budget is spent, `OVERLOADED` once
 * the quote has waited too long in our queue; both fast 404s), parses the body (a 400 naming the
 * field), and writes what the quote's path (src/quote/path.ts) answers. Errors go to the app's error
 * handler, as every route's do, with the quote's ids on their line.
 */
import type { Context, Hono } from "hono";
import { quoteRequestSchema } from "../contract/quote.ts";
import { parseJsonBody } from "../http/body.ts";
import { quoteDeadline } from "../http/deadline.ts";
import { type AppEnv, header } from "../http/env.ts";
import { OVERLOADED_MESSAGE, StandingQueue, shedDecision } from "../http/shed.ts";
import { declineAnswer, type QuoteResult, quotePath } from "../quote/path.ts";
import { declined, PAST_DEADLINE, QuoteLog, type QuotePorts, sampler } from "../quote/steps/step.ts";

export interface QuoteRouteDeps extends QuotePorts {
  /** Every Nth quote's line also at info (LOG_QUOTE_SAMPLE; 0: none); the others at debug. */
  logSample: number;
  /** Shed (404 OVERLOADED) a quote that waited longer than this share of its budget (0: never). */
  shedShare: number;
}

type Handled = QuoteResult | { outcome: "bad_request" | "error"; error: unknown };

export function registerQuoteRoute(app: Hono<AppEnv>, deps: QuoteRouteDeps): void {
  const quote = quotePath(deps);
  const queue = new StandingQueue();
  const level = sampler(deps.logSample);

  const handle = async (c: Context<AppEnv>): Promise<Handled> => {
    const arrival = deps.now();
    const deadline = quoteDeadline(header(c, "x-request-start"), header(c, "x-request-timeout"), arrival);
    const queuedMs = arrival - deadline.startMs;
    const budgetMs = deadline.atMs - deadline.startMs;
    const shed = shedDecision({
      nowMs: arrival,
      deadlineAtMs: deadline.atMs,
      minBudgetMs: deps.minBudgetMs,
      queuedMs,
      budgetMs,
      shedShare: deps.shedShare > 0 ? queue.shareFor(arrival, queuedMs, budgetMs, deps.shedShare) : 0,
    });
    if (shed === "DEADLINE") return declineAnswer(deps.metrics, PAST_DEADLINE);
    if (shed === "OVERLOADED")
      return declineAnswer(deps.metrics, declined("OVERLOADED", OVERLOADED_MESSAGE, "shed"));
    const req = await parseJsonBody(c, quoteRequestSchema).catch((error: unknown) => ({ error }));
    if ("error" in req) return { outcome: "bad_request", error: req.error };
    const log = new QuoteLog(c.get("log"), { requestId: req.requestId, quoteId: req.quoteId }, level());
    try {
      return await quote(req, deadline.atMs, log);
    } catch (error) {
      // The error's line (an unexpected error) carries the quote's ids.
      c.set("log", log.line);
      return { outcome: "error", error };
    }
  };

  app.post("/quote", async (c) => {
    const started = performance.now();
    const r = await handle(c).catch((error: unknown): Handled => ({ outcome: "error", error }));
    deps.metrics.quoteLatency.observe({ outcome: r.outcome }, (performance.now() - started) / 1000);
    if ("error" in r) throw r.error;
    return c.json(r.body, r.status);
  });
}

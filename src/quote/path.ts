/**
 * The quote's path, from a parsed request and its deadline to an answer: a budget check, price
 * (steps/price.ts), store (steps/store.ts), answer (steps/answer.ts). Each step returns its result or
 * the decline that ends the quote; anything that cannot be answered in time or safely is a 404, never
 * a late 200. Every decline is counted here, once, in `rfq_no_quote_total{reason}`. The HTTP route
 * (src/routes/quote.ts) reads the headers and the body, sheds, and writes what this returns.
 */
import type { QuoteRequest, QuoteResponse } from "../contract/quote.ts";
import type { Metrics } from "../observability/metrics.ts";
import { QUOTE_DECLINE_CODES } from "../refusal/codes.ts";
import { answer } from "./steps/answer.ts";
import { price } from "./steps/price.ts";
import {
  type Declined,
  isDeclined,
  PAST_DEADLINE,
  type QuoteLog,
  type QuoteOutcome,
  type QuotePorts,
} from "./steps/step.ts";
import { store } from "./steps/store.ts";

/** What the route writes: a priced quote, or a 404 whose reason was counted. */
export type QuoteResult =
  | { status: 200; body: QuoteResponse; outcome: "quoted" }
  | { status: 404; body: { message: string }; outcome: QuoteOutcome };

/** Counts a decline and makes its 404 (the body the error handler gives a QUOTE_NOT_AVAILABLE). */
export function declineAnswer(metrics: Metrics, d: Declined): QuoteResult {
  metrics.noQuotes.inc({ reason: d.code });
  return { status: 404, body: { message: d.context }, outcome: d.outcome };
}

export function quotePath(
  ports: QuotePorts,
): (req: QuoteRequest, deadlineAtMs: number, log: QuoteLog) => Promise<QuoteResult> {
  // Every reason's series exists at 0 before its first decline (rate() then sees the first one).
  for (const code of QUOTE_DECLINE_CODES) ports.metrics.noQuotes.inc({ reason: code }, 0);
  const steps = async (req: QuoteRequest, deadlineAtMs: number, log: QuoteLog) => {
    // One reading of the clock for the checks, the pricing and the store's bound: nothing between them waits.
    const at = ports.now();
    if (deadlineAtMs - at < ports.minBudgetMs) return PAST_DEADLINE;
    const priced = price(ports, req, at, log);
    if (isDeclined(priced)) return priced;
    const stored = await store(ports, req, priced, { at, deadlineAtMs }, log);
    if (stored !== true) return stored;
    return answer(ports, req, priced, deadlineAtMs, log);
  };
  return async (req, deadlineAtMs, log) => {
    const r = await steps(req, deadlineAtMs, log);
    return isDeclined(r) ? declineAnswer(ports.metrics, r) : { status: 200, body: r, outcome: "quoted" };
  };
}

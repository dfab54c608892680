/**
 * Lets the priced, stored quote leave, if the budget still allows it: storing may have taken the rest,
 * and a 200 past the deadline would be discarded while a 404 is never penalised.
 */
import type { QuoteRequest, QuoteResponse } from "../../contract/quote.ts";
import type { Priced } from "./price.ts";
import { type Declined, PAST_DEADLINE, type QuoteLog, type QuotePorts } from "./step.ts";

export function answer(
  ports: QuotePorts,
  req: QuoteRequest,
  priced: Priced,
  deadlineAtMs: number,
  log: QuoteLog,
): QuoteResponse | Declined {
  const left = deadlineAtMs - ports.now();
  if (left < ports.minBudgetMs / 2) return PAST_DEADLINE;
  ports.metrics.quoteBudgetLeft.observe(Math.max(0, left) / 1000);
  const r = priced.stored.response;
  if (priced.widened) {
    ports.metrics.toxicQuotes.inc({ action: "widened", reason: priced.widened.reason });
    log.line.info(
      {
        taker: req.taker,
        reason: priced.widened.reason,
        widenBps: priced.widened.bps,
        amountIn: r.amountIn,
        amountOut: r.amountOut,
      },
      "quote widened: taker flagged",
    );
  }
  const { tokenIn, tokenOut, quoteType, amountIn, amountOut } = r;
  log.routine({ tokenIn, tokenOut, quoteType, amountIn, amountOut }, "quoted");
  return r;
}

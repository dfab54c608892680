/**
 * Prices the quote (the quote service's decision: pairs, taker, issuance, book, inventory), or
 * declines it with the service's code.
 */
import type { QuoteRequest } from "../../contract/quote.ts";
import type { QuoteDecision } from "../service.ts";
import { type Declined, declined, type QuoteLog, type QuotePorts } from "./step.ts";

export type Priced = Extract<QuoteDecision, { ok: true }>;

export function price(ports: QuotePorts, req: QuoteRequest, at: number, log: QuoteLog): Priced | Declined {
  const decision = ports.service.decide(req, at);
  if (decision.ok) return decision;
  const { code, context } = decision;
  if (code === "TAKER_FLAGGED" || code === "TAKER_DENIED") {
    // A taker's standing is news worth a line at info (one taker, not the whole flow).
    ports.metrics.toxicQuotes.inc({ action: "refused", reason: code });
    log.line.info({ taker: req.taker, code, context }, "no quote: taker refused");
  } else {
    log.routine({ code, context }, "no quote");
  }
  return declined(code, `no quote: ${context}`, "no_quote");
}

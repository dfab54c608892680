/**
 * Stores the priced quote, within what is left of the budget, through the store's circuit: a store
 * that is slow or gone gives `QUOTE_STORE_UNAVAILABLE` before the deadline, never a 5xx and never a late
 * answer; a Redis that refuses writes at its maxmemory gives `QUOTE_STORE_FULL` the same way. A repeated
 * quoteId replaces the earlier answer (the operator reuses ids), unless a swap has claimed it: a
 * filled quote is never re-opened.
 */
import type { QuoteRequest } from "../../contract/quote.ts";
import type { Priced } from "./price.ts";
import { type Declined, declined, PAST_DEADLINE, type QuoteLog, type QuotePorts } from "./step.ts";

export async function store(
  ports: QuotePorts,
  req: QuoteRequest,
  priced: Priced,
  window: { at: number; deadlineAtMs: number },
  log: QuoteLog,
): Promise<true | Declined> {
  // The answer must leave with at least half the minimum budget to spare (checked again after).
  const storeMs = window.deadlineAtMs - window.at - ports.minBudgetMs / 2;
  if (storeMs <= 0) return PAST_DEADLINE;
  const stored = await ports.storeCircuit.run(() => ports.store.put(priced.stored), storeMs);
  if (!stored.ok) {
    // One line per outage comes from the circuit and the Redis client; per quote only at debug.
    if (log.base.isLevelEnabled("debug"))
      log.line.debug({ error: stored.error, timedOut: stored.timedOut }, "no quote: quote store unavailable");
    // Redis at its maxmemory refuses writes ("OOM command not allowed ..."): a reason of its own.
    if (stored.error && /\bOOM\b/.test(stored.error))
      return declined(
        "QUOTE_STORE_FULL",
        "no quote: the quote store is full (Redis refuses writes at its maxmemory)",
        "unavailable",
      );
    return declined("QUOTE_STORE_UNAVAILABLE", "no quote: the quote store is unavailable", "unavailable");
  }
  if (!stored.value) {
    log.line.info("no quote: quoteId already claimed by a swap");
    return declined(
      "QUOTE_ID_CLAIMED",
      `no quote: quoteId ${req.quoteId} was already claimed by a swap; a claimed quote is never re-opened`,
      "no_quote",
    );
  }
  return true;
}

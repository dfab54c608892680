/**
 * Past capacity, degrade instead of collapsing. When quotes arrive faster than the process can price
 * them, a queue builds (kernel socket buffers, then the event loop) and every answer waits in it: a
 * queue as long as the budget makes nearly every answer late. The quote route therefore decides, as
 * soon as the request's headers are read and before the body is read, parsed or priced, whether to
 * price it at all:
 *
 *   DEADLINE    less than `minBudgetMs` of the operator's budget is left: a 200 now would be discarded;
 *   OVERLOADED  the quote has already waited more than `shedShare` of its budget (limits.shedAfterQueuedShare,
 *               0.6: 150 ms of the operator's 250) since the operator sent it (`x-request-start`): the
 *               process is behind. A fast 404 (never penalised) costs a fraction of a priced answer,
 *               so the queue stays short and the quotes that are priced still leave within the budget.
 *
 * Both are 404s counted in `rfq_no_quote_total{reason}`. The wait is read from the operator's own
 * timestamp, the only clock that sees the kernel's queue; a start the deadline rules do not trust
 * (absent, or skewed beyond src/http/deadline.ts's bounds) counts as no wait.
 */

export type ShedReason = "DEADLINE" | "OVERLOADED";

export interface ShedInput {
  nowMs: number;
  /** ms epoch at which the operator stops listening (src/http/deadline.ts). */
  deadlineAtMs: number;
  minBudgetMs: number;
  /** How long the quote has waited since the operator sent it, ms (0 when unknown). */
  queuedMs: number;
  /** The operator's budget for this quote (x-request-timeout), ms. */
  budgetMs: number;
  /** Shed once the wait passes this share of the budget; 0 turns it off. */
  shedShare: number;
}

/** Whether to price this quote at all, and if not, why. Pure: the route passes the clock and the wait. */
export function shedDecision(s: ShedInput): ShedReason | undefined {
  if (s.deadlineAtMs - s.nowMs < s.minBudgetMs) return "DEADLINE";
  if (s.shedShare > 0 && s.queuedMs > s.shedShare * s.budgetMs) return "OVERLOADED";
  return undefined;
}

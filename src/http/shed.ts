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
 * A standing queue (every quote for a while has waited: the process is past capacity, not hit by one
 * stall) halves the share (`StandingQueue`, after CoDel): a queue kept at 150 ms means every quote
 * that is priced has waited 150 ms and the process holds that much more work in flight. A single
 * stall, however long, does not halve it: the quotes behind it had not all been waiting.
 *
 * What the wait does not show is the wait still to come: a quote admitted now crosses the event loop
 * again (its body, the store's answer) before it leaves, and past capacity each crossing waits behind
 * every other quote in flight. So the loop's recent delay (`LoopLag`) counts too, `LOOP_CROSSINGS`
 * times: a quote is priced only if its wait so far plus the waits still ahead of it leave
 * `AFTER_ADMISSION_RESERVE` of the budget (the share is the lower of the two bounds). An idle loop
 * changes nothing; a loop 25 ms behind neither; one 100 ms behind sheds every quote that waited. Without it the step just past saturation admitted quotes at 140 ms that then left at
 * 300-400 ms (22.5 % late at 1.2x one worker's saturation, issue 60).
 *
 * Both are 404s counted in `rfq_no_quote_total{reason}`. The wait is read from the operator's own
 * timestamp, the only clock that sees the kernel's queue; a start the deadline rules do not trust
 * (absent, or skewed beyond src/http/deadline.ts's bounds) counts as no wait.
 */
import type { QuoteDeclineCode } from "../refusal/codes.ts";

export type ShedReason = typeof QuoteDeclineCode.DEADLINE | typeof QuoteDeclineCode.OVERLOADED;

/**
 * The 404's message for a quote shed as OVERLOADED (also the load test's bare servers' answer,
 * sandbox/loadtest/bare.ts).
 */
export const OVERLOADED_MESSAGE = "no quote: overloaded (the quote waited too long in our queue)";

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

/**
 * How often a priced quote waits for the event loop after it is admitted: reading its body and the
 * quote store's answer (the answer itself is written at once).
 */
export const LOOP_CROSSINGS = 2;
/**
 * The share of the budget kept for a quote's own work and its answer's way back once its waits are
 * counted: 50 ms of the operator's 250, several times a priced quote's own cost.
 */
export const AFTER_ADMISSION_RESERVE = 0.2;
/** The event loop's delay is sampled this often (ms): 100 cheap wake-ups a second. */
export const LAG_TICK_MS = 10;

/**
 * The event loop's recent delay, ms: how long a callback queued now waits for its turn. A timer every
 * `LAG_TICK_MS` measures how late it fires; the figure halves at each punctual tick (a passing stall is
 * soon forgotten), and while a tick is overdue its lateness so far counts.
 */
export class LoopLag {
  #lagMs = 0;
  #last = performance.now();
  #timer: NodeJS.Timeout | undefined;

  start(): this {
    if (this.#timer) return this;
    this.#last = performance.now();
    this.#timer = setInterval(() => {
      const t = performance.now();
      const late = Math.max(0, t - this.#last - LAG_TICK_MS);
      this.#last = t;
      this.#lagMs = Math.max(late, this.#lagMs / 2);
    }, LAG_TICK_MS);
    this.#timer.unref();
    return this;
  }

  /** The recent delay, or how overdue the next tick already is, whichever is longer (ms). */
  get ms(): number {
    return Math.max(this.#lagMs, performance.now() - this.#last - LAG_TICK_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** The process's one loop-delay sampler, started by the first quote route that asks for it. */
let processLag: LoopLag | undefined;
const loopLagMs = (): number => {
  processLag ??= new LoopLag().start();
  return processLag.ms;
};

/** How long every quote must have waited for the queue to count as standing. */
export const STANDING_WINDOW_MS = 100;
/** The least wait, as a share of the budget, every quote in a window must show for a standing queue. */
const STANDING_SHARE = 0.1;

/**
 * Tells a standing queue from a passing stall: the least wait (as a share of its budget) seen over
 * each `STANDING_WINDOW_MS` window; when the last full window's least wait was above
 * `STANDING_SHARE`, every quote in it had waited, and the share to shed at is halved until a window
 * shows a quote that did not wait.
 */
export class StandingQueue {
  #windowStartMs = Number.NEGATIVE_INFINITY;
  #windowMin = Number.POSITIVE_INFINITY;
  #standing = false;

  /** `lagMs`: the event loop's recent delay (the process's `LoopLag` unless a test gives its own). */
  constructor(private readonly lagMs: () => number = loopLagMs) {}

  /** Records one quote's wait and returns the share of its budget it may have waited and still be priced. */
  shareFor(nowMs: number, queuedMs: number, budgetMs: number, shedShare: number): number {
    if (nowMs - this.#windowStartMs >= STANDING_WINDOW_MS) {
      // A window with no quotes in it (or the first one) says nothing: not standing.
      this.#standing = Number.isFinite(this.#windowMin) && this.#windowMin > STANDING_SHARE;
      this.#windowStartMs = nowMs;
      this.#windowMin = Number.POSITIVE_INFINITY;
    }
    const share = budgetMs > 0 ? queuedMs / budgetMs : 0;
    if (share < this.#windowMin) this.#windowMin = share;
    const base = this.#standing ? shedShare / 2 : shedShare;
    const lag = this.lagMs();
    if (!(lag > 0) || !(budgetMs > 0)) return base;
    // Wait so far + the waits still ahead must fit in the budget less AFTER_ADMISSION_RESERVE; never
    // 0, which would turn shedding off.
    const fits = 1 - AFTER_ADMISSION_RESERVE - (LOOP_CROSSINGS * lag) / budgetMs;
    return Math.max(Math.min(base, fits), Number.MIN_VALUE);
  }

  get standing(): boolean {
    return this.#standing;
  }
}

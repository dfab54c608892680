/**
 * What the quote's steps (this folder) share: the ports and settings they run with, the quote's
 * logger, and the decline a step ends the quote with. The order of the steps is ../path.ts.
 */
import type { Logger } from "../../observability/logger.ts";
import type { Metrics } from "../../observability/metrics.ts";
import type { QuoteStore } from "../../quote-store/interface.ts";
import type { Circuit } from "../../redis/circuit.ts";
import type { QuoteDeclineCode, Refusal } from "../../refusal/codes.ts";
import type { QuoteService } from "../service.ts";

/** The ports and settings every step runs with. */
export interface QuotePorts {
  service: Pick<QuoteService, "decide">;
  store: QuoteStore;
  metrics: Metrics;
  /** The store's circuit breaker: a store that is slow or gone is a fast decline, not a late answer. */
  storeCircuit: Circuit;
  /** Answer 404 when less than this much budget remains (time to write the answer). */
  minBudgetMs: number;
  now: () => number;
}

/** The `outcome` label of rfq_quote_duration_seconds for each way a quote ends. */
export type QuoteOutcome =
  | "quoted"
  | "no_quote"
  | "deadline"
  | "shed"
  | "unavailable"
  | "bad_request"
  | "error";

/** How a step ends a quote without a price: a 404 whose code is counted and whose context is its message. */
export type Declined = Refusal<QuoteDeclineCode> & { outcome: QuoteOutcome };

export const declined = (code: QuoteDeclineCode, context: string, outcome: QuoteOutcome): Declined => ({
  code,
  context,
  outcome,
});

/** The one decline for a spent budget, whichever step finds it spent: a 200 now would be discarded. */
export const PAST_DEADLINE = declined("DEADLINE", "no quote: the operator's deadline has passed", "deadline");

export const isDeclined = (x: unknown): x is Declined =>
  typeof x === "object" && x !== null && "code" in x && "outcome" in x;

/**
 * The quote's logger: the request's, with the quote's ids (requestId, quoteId) once a line is
 * written (making the child costs more than most quotes' work). `level` says at which level this
 * quote's routine line goes: info for every `sample`th quote (LOG_QUOTE_SAMPLE), debug otherwise.
 */
export class QuoteLog {
  #line: Logger | undefined;
  constructor(
    readonly base: Logger,
    private readonly ids: { requestId: string; quoteId: string },
    readonly level: "info" | "debug",
  ) {}

  /** The quote's own logger. */
  get line(): Logger {
    this.#line ??= this.base.child(this.ids);
    return this.#line;
  }

  /** Writes the routine line at this quote's level, if that level is on. */
  routine(fields: Record<string, unknown>, message: string): void {
    if (this.base.isLevelEnabled(this.level)) this.line[this.level](fields, message);
  }
}

/** Every `sample`th call says "info", the others "debug"; 0 never says "info". */
export function sampler(sample: number): () => "info" | "debug" {
  let seen = 0;
  return () => (sample > 0 && ++seen % sample === 0 ? "info" : "debug");
}

/**
 * POST /quote: the hot path. Parse, check the operator's deadline, price from memory, store, answer.
 * Anything that cannot be answered in time or safely is a 404, never a late 200.
 *
 * The one port call (the store's `put`) runs through the store's circuit and is bounded by the
 * operator's deadline: a store that is slow or gone gives a 404 `STORE_UNAVAILABLE` (counted in
 * `rfq_no_quote_total{reason}`) before the deadline, never a 5xx and never a late answer; a Redis
 * that refuses writes at its maxmemory gives `STORE_FULL` the same way.
 *
 * Past capacity the route sheds as soon as the headers are read (src/http/shed.ts): `DEADLINE` when
 * the budget is already spent, `OVERLOADED` once it has waited too long in our queue; both fast 404s.
 *
 * The route's work is one function of the request (`quoteHandler`); `registerQuoteRoute` serves it on
 * the Hono app, like every other route.
 */
import type { Hono } from "hono";
import { type QuoteRequest, type QuoteResponse, quoteRequestSchema } from "../contract/quote.ts";
import { parseJsonBody } from "../http/body.ts";
import { quoteDeadline } from "../http/deadline.ts";
import { type AppEnv, header } from "../http/env.ts";
import { OVERLOADED_MESSAGE, StandingQueue, shedDecision } from "../http/shed.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { DECLINE_REASONS, type DeclineReason, type QuoteService } from "../quote/service.ts";
import type { QuoteStore } from "../quote-store/interface.ts";
import { Circuit } from "../redis/circuit.ts";

export interface QuoteRouteDeps {
  service: QuoteService;
  store: QuoteStore;
  metrics: Metrics;
  /** Answer 404 when less than this much budget remains (time to write the answer). */
  minBudgetMs: number;
  /**
   * Every quote's line is logged at debug; every Nth also at info (LOG_QUOTE_SAMPLE; 0: none): a line
   * per quote at info would be tens of GB of logs a day.
   */
  logSample?: number;
  now: () => number;
  /** The store's circuit breaker (one per service; a closed one of its own otherwise). */
  storeCircuit?: Circuit;
  /**
   * Shed (404 OVERLOADED) a quote that waited longer than this share of its budget
   * (limits.shedAfterQueuedShare; 0: never).
   */
  shedShare?: number;
}

/** One quote request. */
export interface QuoteCall {
  /** A request header by its lower-case name. */
  header(name: string): string | undefined;
  /** Reads, parses and validates the body; throws an AppError naming the field. Called at most once. */
  body(): Promise<QuoteRequest>;
  /**
   * The request's logger. When the handler throws once the ids are known, it is replaced by the
   * quote's own (requestId, quoteId), so that the error's line carries them.
   */
  log: Logger;
}

/** The route's own reasons to decline, beside the quote service's (DECLINE_REASONS). */
const ROUTE_DECLINES = [
  "DEADLINE",
  "OVERLOADED",
  "STORE_FULL",
  "STORE_UNAVAILABLE",
  "QUOTE_ID_CLAIMED",
] as const;
/** Every `reason` label of rfq_no_quote_total. */
type NoQuoteCounted = DeclineReason | (typeof ROUTE_DECLINES)[number];
export const NO_QUOTE_REASONS: readonly NoQuoteCounted[] = [...DECLINE_REASONS, ...ROUTE_DECLINES];

/** The answer: a priced quote, or a 404 whose reason was counted. Errors are thrown (AppError). */
export type QuoteAnswer = { status: 200; body: QuoteResponse } | { status: 404; body: { message: string } };

/** The quote route's work, free of any HTTP framework. */
export function quoteHandler(deps: QuoteRouteDeps): (call: QuoteCall) => Promise<QuoteAnswer> {
  const { service, store, metrics, minBudgetMs, now } = deps;
  const circuit = deps.storeCircuit ?? new Circuit({ name: "quoteStore", metrics, now });
  const sample = deps.logSample ?? 0;
  const shedShare = deps.shedShare ?? 0;
  const queue = new StandingQueue();
  let seen = 0;
  /** The level of this quote's line: info for every `sample`th quote, debug otherwise. */
  const quoteLevel = (): "info" | "debug" => (sample > 0 && ++seen % sample === 0 ? "info" : "debug");

  // Every reason's series exists at 0 before its first decline (rate() then sees the first one).
  for (const reason of NO_QUOTE_REASONS) metrics.noQuotes.inc({ reason }, 0);

  /** A 404 with its reason counted: the body the error handler gives a QUOTE_NOT_AVAILABLE. */
  const decline = (reason: NoQuoteCounted, message: string): QuoteAnswer => {
    metrics.noQuotes.inc({ reason });
    return { status: 404, body: { message } };
  };

  return async (call) => {
    const arrival = now();
    const started = performance.now();
    let outcome = "error";
    // The quote's own logger (requestId, quoteId) is made only when a line is written.
    const base = call.log;
    let quoteLog: Logger | undefined;
    let ids: { requestId: string; quoteId: string } | undefined;
    const log = (): Logger => {
      quoteLog ??= ids ? base.child(ids) : base;
      return quoteLog;
    };
    try {
      const deadline = quoteDeadline(
        call.header("x-request-start"),
        call.header("x-request-timeout"),
        arrival,
      );
      // Shed before the body is read, parsed or priced: a late or queued quote costs little.
      const sentAt = deadline.startMs;
      const queuedMs = arrival - sentAt;
      const budgetMs = deadline.atMs - sentAt;
      const shed = shedDecision({
        nowMs: arrival,
        deadlineAtMs: deadline.atMs,
        minBudgetMs,
        queuedMs,
        budgetMs,
        shedShare: shedShare > 0 ? queue.shareFor(arrival, queuedMs, budgetMs, shedShare) : 0,
      });
      if (shed === "DEADLINE") {
        outcome = "deadline";
        return decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      if (shed === "OVERLOADED") {
        outcome = "shed";
        return decline("OVERLOADED", OVERLOADED_MESSAGE);
      }
      let req: QuoteRequest;
      try {
        req = await call.body();
      } catch (e) {
        outcome = "bad_request";
        throw e;
      }
      ids = { requestId: req.requestId, quoteId: req.quoteId };
      // One reading of the clock for the checks, the pricing and the store's bound: nothing between them waits.
      const at = now();
      if (deadline.atMs - at < minBudgetMs) {
        outcome = "deadline";
        return decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      const decision = service.decide(req, at);
      if (!decision.ok) {
        outcome = "no_quote";
        if (decision.reason === "TAKER_FLAGGED" || decision.reason === "TAKER_DENIED") {
          // A taker's standing is news worth a line at info (one taker, not the whole flow).
          metrics.toxicQuotes.inc({ action: "refused", reason: decision.reason });
          log().info(
            { taker: req.taker, reason: decision.reason, detail: decision.detail },
            "no quote: taker refused",
          );
          return decline(decision.reason, `no quote: ${decision.detail}`);
        }
        const level = quoteLevel();
        if (base.isLevelEnabled(level))
          log()[level]({ reason: decision.reason, detail: decision.detail }, "no quote");
        return decline(decision.reason, `no quote: ${decision.detail}`);
      }
      // The answer must leave with at least half the minimum budget to spare (checked below as well).
      const storeMs = deadline.atMs - at - minBudgetMs / 2;
      if (storeMs <= 0) {
        outcome = "deadline";
        return decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      const stored = await circuit.run(() => store.put(decision.stored), storeMs);
      if (!stored.ok) {
        outcome = "unavailable";
        // One line per outage comes from the circuit and the Redis client; per quote only at debug.
        if (base.isLevelEnabled("debug"))
          log().debug(
            { error: stored.error, timedOut: stored.timedOut },
            "no quote: quote store unavailable",
          );
        // Redis at its maxmemory refuses writes ("OOM command not allowed ..."): a reason of its own,
        // as fast as any refusal (the circuit opens on it like on an outage), never a 5xx.
        if (stored.error && /\bOOM\b/.test(stored.error)) {
          return decline(
            "STORE_FULL",
            "no quote: the quote store is full (Redis refuses writes at its maxmemory)",
          );
        }
        return decline("STORE_UNAVAILABLE", "no quote: the quote store is unavailable");
      }
      // A repeated quoteId replaces the earlier answer (the operator reuses ids), unless a swap has
      // claimed it: a filled quote is never re-opened.
      if (!stored.value) {
        outcome = "no_quote";
        log().info("no quote: quoteId already claimed by a swap");
        return decline(
          "QUOTE_ID_CLAIMED",
          `no quote: quoteId ${req.quoteId} was already claimed by a swap; a claimed quote is never re-opened`,
        );
      }
      const left = deadline.atMs - now();
      if (left < minBudgetMs / 2) {
        // Storing took the rest of the budget: a 200 now would be discarded, and a 404 is never penalised.
        outcome = "deadline";
        return decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      metrics.quoteBudgetLeft.observe(Math.max(0, left) / 1000);
      outcome = "quoted";
      const r = decision.stored.response;
      if (decision.widened) {
        metrics.toxicQuotes.inc({ action: "widened", reason: decision.widened.reason });
        log().info(
          {
            taker: req.taker,
            reason: decision.widened.reason,
            widenBps: decision.widened.bps,
            amountIn: r.amountIn,
            amountOut: r.amountOut,
          },
          "quote widened: taker flagged",
        );
      }
      const level = quoteLevel();
      if (base.isLevelEnabled(level)) {
        log()[level](
          {
            tokenIn: r.tokenIn,
            tokenOut: r.tokenOut,
            quoteType: r.quoteType,
            amountIn: r.amountIn,
            amountOut: r.amountOut,
          },
          "quoted",
        );
      }
      return { status: 200, body: r };
    } catch (e) {
      // The error's line (an unexpected error) carries the quote's ids.
      if (ids) call.log = log();
      throw e;
    } finally {
      metrics.quoteLatency.observe({ outcome }, (performance.now() - started) / 1000);
    }
  };
}

/** POST /quote on a Hono app (errors go to the app's error handler, as every route's do). */
export function registerQuoteRoute(
  app: Hono<AppEnv>,
  deps: QuoteRouteDeps,
): (call: QuoteCall) => Promise<QuoteAnswer> {
  const handle = quoteHandler(deps);
  app.post("/quote", async (c) => {
    const call: QuoteCall = {
      header: (name) => header(c, name),
      body: () => parseJsonBody(c, quoteRequestSchema),
      log: c.get("log"),
    };
    try {
      const answer = await handle(call);
      return c.json(answer.body, answer.status);
    } catch (e) {
      c.set("log", call.log);
      throw e;
    }
  });
  return handle;
}

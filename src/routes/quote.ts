/**
 * POST /quote: the hot path. Parse, check the operator's deadline, price from memory, store, answer.
 * Anything that cannot be answered in time or safely is a 404, never a late 200.
 *
 * The one port call (the store's `put`) runs through the store's circuit and is bounded by the
 * operator's deadline: a store that is slow or gone gives a 404 `STORE_UNAVAILABLE` (counted in
 * `rfq_no_quote_total{reason}`) before the deadline, never a 5xx and never a late answer; a Redis
 * that refuses writes at its maxmemory gives `STORE_FULL` the same way.
 */
import type { Hono } from "hono";
import { quoteRequestSchema } from "../contract/quote.ts";
import { AppError, ErrorCode } from "../errors/index.ts";
import { parseJsonBody } from "../http/body.ts";
import { quoteDeadline } from "../http/deadline.ts";
import type { AppEnv } from "../http/env.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { QuoteService } from "../quote/service.ts";
import type { QuoteStore } from "../quote-store/interface.ts";
import { Circuit } from "../redis/circuit.ts";

export interface QuoteRouteDeps {
  service: QuoteService;
  store: QuoteStore;
  metrics: Metrics;
  /** Answer 404 when less than this much budget remains (time to write the answer). */
  minBudgetMs: number;
  /**
   * Every quote's line is logged at debug; every Nth also at info (LOG_QUOTE_SAMPLE; 0: none). At
   * 2,000 quotes/s an info line per quote would be tens of GB of logs a day.
   */
  logSample?: number;
  now: () => number;
  /** The store's circuit breaker (one per service; a closed one of its own otherwise). */
  storeCircuit?: Circuit;
}

export function registerQuoteRoute(app: Hono<AppEnv>, deps: QuoteRouteDeps): void {
  const { service, store, metrics, minBudgetMs, now } = deps;
  const circuit = deps.storeCircuit ?? new Circuit({ name: "quoteStore", metrics, now });
  const sample = deps.logSample ?? 0;
  let seen = 0;
  /** The level of this quote's line: info for every `sample`th quote, debug otherwise. */
  const quoteLevel = (): "info" | "debug" => (sample > 0 && ++seen % sample === 0 ? "info" : "debug");

  const decline = (reason: string, message: string): never => {
    metrics.noQuotes.inc({ reason });
    throw new AppError(ErrorCode.QUOTE_NOT_AVAILABLE, message);
  };

  app.post("/quote", async (c) => {
    const arrival = now();
    const started = performance.now();
    let outcome = "error";
    try {
      const deadline = quoteDeadline(
        c.req.header("x-request-start"),
        c.req.header("x-request-timeout"),
        arrival,
      );
      const req = await parseJsonBody(c, quoteRequestSchema).catch((e) => {
        outcome = "bad_request";
        throw e;
      });
      const log = c.get("log").child({ requestId: req.requestId, quoteId: req.quoteId });
      c.set("log", log);
      if (deadline.atMs - now() < minBudgetMs) {
        outcome = "deadline";
        decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      const decision = service.decide(req, now());
      if (!decision.ok) {
        outcome = "no_quote";
        if (decision.reason === "taker_flagged" || decision.reason === "taker_denied") {
          // A taker's standing is news worth a line at info (one taker, not the whole flow).
          metrics.toxicQuotes.inc({ action: "refused", reason: decision.reason });
          log.info(
            { taker: req.taker, reason: decision.reason, detail: decision.detail },
            "no quote: taker refused",
          );
          return decline(decision.reason, `no quote: ${decision.detail}`);
        }
        log[quoteLevel()]({ reason: decision.reason, detail: decision.detail }, "no quote");
        return decline(decision.reason, `no quote: ${decision.detail}`);
      }
      // The answer must leave with at least half the minimum budget to spare (checked below as well).
      const storeMs = deadline.atMs - now() - minBudgetMs / 2;
      if (storeMs <= 0) {
        outcome = "deadline";
        decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      const stored = await circuit.run(() => store.put(decision.stored), storeMs);
      if (!stored.ok) {
        outcome = "unavailable";
        // One line per outage comes from the circuit and the Redis client; per quote only at debug.
        log.debug({ error: stored.error, timedOut: stored.timedOut }, "no quote: quote store unavailable");
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
        log.info("no quote: quoteId already claimed by a swap");
        return decline(
          "QUOTE_ID_CLAIMED",
          `no quote: quoteId ${req.quoteId} was already claimed by a swap; a claimed quote is never re-opened`,
        );
      }
      const left = deadline.atMs - now();
      if (left < minBudgetMs / 2) {
        // Storing took the rest of the budget: a 200 now would be discarded, and a 404 is never penalised.
        outcome = "deadline";
        decline("DEADLINE", "no quote: the operator's deadline has passed");
      }
      metrics.quoteBudgetLeft.observe(Math.max(0, left) / 1000);
      outcome = "quoted";
      const r = decision.stored.response;
      if (decision.widened) {
        metrics.toxicQuotes.inc({ action: "widened", reason: decision.widened.reason });
        log.info(
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
      log[quoteLevel()](
        {
          tokenIn: r.tokenIn,
          tokenOut: r.tokenOut,
          quoteType: r.quoteType,
          amountIn: r.amountIn,
          amountOut: r.amountOut,
        },
        "quoted",
      );
      return c.json(r);
    } finally {
      metrics.quoteLatency.observe({ outcome }, (performance.now() - started) / 1000);
    }
  });
}

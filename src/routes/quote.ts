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
 */
import type { Context, Hono } from "hono";
import { quoteRequestSchema } from "../contract/quote.ts";
import { parseJsonBody } from "../http/body.ts";
import { quoteDeadline } from "../http/deadline.ts";
import { type AppEnv, header } from "../http/env.ts";
import { shedDecision } from "../http/shed.ts";
import type { Logger } from "../observability/logger.ts";
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
  /**
   * Shed (404 OVERLOADED) a quote that waited longer than this share of its budget
   * (limits.shedAfterQueuedShare; 0: never).
   */
  shedShare?: number;
}

export function registerQuoteRoute(app: Hono<AppEnv>, deps: QuoteRouteDeps): void {
  const { service, store, metrics, minBudgetMs, now } = deps;
  const circuit = deps.storeCircuit ?? new Circuit({ name: "quoteStore", metrics, now });
  const sample = deps.logSample ?? 0;
  const shedShare = deps.shedShare ?? 0;
  let seen = 0;
  /** The level of this quote's line: info for every `sample`th quote, debug otherwise. */
  const quoteLevel = (): "info" | "debug" => (sample > 0 && ++seen % sample === 0 ? "info" : "debug");

  /**
   * A 404 with its reason counted, answered as a value (the body the error handler gives a
   * QUOTE_NOT_AVAILABLE): throwing an error per declined quote cost a few percent of the path's CPU.
   */
  const decline = (c: Context<AppEnv>, reason: string, message: string): Response => {
    metrics.noQuotes.inc({ reason });
    return c.json({ message }, 404);
  };

  app.post("/quote", async (c) => {
    const arrival = now();
    const started = performance.now();
    let outcome = "error";
    // The quote's own logger (requestId, quoteId) is made only when a line is written.
    let quoteLog: Logger | undefined;
    let ids: { requestId: string; quoteId: string } | undefined;
    const log = (): Logger => {
      quoteLog ??= ids ? c.get("log").child(ids) : c.get("log");
      return quoteLog;
    };
    try {
      const startHeader = header(c, "x-request-start");
      const deadline = quoteDeadline(startHeader, header(c, "x-request-timeout"), arrival);
      // Shed before the body is read, parsed or priced: a late or queued quote costs little.
      const fromHeader = deadline.source === "header";
      const sentAt = fromHeader ? Number(startHeader) : arrival;
      const shed = shedDecision({
        nowMs: arrival,
        deadlineAtMs: deadline.atMs,
        minBudgetMs,
        queuedMs: arrival - sentAt,
        budgetMs: deadline.atMs - sentAt,
        shedShare,
      });
      if (shed === "DEADLINE") {
        outcome = "deadline";
        return decline(c, "DEADLINE", "no quote: the operator's deadline has passed");
      }
      if (shed === "OVERLOADED") {
        outcome = "shed";
        return decline(c, "OVERLOADED", "no quote: overloaded (the quote waited too long in our queue)");
      }
      const req = await parseJsonBody(c, quoteRequestSchema).catch((e) => {
        outcome = "bad_request";
        throw e;
      });
      ids = { requestId: req.requestId, quoteId: req.quoteId };
      if (deadline.atMs - now() < minBudgetMs) {
        outcome = "deadline";
        return decline(c, "DEADLINE", "no quote: the operator's deadline has passed");
      }
      const decision = service.decide(req, now());
      if (!decision.ok) {
        outcome = "no_quote";
        if (decision.reason === "taker_flagged" || decision.reason === "taker_denied") {
          // A taker's standing is news worth a line at info (one taker, not the whole flow).
          metrics.toxicQuotes.inc({ action: "refused", reason: decision.reason });
          log().info(
            { taker: req.taker, reason: decision.reason, detail: decision.detail },
            "no quote: taker refused",
          );
          return decline(c, decision.reason, `no quote: ${decision.detail}`);
        }
        const level = quoteLevel();
        if (c.get("log").isLevelEnabled(level))
          log()[level]({ reason: decision.reason, detail: decision.detail }, "no quote");
        return decline(c, decision.reason, `no quote: ${decision.detail}`);
      }
      // The answer must leave with at least half the minimum budget to spare (checked below as well).
      const storeMs = deadline.atMs - now() - minBudgetMs / 2;
      if (storeMs <= 0) {
        outcome = "deadline";
        return decline(c, "DEADLINE", "no quote: the operator's deadline has passed");
      }
      const stored = await circuit.run(() => store.put(decision.stored), storeMs);
      if (!stored.ok) {
        outcome = "unavailable";
        // One line per outage comes from the circuit and the Redis client; per quote only at debug.
        if (c.get("log").isLevelEnabled("debug"))
          log().debug(
            { error: stored.error, timedOut: stored.timedOut },
            "no quote: quote store unavailable",
          );
        // Redis at its maxmemory refuses writes ("OOM command not allowed ..."): a reason of its own,
        // as fast as any refusal (the circuit opens on it like on an outage), never a 5xx.
        if (stored.error && /\bOOM\b/.test(stored.error)) {
          return decline(
            c,
            "STORE_FULL",
            "no quote: the quote store is full (Redis refuses writes at its maxmemory)",
          );
        }
        return decline(c, "STORE_UNAVAILABLE", "no quote: the quote store is unavailable");
      }
      // A repeated quoteId replaces the earlier answer (the operator reuses ids), unless a swap has
      // claimed it: a filled quote is never re-opened.
      if (!stored.value) {
        outcome = "no_quote";
        log().info("no quote: quoteId already claimed by a swap");
        return decline(
          c,
          "QUOTE_ID_CLAIMED",
          `no quote: quoteId ${req.quoteId} was already claimed by a swap; a claimed quote is never re-opened`,
        );
      }
      const left = deadline.atMs - now();
      if (left < minBudgetMs / 2) {
        // Storing took the rest of the budget: a 200 now would be discarded, and a 404 is never penalised.
        outcome = "deadline";
        return decline(c, "DEADLINE", "no quote: the operator's deadline has passed");
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
      if (c.get("log").isLevelEnabled(level)) {
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
      return c.json(r);
    } catch (e) {
      // The error handler's line (an unexpected error) carries the quote's ids.
      if (ids) c.set("log", log());
      throw e;
    } finally {
      metrics.quoteLatency.observe({ outcome }, (performance.now() - started) / 1000);
    }
  });
}

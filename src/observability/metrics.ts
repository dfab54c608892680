/**
 * Prometheus metrics. One registry per app instance (tests create several apps in one process), so
 * nothing here is a module-level singleton.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export class Metrics {
  readonly registry = new Registry();

  /** Quote handling time in seconds, by outcome (quoted, no_quote, bad_request, deadline, unavailable, error). */
  readonly quoteLatency = new Histogram({
    name: "rfq_quote_duration_seconds",
    help: "Time to answer POST /quote, by outcome",
    labelNames: ["outcome"] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });

  /** Quote budget left when we answered, seconds, measured from x-request-start. */
  readonly quoteBudgetLeft = new Histogram({
    name: "rfq_quote_budget_left_seconds",
    help: "Operator budget remaining when the quote answer was written",
    buckets: [0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.225, 0.24, 0.25],
    registers: [this.registry],
  });

  readonly noQuotes = new Counter({
    name: "rfq_no_quote_total",
    help: "Quotes declined (404), by reason",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });

  /** Every HTTP answer, by route and status. */
  readonly responses = new Counter({
    name: "rfq_http_responses_total",
    help: "HTTP answers by route and status",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });

  /** Swap answers by state (accepted, rejected, rejectedWithReason) and reason. */
  readonly swaps = new Counter({
    name: "rfq_swaps_total",
    help: "POST /swap answers by state and reason",
    labelNames: ["state", "reason"] as const,
    registers: [this.registry],
  });

  readonly swapLatency = new Histogram({
    name: "rfq_swap_duration_seconds",
    help: "Time to answer POST /swap, by state",
    labelNames: ["state"] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25],
    registers: [this.registry],
  });

  /** Fills after sending: landed, failed, expired. */
  readonly fills = new Counter({
    name: "rfq_fills_total",
    help: "Sent fills by final chain outcome",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  /** Operator fee owed per fill, in the output mint's smallest units (settled off-chain). */
  readonly feesOwed = new Counter({
    name: "rfq_operator_fee_owed_units_total",
    help: "Operator fee owed, smallest units of the fee mint",
    labelNames: ["mint"] as const,
    registers: [this.registry],
  });

  /** Rolling one-hour fill rate (accepted and landed over swap requests); the operator's line is 0.95. */
  readonly fillRate = new Gauge({
    name: "rfq_fill_rate_1h",
    help: "Accepted-and-landed swaps over swap requests, rolling one hour",
    registers: [this.registry],
  });

  /** Redis connection state per client (1 connected, 0 not): an outage shows here, not as a pause. */
  readonly redisUp = new Gauge({
    name: "rfq_redis_up",
    help: "Whether the Redis client is connected, by client",
    labelNames: ["client"] as const,
    registers: [this.registry],
  });

  /** Connection errors reported by each Redis client. */
  readonly redisErrors = new Counter({
    name: "rfq_redis_errors_total",
    help: "Redis client errors, by client",
    labelNames: ["client"] as const,
    registers: [this.registry],
  });

  /** A dependency's circuit breaker (1 open or probing: calls fail fast; 0 closed). */
  readonly circuitOpen = new Gauge({
    name: "rfq_circuit_open",
    help: "Circuit breaker state by dependency (1 open)",
    labelNames: ["dependency"] as const,
    registers: [this.registry],
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }
}

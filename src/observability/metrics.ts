/**
 * Prometheus metrics. One registry per app instance (tests create several apps in one process), so
 * nothing here is a module-level singleton.
 *
 * With WORKERS > 1 (src/http/cluster.ts) the primary serves /metrics for all workers through
 * prom-client's AggregatorRegistry: counters and histograms are summed over the workers; each gauge
 * says how it is combined (`aggregator`: a shared state's view is the same in every worker, so "max"
 * or "min", never a sum that would count it once per worker).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { buildInfo } from "./build-info.ts";

/**
 * A gauge without labels that has no sample until it is given a value, and none again once given
 * `undefined`: "no data" is an absent series (Prometheus' own way to say it; `rate < 0.95` is then
 * not true, and a panel shows "No data"), never a made-up value and never NaN.
 */
class OptionalGauge extends Gauge {
  private present = false;

  /** The value, or `undefined` for no sample. */
  setOptional(value: number | undefined): void {
    this.present = value !== undefined;
    if (value !== undefined) this.set(value);
  }

  override async get(): ReturnType<Gauge["get"]> {
    const metric = await super.get();
    return this.present ? metric : { ...metric, values: [] };
  }
}

/** What the scrape-time gauges read (see `Metrics.watch`). */
export interface WatchedPorts {
  config: Config;
  inventory: Inventory;
  controls: Controls;
  priceSources: ReadonlyMap<string, PriceSource>;
  now?: () => number;
}

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

  /** Swap answers by state (accepted, rejected, rejectedWithReason) and reason ("none" when none). */
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

  /**
   * Rolling one-hour fill rate (accepted and landed over swap requests); the operator's line is 0.95.
   * No sample while nothing was decided in the hour (no data is neither 1 nor 0, and never NaN): the
   * alerts read it with `fillRateDecided`.
   */
  readonly fillRate = new OptionalGauge({
    name: "rfq_fill_rate_1h",
    help: "Accepted-and-landed swaps over decided swap requests, rolling one hour (no sample while none was decided)",
    aggregator: "average",
    registers: [this.registry],
  });

  /** The fill rate's denominator: the alerts need a minimum volume before a ratio means anything. */
  readonly fillRateDecided = new Gauge({
    name: "rfq_fill_rate_decided_1h",
    help: "Swap requests decided (landed, failed or refused, honest rejections left out) in the rolling hour of rfq_fill_rate_1h",
    aggregator: "sum",
    registers: [this.registry],
  });

  /** Redis connection state per client (1 connected, 0 not): an outage shows here, not as a pause. */
  readonly redisUp = new Gauge({
    name: "rfq_redis_up",
    help: "Whether the Redis client is connected, by client",
    labelNames: ["client"] as const,
    aggregator: "min",
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
    aggregator: "max",
    registers: [this.registry],
  });

  /** Failed JSON-RPC calls (timeouts, transport errors, error answers), by method. */
  readonly rpcErrors = new Counter({
    name: "rfq_rpc_errors_total",
    help: "Failed Solana JSON-RPC calls, by method",
    labelNames: ["method"] as const,
    registers: [this.registry],
  });

  /** rfq_rpc_up, registered by `watchRpc` only when the chain is reached over JSON-RPC. */
  private rpcUp: Gauge | undefined;

  /** Markouts of landed fills in bps from the maker's side, by horizon and pair (src/ledger/markouts.ts). */
  readonly markout = new Histogram({
    name: "rfq_markout_bps",
    help: "Markout of landed fills in basis points from the maker's side (positive: in the maker's favour), by horizon after the fill and pair",
    labelNames: ["horizon", "pair"] as const,
    buckets: [-200, -100, -50, -25, -10, -5, 0, 5, 10, 25, 50, 100, 200],
    registers: [this.registry],
  });

  /** Markouts kept in memory while the ledger outbox cannot take them (src/ledger/markouts.ts). */
  readonly markoutsPending = new Gauge({
    name: "rfq_markouts_pending",
    help: "Markouts kept in memory because the ledger outbox could not take them (a Redis outage), appended once it answers",
    aggregator: "sum",
    registers: [this.registry],
  });

  readonly markoutsDropped = new Counter({
    name: "rfq_markouts_dropped_total",
    help: "Markouts dropped because too many were kept while the ledger outbox was down",
    registers: [this.registry],
  });

  /** Takers flagged for toxic flow, by who flagged them (markouts, admin); no taker label. */
  readonly toxicFlags = new Counter({
    name: "rfq_toxic_flags_total",
    help: "Takers flagged for toxic flow, by source (markouts: the flagger; admin: the admin API)",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });

  /** Quotes a taker's standing changed: widened or refused, by reason (TAKER_FLAGGED, TAKER_DENIED). */
  readonly toxicQuotes = new Counter({
    name: "rfq_toxic_quotes_total",
    help: "Quotes changed by the toxic-flow controls, by action (widened, refused) and reason (TAKER_FLAGGED, TAKER_DENIED)",
    labelNames: ["action", "reason"] as const,
    registers: [this.registry],
  });

  /** Swaps on indicative quotes refused botActivityDetected, by the taker's standing (flagged, denied). */
  readonly toxicSwapsRejected = new Counter({
    name: "rfq_toxic_swaps_rejected_total",
    help: "Swaps on indicative quotes rejected botActivityDetected because the taker is flagged or denied, by standing",
    labelNames: ["standing"] as const,
    registers: [this.registry],
  });

  /**
   * Fills whose compute-unit price a wallet raised above the quoted prioritizationFeeToUse: accepted
   * (within the raise cap) or refused (above it, RAISED_FEE_CAP_EXCEEDED, or no cap), so a maker sees
   * how often wallets do it.
   */
  readonly priorityFeeRaises = new Counter({
    name: "rfq_priority_fee_raises_total",
    help: "Fills whose compute-unit price was raised above the quoted one, by outcome (accepted: within the raise cap; refused)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  /** Ledger records (decisions, settlements) written to the database by this instance's writer. */
  readonly ledgerWritten = new Counter({
    name: "rfq_ledger_records_written_total",
    help: "Ledger records drained from the journal's outbox into the database, by kind",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });

  readonly ledgerWriteErrors = new Counter({
    name: "rfq_ledger_write_errors_total",
    help: "Failed ledger writes (the records stay in the outbox and are written on a later pass)",
    registers: [this.registry],
  });

  /** Outbox entries not yet in the database, as of the writer's last pass. */
  readonly ledgerBacklog = new Gauge({
    name: "rfq_ledger_backlog",
    help: "Ledger records waiting in the journal's outbox, as of the writer's last pass",
    aggregator: "max",
    registers: [this.registry],
  });

  /** Always 1; the labels say which build runs. */
  readonly buildInfo = new Gauge({
    name: "rfq_build_info",
    help: "The running build: package version, git commit, Node.js version",
    labelNames: ["version", "git_sha", "node_version"] as const,
    aggregator: "first",
    registers: [this.registry],
  });

  /**
   * `defaultMetrics`: prom-client's process metrics (CPU, memory, heap, event-loop lag, GC). main.ts
   * turns them on; tests, which build many services in one process, leave them off.
   */
  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    const b = buildInfo();
    this.buildInfo.set({ version: b.version, git_sha: b.gitSha, node_version: b.node }, 1);
    // Counters with a closed label set exist from the start at 0: `rate()` and `increase()` then see
    // the first event, and a dashboard shows 0 rather than "no data".
    for (const outcome of ["landed", "failed", "expired"]) this.fills.inc({ outcome }, 0);
    this.ledgerWriteErrors.inc(0);
    this.markoutsDropped.inc(0);
  }

  /**
   * Registers `rfq_rpc_up`: 1 when the last JSON-RPC call answered, 0 when it failed (timeout,
   * transport error, error answer). Called by the composition root when the chain is reached over
   * JSON-RPC (start-up has just probed it, so it starts at 1); with the in-process local chain there is
   * no RPC and no such series, so no "RPC down" alert. The blockhash cache polls once a second, so an
   * RPC that is down holds it at 0, and one failed call among good ones is undone within a second.
   */
  watchRpc(): void {
    this.rpcUp ??= new Gauge({
      name: "rfq_rpc_up",
      help: "Whether the last Solana JSON-RPC call answered (1) or failed (0); absent without an RPC",
      registers: [this.registry],
    });
    this.rpcUp.set(1);
  }

  /** One JSON-RPC call's outcome: a failure is counted on rfq_rpc_errors_total; both set rfq_rpc_up. */
  rpcCall(method: string, ok: boolean): void {
    this.rpcUp?.set(ok ? 1 : 0);
    if (!ok) this.rpcErrors.inc({ method });
  }

  /**
   * Gauges read from the ports at scrape time (nothing runs between scrapes): the maker's balances and
   * reservations by token, native SOL, each enabled pair's price age, and the switches (pause, pairs
   * switched off, whether the shared switches are known). Called once by the composition root.
   */
  watch(ports: WatchedPorts): void {
    const { config, inventory, controls, priceSources } = ports;
    const now = ports.now ?? Date.now;
    const registers = [this.registry];
    new Gauge({
      name: "rfq_mode_info",
      help: "Always 1; the label says how this instance runs: paper, production or acceptance",
      labelNames: ["mode"] as const,
      aggregator: "first",
      registers,
    }).set({ mode: config.mode }, 1);
    watchInventory(registers, config, inventory, now);
    watchPrices(registers, config, priceSources, now);
    watchSwitches(registers, controls);
  }
}

/** The maker's balances, reservations and floors by token, and native SOL with its floor and age. */
function watchInventory(
  registers: Registry[],
  config: Config,
  inventory: Inventory,
  now: () => number,
): void {
  const byToken = [
    ["rfq_inventory_balance_units", "balance", "Maker balance by token, smallest units (last chain read)"],
    [
      "rfq_inventory_reserved_units",
      "reserved",
      "Maker inventory reserved for claimed swaps not yet settled, by token, smallest units",
    ],
  ] as const;
  for (const [name, field, help] of byToken)
    new Gauge({
      name,
      help,
      labelNames: ["symbol", "mint"] as const,
      aggregator: "max",
      registers,
      collect() {
        this.reset();
        for (const h of inventory.snapshot().holdings)
          this.set({ symbol: h.symbol, mint: h.mint }, Number(h[field]));
      },
    });
  // The floors the alerts compare the balances with (deploy/monitoring/prometheus/alerts.yml): fixed by
  // the configuration, exported so that a rule needs no copy of them.
  const floors = new Gauge({
    name: "rfq_inventory_floor_units",
    help: "Each token's minInventory (below it the token is not advertised), smallest units",
    labelNames: ["symbol", "mint"] as const,
    registers,
  });
  for (const t of config.file.tokens)
    floors.set({ symbol: t.symbol, mint: t.mint }, Number(BigInt(t.minInventory)));
  new Gauge({
    name: "rfq_maker_sol_floor_lamports",
    help: "inventory.minSolLamports: below it the maker gives no quote (it could not pay the fees)",
    registers,
  }).set(Number(BigInt(config.file.inventory.minSolLamports)));
  new Gauge({
    name: "rfq_maker_sol_lamports",
    help: "Maker native SOL (fees and rent), lamports; absent before the first chain read",
    aggregator: "max",
    registers,
    collect() {
      this.reset();
      const lamports = inventory.snapshot().lamports;
      if (lamports !== undefined) this.set(Number(lamports));
    },
  });
  new Gauge({
    name: "rfq_inventory_balance_age_seconds",
    help: "Age of the balances in use; absent before the first chain read",
    aggregator: "max",
    registers,
    collect() {
      this.reset();
      const at = inventory.snapshot().balancesAtMs;
      if (at !== undefined) this.set(Math.max(0, now() - at) / 1000);
    },
  });
}

/** Each enabled pair's price age and the age its source allows. */
function watchPrices(
  registers: Registry[],
  config: Config,
  priceSources: ReadonlyMap<string, PriceSource>,
  now: () => number,
): void {
  const pairs = config.file.pairs.filter((p) => p.enabled);
  new Gauge({
    name: "rfq_price_age_seconds",
    help: "Age of each enabled pair's price; absent while the source has none",
    labelNames: ["pair", "source"] as const,
    aggregator: "max",
    registers,
    collect() {
      this.reset();
      for (const p of pairs) {
        const key = `${p.base}/${p.quote}`;
        const point = priceSources.get(p.priceSource)?.price(key);
        if (point)
          this.set({ pair: key, source: p.priceSource }, Math.max(0, now() - point.updatedAtMs) / 1000);
      }
    },
  });
  new Gauge({
    name: "rfq_price_max_age_seconds",
    help: "Each enabled pair's price source maxAgeMs in seconds (older prices are stale: no quote); +Inf for static prices",
    labelNames: ["pair", "source"] as const,
    registers,
    collect() {
      this.reset();
      for (const p of pairs) {
        const source = priceSources.get(p.priceSource);
        if (source) this.set({ pair: `${p.base}/${p.quote}`, source: p.priceSource }, source.maxAgeMs / 1000);
      }
    },
  });
}

/** The switches: the kill switch, whether the shared switches are known, the pairs switched off. */
function watchSwitches(registers: Registry[], controls: Controls): void {
  new Gauge({
    name: "rfq_paused",
    help: "1 while the kill switch (POST /admin/pause) is on",
    aggregator: "max",
    registers,
    collect() {
      this.set(controls.state().paused ? 1 : 0);
    },
  });
  new Gauge({
    name: "rfq_controls_known",
    help: "0 while the shared switches cannot be read (the instance then refuses to quote)",
    aggregator: "min",
    registers,
    collect() {
      this.set(controls.state().known ? 1 : 0);
    },
  });
  new Gauge({
    name: "rfq_pair_switched_off",
    help: "1 for each pair switched off at runtime (PUT /admin/pairs)",
    labelNames: ["pair"] as const,
    aggregator: "max",
    registers,
    collect() {
      this.reset();
      for (const [pair, enabled] of Object.entries(controls.state().pairs))
        if (!enabled) this.set({ pair }, 1);
    },
  });
}

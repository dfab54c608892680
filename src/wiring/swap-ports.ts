/**
 * The swap path's ports, built once by its wiring (src/wiring/swap.ts) and by the tests that drive the
 * executor alone: the fill journal
 * (Redis when the deployment has one, so fills in flight survive a restart and are shared by every
 * instance; memory otherwise), the fill-rate view, the confirmation tracker and the executor.
 */
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { Chain } from "../chain/interface.ts";
import { RecentBlockhashes } from "../chain/recent-blockhashes.ts";
import type { IssuancePorts } from "../issuance/ports.ts";
import type { FillJournal, PendingFill } from "../journal/interface.ts";
import { MemoryFillJournal } from "../journal/memory.ts";
import { RedisFillJournal } from "../journal/redis.ts";
import type { Signer } from "../keys/index.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { QuoteStore } from "../quote-store/interface.ts";
import type { RedisClient } from "../redis/client.ts";
import { ConfirmationTracker } from "../swap/confirmations.ts";
import { SwapExecutor, type SwapExecutorOptions } from "../swap/executor.ts";
import { FillRate } from "../swap/fill-rate.ts";

/** Tunables of the swap path; every one has a default. */
export interface SwapTuning
  extends Partial<
    Pick<
      SwapExecutorOptions,
      | "budgetMs"
      | "steps"
      | "inFlightPollMs"
      | "expirySafetySeconds"
      | "expiryGraceSeconds"
      | "reservationTtlMs"
      | "trackForMs"
      /** The executor's own clock (tests move it to expire quotes); defaults to the service clock. */
      | "now"
    >
  > {
  /** Interval between confirmation polls, ms (default 1,000). */
  confirmationPollMs?: number;
  /** Interval between fill-rate log lines, ms (default 60,000). */
  fillRateReportMs?: number;
}

export interface SwapPortDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  store: QuoteStore;
  chain: Chain;
  inventory: Inventory;
  signer: Signer;
  redis?: RedisClient;
  /** Where the Redis fill journal keeps its keys (config/load.ts `redisKeys`: `<redisPrefix>swap:`). */
  journalPrefix?: string;
  now?: () => number;
  tuning?: SwapTuning;
  /** Journal decisions and settlements into the ledger outbox (a ledger writer drains it). */
  ledger?: boolean;
  /** Told once per landed fill (markouts). */
  onLanded?: (fill: PendingFill) => void;
  /** The takers' standing (toxicity.enabled): a flagged or denied taker's fill of an indicative quote is refused. */
  takers?: SwapExecutorOptions["takers"];
  /** Permissioned tokens the maker issues (mint or burn in a bundle with the fill). */
  issuance?: IssuancePorts;
}

export interface SwapPorts {
  executor: SwapExecutor;
  /** The background cache of recent blockhashes the executor judges fills' blockhashes with. */
  blockhashes: RecentBlockhashes;
  confirmations: ConfirmationTracker;
  fillRate: FillRate;
  journal: FillJournal;
  /** Resumes fills journaled before a restart and starts the background loops. */
  start(): Promise<void>;
  /** Stops the background loops (fills still in flight stay journaled for the next start). */
  close(): Promise<void>;
}

/** Builds the swap path's ports; call `start()` before serving. */
export function createSwapPorts(deps: SwapPortDeps): SwapPorts {
  const { config, log, metrics, tuning = {} } = deps;
  const now = deps.now ?? Date.now;
  const journal: FillJournal = deps.redis
    ? new RedisFillJournal(deps.redis, deps.journalPrefix ?? "rfq:swap:")
    : new MemoryFillJournal(now);
  const fillRate = new FillRate({ metrics, log, now });
  const confirmations = new ConfirmationTracker({
    chain: deps.chain,
    inventory: deps.inventory,
    journal,
    metrics,
    log,
    fillRate,
    now,
    ...(deps.ledger ? { ledger: true } : {}),
    ...(deps.onLanded ? { onLanded: deps.onLanded } : {}),
    ...(deps.issuance ? { issuance: deps.issuance.usage } : {}),
    ...(deps.issuance?.bundles ? { bundles: deps.issuance.bundles } : {}),
    ...(tuning.confirmationPollMs !== undefined ? { pollMs: tuning.confirmationPollMs } : {}),
  });
  // Wall time, not the service clock: block heights follow real time (tests move the service clock).
  const blockhashes = new RecentBlockhashes(deps.chain, { pollMs: config.file.limits.blockhashPollMs });
  const { confirmationPollMs: _p, fillRateReportMs, ...executorTuning } = tuning;
  const executor = new SwapExecutor({
    blockhashes,
    config,
    store: deps.store,
    chain: deps.chain,
    inventory: deps.inventory,
    signer: deps.signer,
    confirmations,
    fillRate,
    now,
    log,
    ...(deps.ledger ? { ledgerJournal: journal } : {}),
    metrics,
    ...(deps.takers ? { takers: deps.takers } : {}),
    ...(deps.issuance ? { issuance: deps.issuance } : {}),
    ...executorTuning,
  });
  return {
    executor,
    blockhashes,
    confirmations,
    fillRate,
    journal,
    async start() {
      await blockhashes.start();
      await confirmations.start();
      fillRate.start(fillRateReportMs);
    },
    async close() {
      blockhashes.stop();
      fillRate.stop();
      await confirmations.stop();
    },
  };
}

/**
 * The swap path's ports, built once by its wiring (src/wiring/swap.ts) and by the tests that drive the
 * executor alone: the fill journal
 * (Redis when the deployment has one, so fills in flight survive a restart and are shared by every
 * instance; memory otherwise), the fill-rate view, the confirmation tracker and the executor.
 */
import type { Config } from "../../config/load.ts";
import { RecentBlockhashes } from "../chain/recent-blockhashes.ts";
import type { FillJournal, PendingFill } from "../journal/interface.ts";
import { MemoryFillJournal } from "../journal/memory.ts";
import { RedisFillJournal } from "../journal/redis.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { RedisClient } from "../redis/client.ts";
import { ConfirmationTracker } from "../swap/confirmations.ts";
import {
  type SwapTuning as ExecutorTuning,
  type StepPorts,
  SwapExecutor,
  swapSettings,
} from "../swap/executor.ts";
import { FillRate } from "../swap/fill-rate.ts";

/** Tunables of the swap path; every one has a default. */
export interface SwapTuning extends ExecutorTuning {
  /** Interval between confirmation polls, ms (default 1,000). */
  confirmationPollMs?: number;
  /** Interval between fill-rate log lines, ms (default 60,000). */
  fillRateReportMs?: number;
}

/** The ports the swap path is given (the rest of the executor's ports are built here). */
export type GivenSwapPorts = Pick<
  StepPorts,
  "store" | "chain" | "inventory" | "signer" | "takers" | "issuance" | "mids"
>;

export interface SwapPortDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** Passed to the executor as they are; the takers' standing and the issuer's ports are optional. */
  ports: GivenSwapPorts;
  redis?: RedisClient;
  /** Where the Redis fill journal keeps its keys (config/load.ts `redisKeys`: `<redisPrefix>swap:`). */
  journalPrefix?: string;
  /** The service clock; `tuning.now` (the executor's own clock, which tests move) overrides it there. */
  now?: () => number;
  tuning?: SwapTuning;
  /** Journal decisions and settlements into the ledger outbox (a ledger writer drains it). */
  ledger?: boolean;
  /** Told once per landed fill (markouts). */
  onLanded?: (fill: PendingFill) => void;
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
  const { config, log, metrics, ports, tuning = {} } = deps;
  const now = deps.now ?? Date.now;
  const journal: FillJournal = deps.redis
    ? new RedisFillJournal(deps.redis, deps.journalPrefix ?? "rfq:swap:")
    : new MemoryFillJournal(now);
  const fillRate = new FillRate({ metrics, log, now });
  const confirmations = new ConfirmationTracker({
    chain: ports.chain,
    inventory: ports.inventory,
    journal,
    metrics,
    log,
    fillRate,
    now,
    ...(deps.ledger ? { ledger: true } : {}),
    ...(deps.onLanded ? { onLanded: deps.onLanded } : {}),
    ...(ports.issuance ? { issuance: ports.issuance.usage } : {}),
    ...(ports.issuance?.bundles ? { bundles: ports.issuance.bundles } : {}),
    ...(tuning.confirmationPollMs !== undefined ? { pollMs: tuning.confirmationPollMs } : {}),
  });
  // Wall time, not the service clock: block heights follow real time (tests move the service clock).
  const blockhashes = new RecentBlockhashes(ports.chain, { pollMs: config.file.limits.blockhashPollMs });
  const { confirmationPollMs: _p, fillRateReportMs, ...executorTuning } = tuning;
  const executor = new SwapExecutor(
    {
      ...ports,
      blockhashes,
      confirmations,
      fillRate,
      log,
      metrics,
      ...(deps.ledger ? { ledgerJournal: journal } : {}),
    },
    swapSettings(config, { now, ...executorTuning }),
  );
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

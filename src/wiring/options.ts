/**
 * What every channel's wiring (this folder) is built with: the settings (`Wiring`: the configuration,
 * the logger, the metrics, the clock, the Redis connection and keys) and the ports a caller may hand
 * in ready-made (`ComposeOptions`: tests share one Redis or one local chain between two "instances").
 * Each wiring function takes these two objects as they are, never field by field, and registers
 * what it starts in `closers` so that the root (src/compose.ts) stops them in reverse order.
 */
import type { Config, redisKeys } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { Chain } from "../chain/interface.ts";
import type { MadeBundlePort } from "../chain/make.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { MarkoutHorizon } from "../ledger/markouts.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { RedisClient } from "../redis/client.ts";
import type { KeypairSigner } from "../signing/keypair.ts";
import type { Signer } from "../signing/port.ts";
import type { SwapTuning } from "./swap-ports.ts";

export interface ComposeOptions {
  log?: Logger;
  metrics?: Metrics;
  /** A shared Redis connection; otherwise one is opened from REDIS_URL (or the cluster / Sentinel settings). */
  redis?: RedisClient;
  /** Overrides the config's `redisPrefix` (tests isolate themselves with it). */
  redisPrefix?: string;
  chain?: Chain;
  /** The bundle port (default: makeBundlePort's choice for this configuration and chain). */
  bundles?: MadeBundlePort;
  signer?: Signer;
  now?: () => number;
  /** Swap-path tunables (budget, step timeouts, confirmation poll interval); see src/wiring/swap-ports.ts. */
  swap?: SwapTuning;
  /** How long start-up waits for Redis and the RPC before giving up with a StartupError (ms, 5,000). */
  startTimeoutMs?: number;
  /**
   * Ready-made, already started ports that the caller owns and closes (tests share them between two
   * instances, or drive their clocks); everything else is built here as `npm start` builds it.
   */
  priceSources?: ReadonlyMap<string, PriceSource>;
  inventory?: Inventory;
  controls?: Controls;
  /**
   * A ready-made, migrated fill ledger the caller owns and closes; otherwise one is opened as the
   * configuration says (DATABASE_URL, else PGlite in DATA_DIR; none with LEDGER=off).
   */
  ledger?: Ledger;
  /** The issuer key (tests); else ISSUER_KEYPAIR, or the paper setup's generated one (src/issuance/issuer.ts). */
  issuer?: KeypairSigner;
  /** The issuance usage (shared between two "instances" in tests); else built here. */
  issuanceUsage?: IssuanceUsage;
  /** Markout horizons (default 0 s, 5 s, 60 s, 5 min; tests shorten them). */
  markoutHorizons?: readonly MarkoutHorizon[];
  /** How often markouts keep each pair's mid for horizons that come due unseen (ms, 1,000; tests shorten it). */
  markoutSampleMs?: number;
  /** The ledger writer's tunables (tests drain quickly). */
  ledgerWriter?: { intervalMs?: number; staleMs?: number; batch?: number };
  /** false: no RFQ v2 stream in this process even with RFQ_V2_URL (every worker but the first). */
  rfqV2?: boolean;
}

export type Closers = (() => Promise<unknown>)[];

/** The settings every channel's wiring reads. */
export interface Wiring {
  config: Config;
  given: ComposeOptions;
  log: Logger;
  metrics: Metrics;
  now: () => number;
  keys: ReturnType<typeof redisKeys>;
  redis: RedisClient | undefined;
  startTimeoutMs: number;
  closers: Closers;
}

/** Registers a port this process started, to be closed with the others, and returns it. */
export function owned<T extends { close(): Promise<unknown> | unknown }>(w: Wiring, port: T): T {
  w.closers.push(async () => port.close());
  return port;
}

export async function closeAll(closers: Closers): Promise<void> {
  for (const close of closers.reverse()) await close().catch(() => {});
  closers.length = 0;
}

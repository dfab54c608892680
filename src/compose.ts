/**
 * The composition root: builds every port from the configuration exactly once and hands them to the
 * app. main.ts, the test harnesses and the benchmarks all compose through here, so what is tested is
 * what runs. Each channel is wired by its own function in src/wiring/ (keys, chain, shared state,
 * quote, swap with its ledger records, RFQ v2), in the order listed below; any port may be passed in
 * ready-made (`ComposeOptions`: tests share one Redis or one local chain between two "instances").
 */

import type { Config } from "../config/load.ts";
import { redisKeys } from "../config/load.ts";
import type { Inventory } from "../inventory/interface.ts";
import type { TokenLists } from "../inventory/token-lists.ts";
import type { QuotingBook } from "../pricing/book.ts";
import type { Controls } from "../pricing/controls/interface.ts";
import type { PriceSource } from "../pricing/interface.ts";
import type { UsdValuer } from "../pricing/usd.ts";
import { createApp, createOpsApp } from "./app.ts";
import type { Chain } from "./chain/interface.ts";
import type { SeededToken } from "./chain/local/seed.ts";
import type { MadeBundlePort } from "./chain/make.ts";
import type { FillPathHealth } from "./health/fill-path.ts";
import type { Issuer } from "./issuance/issuer.ts";
import type { IssuancePorts } from "./issuance/ports.ts";
import type { Ledger } from "./ledger/ledger.ts";
import type { MarkoutTracker } from "./ledger/markouts.ts";
import type { LedgerWriter } from "./ledger/writer.ts";
import type { Conditions } from "./observability/conditions.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import type { QuoteStore } from "./quote-store/interface.ts";
import type { Circuit } from "./redis/circuit.ts";
import { createRedisClient, type RedisClient, redisTarget, waitReady } from "./redis/client.ts";
import type { RfqV2Service } from "./rfq-v2/service.ts";
import { registerAdminRoutes } from "./routes/admin.ts";
import type { ReadinessProbe } from "./routes/health.ts";
import type { Signer } from "./signing/port.ts";
import type { TakerStanding } from "./toxicity/interface.ts";
import { wireChain } from "./wiring/chain.ts";
import { trackLedger, wireHealth } from "./wiring/health.ts";
import { wireLedger } from "./wiring/ledger.ts";
import { type ComposeOptions, closeAll, type Wiring } from "./wiring/options.ts";
import { configuredParts } from "./wiring/parts.ts";
import { wireQuote } from "./wiring/quote.ts";
import { wireRfqV2 } from "./wiring/rfq-v2.ts";
import { wireKeys } from "./wiring/signer.ts";
import { START_TIMEOUT_MS } from "./wiring/startup-checks.ts";
import { wireState } from "./wiring/state.ts";
import { wireSwap } from "./wiring/swap.ts";
import type { SwapPorts } from "./wiring/swap-ports.ts";

export interface Service {
  config: Config;
  /** The operator's listener (PORT): operator routes, /health, /ready. */
  app: ReturnType<typeof createApp>;
  /** The operations listener (ADMIN_PORT, loopback by default): /metrics, /admin/*, /health, /ready. */
  opsApp: ReturnType<typeof createOpsApp>;
  log: Logger;
  metrics: Metrics;
  store: QuoteStore;
  chain: Chain;
  /** How permissioned fills land atomically (a block engine, or the local one), or why they cannot. */
  bundles: MadeBundlePort;
  signer: Signer;
  inventory: Inventory;
  controls: Controls;
  book: QuotingBook;
  tokenLists: TokenLists;
  priceSources: ReadonlyMap<string, PriceSource>;
  /** USD values over the price sources (src/wiring/parts.ts). */
  usd: UsdValuer;
  redis?: RedisClient;
  /** Set when this process created and seeded a local chain. */
  seeded?: SeededToken[];
  /** Whether the maker key was generated on this start (paper setup). */
  keyCreated: boolean;
  /** The issuer key and the issuance ports, when the configuration issues permissioned tokens. */
  issuer?: Issuer;
  issuance?: IssuancePorts;
  /** The swap executor and its background parts (absent in acceptance mode). */
  swapPorts?: SwapPorts;
  /** The fill ledger and its writer; absent with LEDGER=off and in acceptance mode. */
  ledger?: Promise<Ledger>;
  ledgerWriter?: LedgerWriter;
  /** Markout sampling of landed fills (with a ledger). */
  markouts?: MarkoutTracker;
  /** The toxic-flow controls' taker lists (toxicity.enabled only). */
  takers?: TakerStanding;
  /** The quote store's circuit breaker on the quote path. */
  storeCircuit: Circuit;
  /** Whether the swap path can fill right now: the quote path's 404s while a dependency fails. */
  fillPath: FillPathHealth;
  /** Shutdown state the apps read: set `draining` and /ready answers 503 (src/http/shutdown.ts). */
  lifecycle: { draining: boolean };
  /**
   * Named conditions on /ready and in the log (src/observability/conditions.ts): a configured token not
   * advertised, a stale price (src/wiring/quotable.ts); other parts add their own.
   */
  conditions: Conditions;
  /** The RFQ v2 level stream, when RFQ_V2_URL is set (in one process of the service). */
  rfqV2?: RfqV2Service;
  close(): Promise<void>;
}

/**
 * Builds and starts every port, then the apps. `close()` stops them in reverse order. A dependency
 * that cannot be reached at start (Redis, the RPC, the maker key file) throws a StartupError naming
 * its setting, and whatever was already started is stopped again.
 */
export async function composeService(config: Config, given: ComposeOptions = {}): Promise<Service> {
  const log = given.log ?? createLogger(config.env.LOG_LEVEL);
  const metrics = given.metrics ?? new Metrics();
  const closers: Wiring["closers"] = [];
  try {
    const target = given.redis ? undefined : redisTarget(config.env);
    const redis = given.redis ?? (target && createRedisClient(target, { client: "main", log, metrics }));
    if (target && redis) closers.push(async () => redis.disconnect());
    const w: Wiring = {
      config,
      given,
      log,
      metrics,
      now: given.now ?? Date.now,
      keys: redisKeys(config.file, given.redisPrefix),
      redis,
      startTimeoutMs: given.startTimeoutMs ?? START_TIMEOUT_MS,
      closers,
    };
    return await wireChannels(w, target);
  } catch (e) {
    await closeAll(closers);
    throw e;
  }
}

/** Every channel, in the order each needs the ones before it, then the two listeners' apps. */
async function wireChannels(w: Wiring, target: ReturnType<typeof redisTarget>): Promise<Service> {
  const { config, given, redis, log, metrics, now } = w;
  // Every entry point builds these the same way: a configuration refused here is refused by all.
  const parts = configuredParts(config, {
    ...(redis ? { redis } : {}),
    log,
    now,
    ...(given.priceSources ? { priceSources: given.priceSources } : {}),
  });
  if (target && redis) await waitReady(redis, target.setting, target.address, w.startTimeoutMs);
  const keys = await wireKeys(w);
  const chain = await wireChain(w, keys);
  const health = wireHealth(w, keys, chain);
  // The issuance sends its bundles through the watched port: its failures count in the fill path's health.
  const state = await wireState(w, parts, keys, { ...chain, bundles: health.bundles });
  const quote = await wireQuote(w, parts, keys, state, health);
  const { ledger } = await wireLedger(w);
  await trackLedger(health, ledger);
  const swap = await wireSwap(w, ledger, { parts, keys, chain, state, health });
  const rfqV2 = await wireRfqV2(w, ledger, { book: quote.book, keys, chain, state, swap, health });
  // Every dependency's state known before the first quote is answered.
  await health.fillPath.start();
  health.fillPath.report(quote.conditions);
  const lifecycle = { draining: false };
  const probes: ReadinessProbe[] = [
    ["quoteStore", () => state.store.ping()],
    ["chain", () => chain.chain.ping()],
    ...health.fillPath.readiness(),
  ];
  const draining = () => lifecycle.draining;
  const app = createApp({
    ...{ config, log, metrics, probes, draining, now, conditions: quote.conditions },
    ...{ store: state.store, quotes: quote.quotes, swap: swap.swap, tokenLists: quote.tokenLists },
    storeCircuit: quote.storeCircuit,
  });
  const opsApp = createOpsApp({
    ...{ config, log, metrics, probes, draining, conditions: quote.conditions },
    adminRoutes: (root) =>
      registerAdminRoutes(root, {
        adminApiKey: config.env.ADMIN_API_KEY,
        ...{ controls: state.controls, inventory: state.inventory, metrics, now },
        pairs: config.file.pairs.map((p) => `${p.base}/${p.quote}`),
        ...(ledger ? { ledger } : {}),
        tokensByMint: config.tokensByMint,
        toxicLine: config.file.toxicity,
        ...(state.takers ? { takers: state.takers } : {}),
      }),
  });
  return {
    ...{ config, app, opsApp, log, metrics, lifecycle, keyCreated: keys.keyCreated, signer: keys.signer },
    ...{ store: state.store, inventory: state.inventory, controls: state.controls },
    ...{ chain: chain.chain, bundles: chain.bundles, priceSources: parts.priceSources, usd: parts.usd },
    ...{ book: quote.book, tokenLists: quote.tokenLists, storeCircuit: quote.storeCircuit },
    conditions: quote.conditions,
    fillPath: health.fillPath,
    ...(redis ? { redis } : {}),
    ...(chain.seeded ? { seeded: chain.seeded } : {}),
    ...(keys.issuer ? { issuer: keys.issuer } : {}),
    ...(state.issuance ? { issuance: state.issuance } : {}),
    ...(state.takers ? { takers: state.takers } : {}),
    ...(swap.swapPorts ? { swapPorts: swap.swapPorts } : {}),
    ...(ledger ? { ledger } : {}),
    ...(swap.records ? { ledgerWriter: swap.records.writer, markouts: swap.records.markouts } : {}),
    ...(rfqV2 ? { rfqV2 } : {}),
    close: () => closeAll(w.closers),
  };
}

/**
 * The composition root: builds every port from the configuration exactly once and hands them to the
 * app. main.ts, the test harnesses and the benchmarks all compose through here, so what is tested is
 * what runs. Any port may be passed in ready-made (tests share one Redis or one local chain between
 * two "instances").
 */

import { userInfo } from "node:os";
import { join } from "node:path";
import { type Config, redisKeys } from "../config/load.ts";
import { AdvertisedTokenLists } from "../inventory/advertised.ts";
import { FileAdvertisedStore } from "../inventory/advertised-store/file.ts";
import { RedisAdvertisedStore } from "../inventory/advertised-store/redis.ts";
import type { Inventory } from "../inventory/interface.ts";
import type { IssuanceUsage } from "../inventory/issuance/interface.ts";
import { MemoryIssuanceUsage } from "../inventory/issuance/memory.ts";
import { RedisIssuanceUsage } from "../inventory/issuance/redis.ts";
import { MemoryInventory } from "../inventory/memory.ts";
import { RedisInventory } from "../inventory/redis.ts";
import type { TokenLists } from "../inventory/token-lists.ts";
import { QuotingBook } from "../pricing/book.ts";
import type { Controls } from "../pricing/controls/interface.ts";
import { MemoryControls } from "../pricing/controls/memory.ts";
import { RedisControls } from "../pricing/controls/redis.ts";
import type { PriceSource } from "../pricing/interface.ts";
import type { UsdValuer } from "../pricing/usd.ts";
import { AcceptanceSwapHandler } from "./acceptance/swap.ts";
import { createApp, createOpsApp } from "./app.ts";
import type { Chain } from "./chain/interface.ts";
import type { SeededToken } from "./chain/local/seed.ts";
import { type MadeBundlePort, type MadeChain, makeBundlePort, makeChain } from "./chain/make.ts";
import { parseRpcUrls, probeRpcEndpoint, redactUrl } from "./chain/rpc.ts";
import { configuredParts } from "./composition/parts.ts";
import { describeCause, StartupError } from "./errors/startup.ts";
import { FillPathHealth, watchChain, watchSigner } from "./health/fill-path.ts";
import { type Issuer, loadIssuer, localIssuer } from "./issuance/issuer.ts";
import { IssuancePolicies } from "./issuance/policy.ts";
import type { IssuancePorts } from "./issuance/ports.ts";
import { type KeypairSigner, makeSigner, type Signer } from "./keys/index.ts";
import type { Ledger } from "./ledger/ledger.ts";
import { type MarkoutHorizon, MarkoutTracker } from "./ledger/markouts.ts";
import { ledgerLocation, openLedger } from "./ledger/open.ts";
import { LedgerWriter } from "./ledger/writer.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import { QuoteService } from "./quote/service.ts";
import type { QuoteStore } from "./quote-store/interface.ts";
import { MemoryQuoteStore } from "./quote-store/memory.ts";
import { RedisQuoteStore } from "./quote-store/redis.ts";
import { Circuit } from "./redis/circuit.ts";
import { createRedisClient, type RedisClient, redisTarget, waitReady } from "./redis/client.ts";
import { rfqV2Metrics } from "./rfq-v2/metrics.ts";
import type { RfqV2Service } from "./rfq-v2/service.ts";
import { rfqV2Settings } from "./rfq-v2/settings.ts";
import { registerAdminRoutes } from "./routes/admin.ts";
import type { ReadinessProbe } from "./routes/health.ts";
import { RemoteSigner } from "./signer/remote.ts";
import type { SwapHandler } from "./swap/handler.ts";
import { createSwapPorts, type SwapPorts, type SwapTuning } from "./swap/service.ts";
import { ToxicFlagger } from "./toxicity/flagger.ts";
import type { TakerStanding } from "./toxicity/interface.ts";
import { MemoryTakerStanding } from "./toxicity/memory.ts";
import { RedisTakerStanding } from "./toxicity/redis.ts";

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
  /** Swap-path tunables (budget, step timeouts, confirmation poll interval); see src/swap/service.ts. */
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
  /** USD values over the price sources (src/composition/parts.ts). */
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
  /** The RFQ v2 level stream, when RFQ_V2_URL is set (in one process of the service). */
  rfqV2?: RfqV2Service;
  close(): Promise<void>;
}

type Closers = (() => Promise<unknown>)[];

/**
 * A fill dependency's probe slower than this is a failure: a healthy RPC, signer or database answers
 * in tens of ms, and a call slower than a second leaves a fill too little of its swap budget.
 */
const FILL_PROBE_TIMEOUT_MS = 1_000;

/** SIGNER_URL: the signer service holds the key; this process asks it (src/signer/remote.ts). */
async function connectRemoteSigner(config: Config, closers: Closers): Promise<Signer> {
  const url = config.env.SIGNER_URL as string;
  try {
    const remote = await RemoteSigner.connect({
      url,
      ...(config.env.SIGNER_CA ? { caFile: config.env.SIGNER_CA } : {}),
      ...(config.env.SIGNER_CLIENT_CERT ? { clientCertFile: config.env.SIGNER_CLIENT_CERT } : {}),
      ...(config.env.SIGNER_CLIENT_KEY ? { clientKeyFile: config.env.SIGNER_CLIENT_KEY } : {}),
      timeoutMs: config.env.SIGNER_TIMEOUT_MS,
    });
    closers.push(async () => remote.close());
    return remote;
  } catch (e) {
    throw new StartupError("SIGNER_URL", url, `not reachable: ${describeCause(e)}`);
  }
}

async function closeAll(closers: Closers): Promise<void> {
  for (const close of closers.reverse()) await close().catch(() => {});
  closers.length = 0;
}

/**
 * Builds and starts every port, then the app. `close()` stops them in reverse order. A dependency
 * that cannot be reached at start (Redis, the RPC, the maker key file) throws a StartupError naming
 * its setting, and whatever was already started is stopped again.
 */
export async function composeService(config: Config, opts: ComposeOptions = {}): Promise<Service> {
  const closers: Closers = [];
  try {
    return await buildService(config, opts, closers);
  } catch (e) {
    await closeAll(closers);
    throw e;
  }
}

async function buildService(config: Config, opts: ComposeOptions, closers: Closers): Promise<Service> {
  const log = opts.log ?? createLogger(config.env.LOG_LEVEL);
  const metrics = opts.metrics ?? new Metrics();
  const now = opts.now ?? Date.now;
  const startTimeoutMs = opts.startTimeoutMs ?? 5_000;
  const keys = redisKeys(config.file, opts.redisPrefix);

  let redis = opts.redis;
  const target = redis ? undefined : redisTarget(config.env);
  if (target) {
    const owned = createRedisClient(target, { client: "main", log, metrics });
    closers.push(async () => owned.disconnect());
    redis = owned;
  }
  // Every entry point builds these the same way: a configuration refused here is refused by all.
  const parts = configuredParts(config, {
    ...(redis ? { redis } : {}),
    log,
    now,
    ...(opts.priceSources ? { priceSources: opts.priceSources } : {}),
  });
  if (target && redis) await waitReady(redis, target.setting, target.address, startTimeoutMs);

  const { signer, created: keyCreated } = opts.signer
    ? { signer: opts.signer, created: false }
    : config.env.SIGNER_URL
      ? { signer: await connectRemoteSigner(config, closers), created: false }
      : (() => {
          try {
            return makeSigner(config);
          } catch (e) {
            const cause = describeCause(e);
            // EACCES alone does not say for whom: name the user this process runs as (the image's `node`).
            const who = /\bEACCES\b/.test(cause) ? ` (not readable by ${processUser()})` : "";
            throw new StartupError("MAKER_KEYPAIR", config.env.MAKER_KEYPAIR ?? "", `${cause}${who}`);
          }
        })();

  const issuer: Issuer | undefined =
    opts.issuer && Object.keys(config.file.issuance).length > 0
      ? localIssuer(opts.issuer, signer, "given", false)
      : loadIssuer(config, signer, signer instanceof RemoteSigner ? signer : undefined);

  if (!opts.chain && config.env.RPC_URL) {
    const first = parseRpcUrls(config.env.RPC_URL)[0] as string;
    const problem = await probeRpcEndpoint(first, startTimeoutMs);
    if (problem) throw new StartupError("RPC_URL", redactUrl(first), `not reachable: ${problem}`);
  }

  const made: MadeChain = opts.chain
    ? { chain: opts.chain, note: opts.chain.description }
    : await makeChain(config, signer.publicKey, {
        onRpcError: (method) => metrics.rpcCall(method, false),
        onRpcOk: (method) => metrics.rpcCall(method, true),
        ...(issuer ? { issuer: issuer.publicKey } : {}),
      });
  const chain = made.chain;
  if (!opts.chain && config.env.RPC_URL) metrics.watchRpc();
  const seeded = made.seeded;
  closers.push(() => chain.close());
  const bundles = opts.bundles ?? (await makeBundlePort(config.env, chain));
  if (bundles.port) {
    const port = bundles.port;
    closers.push(() => port.close());
  }

  const store: QuoteStore = redis
    ? new RedisQuoteStore(redis, keys.quotes, {
        now,
        retainAfterExpiryMs: config.file.limits.quoteRetainAfterExpiryMs,
      })
    : new MemoryQuoteStore(
        config.file.limits.memoryStoreMaxQuotes,
        now,
        config.file.limits.quoteRetainAfterExpiryMs,
      );
  closers.push(() => store.close());

  const { priceSources, usd } = parts;
  if (!opts.priceSources) {
    closers.push(() => parts.close());
    for (const s of priceSources.values()) await s.start();
  }

  let inventory = opts.inventory;
  if (!inventory) {
    const inventoryOpts = { config, chain, maker: signer.publicKey, usd, log, now };
    const own: Inventory = redis
      ? new RedisInventory(redis, inventoryOpts, keys.inventory)
      : new MemoryInventory(inventoryOpts);
    await own.start();
    closers.push(() => own.close());
    inventory = own;
  }
  const inv = inventory;

  let controls = opts.controls;
  if (!controls) {
    const ctl = config.file.controls;
    const own: Controls = redis
      ? new RedisControls(redis, {
          prefix: keys.controls,
          pollMs: ctl.pollMs,
          failClosedAfterMs: ctl.failClosedAfterMs,
          log,
          now,
        })
      : new MemoryControls(now);
    await own.start();
    closers.push(() => own.close());
    controls = own;
  }

  metrics.watch({ config, inventory, controls, priceSources, now });

  const book = new QuotingBook(config, priceSources, {
    now,
    position: (mint) => inv.position(mint),
    controls,
    usd,
  });
  const tokenLists = new AdvertisedTokenLists(config, inventory, {
    store: redis
      ? new RedisAdvertisedStore(redis, keys.advertised)
      : new FileAdvertisedStore(join(config.env.DATA_DIR, "advertised.json")),
    log,
  });
  await tokenLists.start();
  closers.push(() => tokenLists.close());
  // The toxic-flow controls: off unless toxicity.enabled, and then read in memory on both paths.
  const tox = config.file.toxicity;
  let takers: TakerStanding | undefined;
  if (tox.enabled) {
    const own: TakerStanding = redis
      ? new RedisTakerStanding(redis, tox, { prefix: keys.toxicity, reloadMs: tox.reloadMs, log, now })
      : new MemoryTakerStanding(tox, now);
    await own.start();
    closers.push(() => own.close());
    takers = own;
  }
  let issuance: IssuancePorts | undefined;
  if (issuer) {
    let issuanceUsage = opts.issuanceUsage;
    if (!issuanceUsage) {
      const own: IssuanceUsage = redis
        ? new RedisIssuanceUsage(redis, keys.issuance, { syncMs: config.file.inventory.syncMs, now })
        : new MemoryIssuanceUsage();
      await own.start();
      closers.push(() => own.close());
      issuanceUsage = own;
    }
    issuance = {
      policies: new IssuancePolicies(config),
      usage: issuanceUsage,
      companions: issuer.companions,
      bundles: bundles.port ?? undefined,
      ...(bundles.port ? {} : { unavailable: bundles.reason }),
    };
  }
  // What a fill needs beyond this process: the RPC (a remote chain), the signer service, the ledger
  // database. Each is watched on the swap path's own calls and probed when idle (src/health/).
  // Wall time, not the service clock: probe intervals and timeouts are real time (tests move the clock).
  const fillPath = new FillPathHealth({ log });
  closers.push(async () => fillPath.close());
  const remoteChain = !opts.chain && config.env.RPC_URL !== undefined && config.env.RPC_URL !== "";
  const rpcHealth = remoteChain
    ? fillPath.track({
        name: "rpc",
        what: `the RPC (${made.note})`,
        timeoutMs: FILL_PROBE_TIMEOUT_MS,
        probe: () => chain.getLatestBlockhash(),
      })
    : undefined;
  const signerHealth =
    signer instanceof RemoteSigner
      ? fillPath.track({
          name: "signer",
          what: `the signer service (${signer.description})`,
          timeoutMs: FILL_PROBE_TIMEOUT_MS,
          probe: () => signer.keys(),
        })
      : undefined;
  const quotes = new QuoteService({
    fillPath,
    config,
    book,
    inventory,
    maker: signer.publicKey.toBase58(),
    ...(takers ? { toxicity: { takers, action: tox.action, widenBps: tox.widenBps } } : {}),
    ...(issuance
      ? {
          issuance: {
            policies: issuance.policies,
            usage: issuance.usage,
            ...(issuance.unavailable ? { unavailable: issuance.unavailable } : {}),
          },
        }
      : {}),
  });

  // The fill ledger, reached and migrated before serving: a wrong DATABASE_URL stops the start. The
  // embedded one (PGlite) runs on this thread, so it opens now, not while requests are served (a new
  // one takes seconds, an existing one well under one).
  let ledger: Promise<Ledger> | undefined;
  const where = config.mode === "acceptance" || opts.ledger ? undefined : ledgerLocation(config);
  if (opts.ledger) ledger = Promise.resolve(opts.ledger);
  else if (where) {
    const opened = await openLedger(where, startTimeoutMs);
    closers.push(() => opened.db.close());
    log.info({ ledger: opened.db.description }, "fill ledger open");
    ledger = Promise.resolve(opened);
  }
  // A PostgreSQL server can be down while this process runs (the embedded PGlite cannot).
  const db = opts.ledger?.db ?? (ledger ? (await ledger).db : undefined);
  const ledgerHealth =
    db?.kind === "postgres"
      ? fillPath.track({
          name: "ledger",
          what: `the fill ledger (${db.description})`,
          timeoutMs: FILL_PROBE_TIMEOUT_MS,
          probe: () => db.query("SELECT 1"),
        })
      : undefined;

  let swap: SwapHandler;
  let swapPorts: SwapPorts | undefined;
  let ledgerWriter: LedgerWriter | undefined;
  let markouts: MarkoutTracker | undefined;
  if (config.mode === "acceptance") {
    swap = new AcceptanceSwapHandler();
  } else {
    const ports = createSwapPorts({
      config,
      log,
      metrics,
      store,
      chain: rpcHealth ? watchChain(chain, rpcHealth) : chain,
      inventory,
      signer: signerHealth ? watchSigner(signer, signerHealth) : signer,
      ...(redis ? { redis } : {}),
      journalPrefix: keys.swap,
      now,
      ...(opts.swap ? { tuning: opts.swap } : {}),
      ledger: ledger !== undefined,
      ...(issuance ? { issuance } : {}),
      // From its send, not its settlement: it lands within seconds of the send, while a process
      // restarted meanwhile settles it minutes later.
      onLanded: (fill) => {
        if (fill.trade) markouts?.onLanded(fill.signature, fill.quoteId, fill.trade, fill.sentAtMs);
      },
      ...(takers ? { takers } : {}),
    });
    await ports.start();
    closers.push(() => ports.close());
    swap = ports.executor;
    swapPorts = ports;
    if (ledger) {
      const tracker = new MarkoutTracker({
        config,
        priceSources,
        journal: ports.journal,
        metrics,
        log,
        now,
        ...(opts.markoutHorizons ? { horizons: opts.markoutHorizons } : {}),
        ...(opts.markoutSampleMs ? { sampleMs: opts.markoutSampleMs } : {}),
        ...(takers ? { judge: new ToxicFlagger({ config: tox, takers, ledger, metrics, log, now }) } : {}),
      });
      tracker.start();
      closers.push(async () => tracker.close());
      markouts = tracker;
      // Fills landed before a restart whose horizons are not all in the ledger: take the rest.
      const resumed = await tracker.resume((await ledger).db).catch((err: unknown) => {
        log.warn({ err }, "markouts: could not read the ledger's unfinished fills; their horizons are lost");
        return 0;
      });
      if (resumed) log.info({ fills: resumed }, "markouts resumed from the ledger");
      const writer = new LedgerWriter({
        journal: ports.journal,
        ledger,
        metrics,
        log,
        stamp: { mode: config.mode, maker: signer.publicKey.toBase58() },
        ...(ledgerHealth ? { health: ledgerHealth } : {}),
        ...opts.ledgerWriter,
      });
      writer.start();
      closers.push(() => writer.stop());
      ledgerWriter = writer;
    }
  }

  const storeCircuit = new Circuit({ name: "quoteStore", log, metrics, now });

  const v2 = opts.rfqV2 === false ? undefined : rfqV2Settings(config.env, config.file.rfqV2.pairs);
  let rfqV2: RfqV2Service | undefined;
  if (v2) {
    // Loaded only when the channel is on: gRPC and the service definition cost every other start nothing.
    const { RfqV2Service } = await import("./rfq-v2/service.ts");
    const { V2SwapLedger, decidedInLedger } = await import("./rfq-v2/ledger.ts");
    const v2Log = log.child({ channel: "rfq-v2" });
    // Its swaps go to the webhook's ledger outbox (one writer drains both), their markouts to one tracker.
    const v2Ledger =
      ledger && swapPorts
        ? new V2SwapLedger({
            journal: swapPorts.journal,
            log: v2Log,
            now,
            onLanded: (signature, quoteId, trade, landedAtMs) =>
              markouts?.onLanded(signature, quoteId, trade, landedAtMs),
            lookup: async (quoteId) => decidedInLedger((await ledger).db, quoteId),
          })
        : undefined;
    const stream = new RfqV2Service({
      config,
      settings: v2,
      book,
      inventory,
      signer,
      chain,
      log: v2Log,
      metrics: rfqV2Metrics(metrics.registry),
      controls,
      now,
      ...(v2Ledger ? { ledger: v2Ledger } : {}),
    });
    closers.push(async () => stream.close());
    // Not awaited: the webhook serves while the stream connects (and reconnects) on its own.
    void stream.start();
    rfqV2 = stream;
  }

  // Every dependency's state known before the first quote is answered.
  await fillPath.start();

  const lifecycle = { draining: false };
  const probes: ReadinessProbe[] = [
    ["quoteStore", () => store.ping()],
    ["chain", () => chain.ping()],
    ...fillPath.readiness(),
  ];
  const app = createApp({
    config,
    log,
    metrics,
    store,
    quotes,
    swap,
    tokenLists,
    probes,
    storeCircuit,
    draining: () => lifecycle.draining,
    now,
  });
  const opsApp = createOpsApp({
    config,
    log,
    metrics,
    probes,
    draining: () => lifecycle.draining,
    adminRoutes: (root) =>
      registerAdminRoutes(root, {
        adminApiKey: config.env.ADMIN_API_KEY,
        controls,
        inventory,
        pairs: config.file.pairs.map((p) => `${p.base}/${p.quote}`),
        ...(ledger ? { ledger } : {}),
        tokensByMint: config.tokensByMint,
        toxicLine: config.file.toxicity,
        ...(takers ? { takers } : {}),
        metrics,
        now,
      }),
  });

  return {
    config,
    app,
    opsApp,
    log,
    metrics,
    store,
    chain,
    bundles,
    signer,
    inventory,
    controls,
    book,
    tokenLists,
    priceSources,
    usd,
    ...(redis ? { redis } : {}),
    ...(seeded ? { seeded } : {}),
    keyCreated,
    ...(issuer ? { issuer } : {}),
    ...(issuance ? { issuance } : {}),
    ...(swapPorts ? { swapPorts } : {}),
    ...(ledger ? { ledger } : {}),
    ...(ledgerWriter ? { ledgerWriter } : {}),
    ...(markouts ? { markouts } : {}),
    ...(takers ? { takers } : {}),
    storeCircuit,
    fillPath,
    lifecycle,
    ...(rfqV2 ? { rfqV2 } : {}),
    close: () => closeAll(closers),
  };
}

/** `user node (uid 1000, gid 1000)`: whom a file must be readable by. */
function processUser(): string {
  const uid = process.getuid?.();
  let name = "?";
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry for this uid (a container run with --user N)
  }
  return `user ${name} (uid ${uid ?? "?"}, gid ${process.getgid?.() ?? "?"}): chown it to that uid, mode 0600`;
}

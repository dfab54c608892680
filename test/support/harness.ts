/**
 * Test harness for the swap path: the service exactly as `npm start` composes it (src/compose.ts,
 * through test/support/service.ts), with the ports a test needs to see or share handed in: a seeded
 * LocalChain (LiteSVM), the maker key, and optionally a real Redis under a prefix. The optional
 * wrappers (`wrapChain`, `wrapSigner`) let a test observe a port or inject a fault, and each test
 * that uses one says so.
 *
 * Two harnesses built with the same `chain`, `maker` and `redis` (same prefix) are two instances of
 * one deployment: they share the chain, the quote claims, the inventory reservations and the fill
 * journal.
 *
 * Helpers below drive the operator's side: ask for a quote, build the fill the operator would build
 * from it (sandbox/fill/builder.ts), sign it as the taker, post it to /swap.
 */
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { Hono } from "hono";
import type { FileConfig } from "../../config/schema.ts";
import {
  type BuildFillParams,
  buildFillTransaction,
  fillAmountsFromQuote,
} from "../../sandbox/fill/builder.ts";
import type { BundlePort } from "../../src/chain/bundle.ts";
import type { Chain, SendOptions, StatusHint } from "../../src/chain/interface.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { seedFromConfig } from "../../src/chain/local/seed.ts";
import type { Service } from "../../src/compose.ts";
import type { QuoteResponse } from "../../src/contract/quote.ts";
import type { SwapResponse } from "../../src/contract/swap.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { requestListener } from "../../src/http/listener.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import type { Logger } from "../../src/observability/logger.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import type { RedisClient } from "../../src/redis/client.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import type { SignContext, Signer } from "../../src/signing/port.ts";
import type { ComposeOptions } from "../../src/wiring/options.ts";
import type { SwapPorts, SwapTuning } from "../../src/wiring/swap-ports.ts";
import { testConfig } from "./config.ts";
import { testService } from "./service.ts";

export interface HarnessOptions {
  env?: Record<string, string | undefined>;
  vary?: (file: FileConfig) => FileConfig;
  /** Share one chain between instances; a fresh chain seeded for `maker` otherwise. */
  chain?: LocalChain;
  /** Share one maker between instances; generated otherwise. */
  maker?: Keypair;
  /** Real Redis for the quote store, inventory and fill journal (same prefix = same deployment). */
  redis?: { redis: RedisClient; prefix: string };
  /** Wraps the chain every port sees (the harness keeps the LocalChain itself for balance reads). */
  wrapChain?: (chain: LocalChain) => Chain;
  wrapSigner?: (signer: Signer) => Signer;
  /** Swap tunables; the confirmation poll defaults to 25 ms here so tests do not wait. */
  swap?: SwapTuning;
  log?: Logger;
  /** A fill ledger (test/ledger/support.ts) the swap path's outbox is drained into; none otherwise. */
  ledger?: Ledger;
  ledgerWriter?: ComposeOptions["ledgerWriter"];
  markoutHorizons?: ComposeOptions["markoutHorizons"];
  markoutSampleMs?: ComposeOptions["markoutSampleMs"];
  /** The issuer key of the config's `issuance` (mint authority of issued tokens, seeded as such). */
  issuer?: Keypair;
  /** The bundle engine over the harness's chain (permissioned fills). */
  bundles?: ((chain: LocalChain) => BundlePort) | "none";
  /** Share one issuance usage between instances (memory); Redis-backed instances share it through Redis. */
  issuanceUsage?: ComposeOptions["issuanceUsage"];
}

export interface Harness {
  service: Service;
  app: Hono<AppEnv>;
  config: Service["config"];
  /** The local chain itself (unwrapped), for seeding and balance reads. */
  chain: LocalChain;
  maker: Keypair;
  store: Service["store"];
  inventory: Service["inventory"];
  signer: Signer;
  metrics: Service["metrics"];
  swap: SwapPorts;
  journal: SwapPorts["journal"];
  fillRate: SwapPorts["fillRate"];
  confirmations: SwapPorts["confirmations"];
  executor: SwapPorts["executor"];
  close(): Promise<void>;
}

/** Composes the service with real ports; see the module comment. */
export async function createHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const maker = opts.maker ?? Keypair.generate();
  let chain = opts.chain;
  if (!chain) {
    chain = LocalChain.create();
    seedFromConfig(
      chain,
      testConfig(opts.env, opts.vary).file,
      maker.publicKey,
      opts.issuer ? { issuer: opts.issuer.publicKey } : {},
    );
  }
  const keySigner = new KeypairSigner(maker);
  const signer = opts.wrapSigner ? opts.wrapSigner(keySigner) : keySigner;
  const service = await testService({
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.vary ? { vary: opts.vary } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    ...(opts.redis ? { redis: opts.redis.redis, redisPrefix: opts.redis.prefix } : {}),
    chain: opts.wrapChain ? opts.wrapChain(chain) : chain,
    signer,
    swap: { confirmationPollMs: 25, ...opts.swap },
    ...(opts.ledger ? { ledger: opts.ledger } : {}),
    ...(opts.ledgerWriter ? { ledgerWriter: opts.ledgerWriter } : {}),
    ...(opts.markoutHorizons ? { markoutHorizons: opts.markoutHorizons } : {}),
    ...(opts.markoutSampleMs ? { markoutSampleMs: opts.markoutSampleMs } : {}),
    ...(opts.issuer ? { issuer: new KeypairSigner(opts.issuer) } : {}),
    ...(opts.bundles === "none"
      ? { bundles: { port: null, reason: "no bundle engine in this test" } }
      : opts.bundles
        ? { bundles: { port: opts.bundles(chain), note: "bundle engine given by the test" } }
        : {}),
    ...(opts.issuanceUsage ? { issuanceUsage: opts.issuanceUsage } : {}),
  });
  const swap = service.swapPorts;
  if (!swap) throw new Error("the composed service has no swap executor (acceptance mode?)");
  return {
    service,
    app: service.app,
    config: service.config,
    chain,
    maker,
    store: service.store,
    inventory: service.inventory,
    signer,
    metrics: service.metrics,
    swap,
    journal: swap.journal,
    fillRate: swap.fillRate,
    confirmations: swap.confirmations,
    executor: swap.executor,
    close: () => service.close(),
  };
}

/**
 * A harness whose signer counts maker signatures and whose chain is an ObservedChain (counts sends),
 * or a subclass of it that `observe` builds (a fault injector). Returns both wrappers for the test.
 */
export async function observedHarness<C extends ObservedChain>(
  opts: Omit<HarnessOptions, "wrapChain" | "wrapSigner">,
  observe: (chain: Chain) => C,
): Promise<{ h: Harness; signer: CountingSigner; chain: C }> {
  let signer: CountingSigner | undefined;
  let chain: C | undefined;
  const h = await createHarness({
    ...opts,
    wrapSigner: (s) => {
      signer = new CountingSigner(s);
      return signer;
    },
    wrapChain: (c) => {
      chain = observe(c);
      return chain;
    },
  });
  if (!signer || !chain) throw new Error("the harness did not wrap its signer and chain");
  return { h, signer, chain };
}

/** A Signer wrapper that counts maker signatures (observes; signs with the real key). */
export class CountingSigner implements Signer {
  count = 0;
  constructor(private readonly inner: Signer) {}
  get publicKey(): PublicKey {
    return this.inner.publicKey;
  }
  sign(tx: VersionedTransaction, context?: SignContext): void | Promise<void> {
    this.count++;
    return this.inner.sign(tx, context);
  }
}

/**
 * A Chain that forwards every call to a real chain and counts sends, blockhash checks and
 * simulations (an observer, not a fake).
 * Subclasses override single methods to inject faults.
 */
export class ObservedChain implements Chain {
  sends = 0;
  /** isBlockhashValid calls (the recent-blockhash check's one call for an unknown blockhash). */
  blockhashChecks = 0;
  /** Pre-flight simulations. */
  simulations = 0;
  constructor(protected readonly inner: Chain) {}
  get description(): string {
    return this.inner.description;
  }
  getLatestBlockhash(): ReturnType<Chain["getLatestBlockhash"]> {
    return this.inner.getLatestBlockhash();
  }
  getBlockHeight(): Promise<bigint> {
    return this.inner.getBlockHeight();
  }
  isBlockhashValid(blockhash: string): Promise<boolean> {
    this.blockhashChecks++;
    return this.inner.isBlockhashValid(blockhash);
  }
  preflight(tx: VersionedTransaction): ReturnType<Chain["preflight"]> {
    this.simulations++;
    return this.inner.preflight(tx);
  }
  getAccounts(keys: PublicKey[]): ReturnType<Chain["getAccounts"]> {
    return this.inner.getAccounts(keys);
  }
  getMinimumBalanceForRentExemption(dataLength: number): Promise<bigint> {
    return this.inner.getMinimumBalanceForRentExemption(dataLength);
  }
  getUnixTimestamp(): Promise<bigint> {
    return this.inner.getUnixTimestamp();
  }
  send(tx: VersionedTransaction, opts?: SendOptions): ReturnType<Chain["send"]> {
    this.sends++;
    return this.inner.send(tx, opts);
  }
  getSignatureStatus(signature: string, hint?: StatusHint): ReturnType<Chain["getSignatureStatus"]> {
    return this.inner.getSignatureStatus(signature, hint);
  }
  ping(): Promise<boolean> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

// ---- the operator's side ---------------------------------------------------------------------------

/** Something that answers HTTP: the Hono app in-process, or a real socket (see `listen`). */
export type Fetcher = (path: string, init: RequestInit) => Promise<Response>;

export const inProcess =
  (app: Hono<AppEnv>): Fetcher =>
  async (path, init) =>
    app.request(path, init);

/** Serves the app on a real socket (ephemeral port); returns a fetcher for it and a close function. */
export async function listen(
  app: Hono<AppEnv>,
): Promise<{ fetch: Fetcher; url: string; close(): Promise<void> }> {
  const port = await freePort();
  // Served as main.ts serves it: the native routes (POST /quote) first, then Hono.
  const server = createHttpServer(requestListener(app));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    fetch: (path, init) => fetch(`${url}${path}`, init),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface QuoteAsk {
  tokenIn: string;
  tokenOut: string;
  amount: bigint;
  quoteType?: "exactIn" | "exactOut";
  feeBps?: number;
  taker?: PublicKey;
  /** Reuse these ids (the operator may repeat them); fresh ones otherwise. */
  ids?: { quoteId: string; requestId: string };
}

let quoteCounter = 0;

/** POST /quote as the operator; returns the answer and the quote as the service stored it. */
export async function askQuote(
  h: Harness,
  fetcher: Fetcher,
  ask: QuoteAsk,
): Promise<{ response: QuoteResponse; stored: StoredQuote }> {
  const n = quoteCounter++;
  const body = {
    requestId: ask.ids?.requestId ?? `req-${process.pid}-${Date.now()}-${n}`,
    quoteId:
      ask.ids?.quoteId ?? `quote-${process.pid}-${Date.now()}-${n}-${Math.random().toString(36).slice(2)}`,
    tokenIn: ask.tokenIn,
    tokenOut: ask.tokenOut,
    amount: ask.amount.toString(),
    quoteType: ask.quoteType ?? "exactIn",
    protocol: "v1",
    feeBps: ask.feeBps ?? 10,
    ...(ask.taker ? { taker: ask.taker.toBase58() } : {}),
  };
  const res = await fetcher("/quote", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-request-start": String(Date.now()),
      // The deadline's own rules are pinned in test/http/deadline.test.ts; here a budget (the most the
      // webhook honours) that no loaded test machine misses, so no test depends on wall-clock speed.
      "x-request-timeout": "10000",
    },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${await res.text()}`);
  const response = (await res.json()) as QuoteResponse;
  const stored = await h.store.get(response.quoteId);
  if (!stored) throw new Error(`quote ${response.quoteId} was answered but not stored`);
  return { response, stored };
}

/**
 * The parameters of the fill the operator builds for a stored quote (sandbox/fill/builder.ts), on the
 * chain's latest blockhash: what `operatorFill` builds, for tests that change them before building.
 */
export async function operatorFillParams(
  h: Harness,
  quote: StoredQuote,
  taker: PublicKey,
  overrides: Partial<BuildFillParams> = {},
): Promise<BuildFillParams> {
  const program = (mint: string) => {
    const t = h.config.tokensByMint.get(mint);
    if (!t) throw new Error(`token ${mint} is not configured`);
    return new PublicKey(t.tokenProgram);
  };
  const { blockhash } = await h.chain.getLatestBlockhash();
  return {
    maker: h.maker.publicKey,
    taker,
    inputMint: new PublicKey(quote.request.tokenIn),
    outputMint: new PublicKey(quote.request.tokenOut),
    inputTokenProgram: program(quote.request.tokenIn),
    outputTokenProgram: program(quote.request.tokenOut),
    ...fillAmountsFromQuote(quote),
    expireAt: BigInt(Math.floor(quote.expiresAtMs / 1000)),
    computeUnitLimit: 60_000,
    computeUnitPrice: BigInt(quote.response.prioritizationFeeToUse ?? 10_000),
    recentBlockhash: blockhash,
    createTakerOutputAta: !overrides.nativeSolOut,
    ...overrides,
  };
}

/** The fill the operator builds for a stored quote (sandbox/fill/builder.ts), unsigned. */
export async function operatorFill(
  h: Harness,
  quote: StoredQuote,
  taker: PublicKey,
  overrides: Partial<BuildFillParams> = {},
): Promise<VersionedTransaction> {
  return buildFillTransaction(await operatorFillParams(h, quote, taker, overrides));
}

/** POST /swap as the operator. */
export async function postSwap(
  fetcher: Fetcher,
  body: { requestId: string; quoteId: string; transaction: string | VersionedTransaction },
): Promise<{ status: number; body: SwapResponse }> {
  const transaction =
    typeof body.transaction === "string"
      ? body.transaction
      : Buffer.from(body.transaction.serialize()).toString("base64");
  const res = await fetcher("/swap", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ requestId: body.requestId, quoteId: body.quoteId, transaction }),
  });
  return { status: res.status, body: (await res.json()) as SwapResponse };
}

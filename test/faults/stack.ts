/**
 * The production-shaped stack the fault suite breaks, all on loopback:
 *
 *   this process: a LocalChain behind the JSON-RPC server (`npm run chain`'s server), a fault proxy
 *                 in front of it (sandbox/chain/fault-proxy.ts), the operator's side (quotes, fills);
 *                 with `issuedToken`, a second proxy in front of the same server's block engine API
 *   child:        a redis-server of its own (killable, persistence on or off)
 *   child:        the webhook, `node --import tsx src/main.ts` in production mode (REDIS_URL, RPC_URL
 *                 through the proxy, MAKER_KEYPAIR, API_KEY), signals delivered to node itself
 *
 * The webhook can be killed and started again on the same ports with the same state.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { type FaultProxy, startFaultProxy } from "../../sandbox/chain/fault-proxy.ts";
import { type RpcServer, startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { buildFillTransaction, fillAmountsFromQuote } from "../../sandbox/fill/builder.ts";
import { withIssuedToken } from "../../sandbox/operator/issued-token.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { fundTaker, seedFromConfig } from "../../src/chain/local/seed.ts";
import type { QuoteResponse } from "../../src/contract/quote.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { metricSum } from "../../tooling/metrics.ts";
import { freePort } from "../../tooling/processes.ts";
import { type KillableRedis, killableRedis } from "../../tooling/redis-server.ts";
import { defaultFileConfig, MINT, testConfig } from "../support/config.ts";
import {
  type CapturedProcess,
  startSignerProcess,
  startWebhook,
  type WebhookProcess,
} from "../support/process.ts";

export const API_KEY = "fault-suite-api-key-0123456789";

export interface FaultStack {
  redis: KillableRedis;
  chain: LocalChain;
  rpc: RpcServer;
  proxy: FaultProxy;
  /** With `issuedToken`: the proxy in front of the block engine (BUNDLE_URL), and the token's mint. */
  bundleProxy?: FaultProxy;
  issuedMint?: string;
  maker: Keypair;
  /** The operator's base URL (PORT) and the operations one (ADMIN_PORT). */
  url: string;
  opsUrl: string;
  webhook: WebhookProcess;
  /** With `signer: true`: the signer service (SIGNER_URL), holding the maker key; stop and start it again. */
  signer?: { process: CapturedProcess; start(): Promise<void>; stop(signal?: NodeJS.Signals): Promise<void> };
  /** Starts the webhook (again) and waits for /ready. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function faultStack(
  opts: {
    persistence?: boolean;
    drainMs?: number;
    env?: Record<string, string>;
    signer?: boolean;
    /**
     * The sandbox's permissioned token (sandbox/operator/issued-token.ts): TBILL, minted just in time
     * by the issuer key (ISSUER_KEYPAIR) in a bundle sent to the block engine through `bundleProxy`.
     */
    issuedToken?: boolean;
  } = {},
): Promise<FaultStack> {
  const dir = mkdtempSync(join(tmpdir(), "rfq-faults-"));
  const redis = await killableRedis({ persistence: opts.persistence ?? false });
  const maker = Keypair.generate();
  const keyFile = join(dir, "maker.json");
  writeFileSync(keyFile, JSON.stringify(Array.from(maker.secretKey)));
  chmodSync(keyFile, 0o600);
  const issued = opts.issuedToken
    ? withIssuedToken(defaultFileConfig(), { dir, holders: [Keypair.generate().publicKey], burnOnSell: true })
    : undefined;
  const chain = LocalChain.create();
  seedFromConfig(
    chain,
    issued?.config ?? testConfig().file,
    maker.publicKey,
    issued ? { issuer: new PublicKey(issued.issued.issuer) } : {},
  );
  const rpc = await startRpcServer(chain, { port: 0 });
  const proxy = await startFaultProxy(rpc.url);
  const bundleProxy = issued ? await startFaultProxy(rpc.bundleUrl) : undefined;
  if (issued) writeFileSync(join(dir, "config.json"), JSON.stringify(issued.config));
  const port = await freePort();
  const adminPort = await freePort();
  const signer = opts.signer ? await signerService(dir, keyFile, redis.url, rpc.url) : undefined;
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: "127.0.0.1",
    ADMIN_PORT: String(adminPort),
    ADMIN_HOST: "127.0.0.1",
    REDIS_URL: redis.url,
    RPC_URL: proxy.url,
    MAKER_KEYPAIR: keyFile,
    API_KEY,
    ALLOW_STATIC_PRICES: "1",
    LOG_LEVEL: "warn",
    // No fill ledger (it has its own suite): the embedded one would live in the repository's data/.
    LEDGER: "off",
    SHUTDOWN_DRAIN_MS: String(opts.drainMs ?? 1_000),
    ...(issued && bundleProxy
      ? {
          CONFIG: join(dir, "config.json"),
          ISSUER_KEYPAIR: issued.issued.issuerPath,
          BUNDLE_URL: bundleProxy.url,
        }
      : {}),
    ...opts.env,
  };
  if (signer) {
    // The signer holds the key; the webhook holds none.
    delete env.MAKER_KEYPAIR;
    env.SIGNER_URL = `unix://${signer.socket}`;
  }
  const stack: FaultStack = {
    redis,
    chain,
    rpc,
    proxy,
    ...(bundleProxy && issued ? { bundleProxy, issuedMint: issued.issued.mint } : {}),
    maker,
    url: `http://127.0.0.1:${port}`,
    opsUrl: `http://127.0.0.1:${adminPort}`,
    webhook: undefined as unknown as WebhookProcess,
    ...(signer ? { signer } : {}),
    async start() {
      stack.webhook = startWebhook(env);
      const until = Date.now() + 90_000;
      for (;;) {
        if (stack.webhook.proc.exitCode !== null) {
          throw new Error(`webhook exited at start:\n${stack.webhook.stderr()}\n${stack.webhook.stdout()}`);
        }
        try {
          // With workers, ready once every one of them listens (the primary says so).
          const all =
            Number(opts.env?.WORKERS ?? 1) <= 1 ||
            stack.webhook.stdout().includes('"msg":"all workers listening"');
          if (all && (await fetch(`${stack.url}/ready`)).status === 200) return;
        } catch {}
        if (Date.now() > until) throw new Error(`webhook not ready within 90 s:\n${stack.webhook.stdout()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async close() {
      stack.webhook?.proc.kill("SIGKILL");
      await stack.webhook?.exited;
      await signer?.stop("SIGKILL");
      await proxy.close();
      await bundleProxy?.close();
      await rpc.close();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await stack.start();
  return stack;
}

/**
 * The signer service on a Unix socket in `dir`, holding the maker key, with generous limits (its limits
 * have their own tests) and its own chain reader straight on the chain's server (not through the proxy).
 */
async function signerService(
  dir: string,
  keyFile: string,
  redisUrl: string,
  chainUrl: string,
): Promise<NonNullable<FaultStack["signer"]> & { socket: string }> {
  const socket = join(dir, "signer.sock");
  const limits = join(dir, "signer-limits.json");
  const generous = { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" };
  writeFileSync(limits, JSON.stringify({ tokens: { "*": generous } }));
  const env = {
    SIGNER_KEYPAIR: keyFile,
    SIGNER_SOCKET: socket,
    SIGNER_LIMITS: limits,
    SIGNER_RPC_URL: chainUrl,
    REDIS_URL: redisUrl,
  };
  const s = {
    socket,
    process: undefined as unknown as CapturedProcess,
    async start() {
      s.process = startSignerProcess(env);
      const until = Date.now() + 60_000;
      while (!existsSync(socket)) {
        if (s.process.proc.exitCode !== null || Date.now() > until)
          throw new Error(`signer not listening:\n${s.process.stderr()}\n${s.process.stdout()}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (!s.process || s.process.proc.exitCode !== null) return;
      s.process.proc.kill(signal);
      await s.process.exited;
      rmSync(socket, { force: true });
    },
  };
  await s.start();
  return s;
}

let seq = 0;

/** One quote request body as the operator sends it (a small USDC -> SOL exactIn). */
export function quoteRequest(over: Record<string, unknown> = {}): Record<string, unknown> {
  seq++;
  return {
    requestId: `fault-req-${process.pid}-${seq}`,
    quoteId: `fault-q-${process.pid}-${seq}-${Math.random().toString(36).slice(2, 8)}`,
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amount: "1000000",
    quoteType: "exactIn",
    protocol: "v1",
    feeBps: 10,
    ...over,
  };
}

const operatorHeaders = (timeoutMs: number) => ({
  "content-type": "application/json",
  "x-api-key": API_KEY,
  "x-request-start": String(Date.now()),
  "x-request-timeout": String(timeoutMs),
});

/**
 * A fresh taker funded on the chain, a quote for it (1,000 JUP -> USDC) and the operator's fill for
 * that quote signed by the taker: what /swap receives.
 */
export async function signedFill(s: FaultStack): Promise<{
  taker: Keypair;
  quote: QuoteResponse;
  body: { requestId: string; quoteId: string; transaction: string };
}> {
  const taker = Keypair.generate();
  fundTaker(s.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
  const req = quoteRequest({
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount: "1000000000",
    taker: taker.publicKey.toBase58(),
  });
  const res = await fetch(`${s.url}/quote`, {
    method: "POST",
    headers: operatorHeaders(2_000),
    body: JSON.stringify(req),
  });
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${await res.text()}`);
  const quote = (await res.json()) as QuoteResponse;
  const config = testConfig();
  const program = (mint: string) => new PublicKey(config.tokensByMint.get(mint)?.tokenProgram as string);
  const stored = {
    request: { ...req, quoteType: "exactIn" },
    response: quote,
    expiresAtMs: Date.now() + 50_000,
  } as unknown as StoredQuote;
  const { blockhash } = await s.chain.getLatestBlockhash();
  const tx: VersionedTransaction = buildFillTransaction({
    maker: s.maker.publicKey,
    taker: taker.publicKey,
    inputMint: new PublicKey(quote.tokenIn),
    outputMint: new PublicKey(quote.tokenOut),
    inputTokenProgram: program(quote.tokenIn),
    outputTokenProgram: program(quote.tokenOut),
    ...fillAmountsFromQuote(stored),
    expireAt: BigInt(Math.floor((Date.now() + 50_000) / 1000)),
    computeUnitLimit: 60_000,
    computeUnitPrice: BigInt(quote.prioritizationFeeToUse ?? 10_000),
    recentBlockhash: blockhash,
    createTakerOutputAta: true,
  });
  tx.sign([taker]);
  return {
    taker,
    quote,
    body: {
      requestId: quote.requestId,
      quoteId: quote.quoteId,
      transaction: Buffer.from(tx.serialize()).toString("base64"),
    },
  };
}

/** POST /swap as the operator; the answer and how long it took. */
export async function postSwap(
  s: FaultStack,
  body: { requestId: string; quoteId: string; transaction: string },
): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const t0 = Date.now();
  const res = await fetch(`${s.url}/swap`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": API_KEY },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, ms: Date.now() - t0 };
}

/** One counter's value from the webhook's /metrics (operations listener), summed over matching labels. */
export async function metric(
  s: FaultStack,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  return metricSum(await (await fetch(`${s.opsUrl}/metrics`)).text(), name, labels);
}

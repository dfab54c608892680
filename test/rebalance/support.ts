/**
 * Two makers on one local chain behind the operator simulator, every hop over a real socket: maker A
 * (the one that rebalances; its webhook answers its own wallet 404 SELF_TRADE) and maker B (the
 * counterparty, its own key, book and Redis prefix). The simulator reads the chain through the local
 * JSON-RPC server. Maker B is registered with the operator only when `registerB` is called, so a test
 * can first push one-sided fills onto A alone.
 */
import { Writable } from "node:stream";
import { Keypair, PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { Redis } from "ioredis";
import type { FileConfig } from "../../config/schema.ts";
import { UsdValuer } from "../../pricing/usd.ts";
import { startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { operatorChainOverRpc } from "../../sandbox/operator/rpc-chain.ts";
import { type OperatorServer, startOperator } from "../../sandbox/operator/server.ts";
import { creditSol, creditToken, fundTaker } from "../../src/chain/local/seed.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { HttpOperatorSwapApi } from "../../src/operator-api/http.ts";
import { RebalanceMetrics } from "../../src/rebalance/metrics.ts";
import { Rebalancer } from "../../src/rebalance/rebalancer.ts";
import { RedisRebalanceState } from "../../src/rebalance/state.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import type { SwapTuning } from "../../src/wiring/swap-ports.ts";
import { MINT } from "../support/config.ts";
import { CountingSigner, createHarness, type Harness, listen } from "../support/harness.ts";

export interface TwoMakers {
  a: Harness;
  b: Harness;
  op: OperatorServer;
  api: HttpOperatorSwapApi;
  /** Maker A's rebalancer with a signer that counts signatures; `lines` are its log lines. */
  rebalancer: Rebalancer;
  signer: CountingSigner;
  metrics: RebalanceMetrics;
  lines: Record<string, unknown>[];
  registerB(): Promise<void>;
  close(): Promise<void>;
}

export async function twoMakers(
  redis: { redis: Redis; prefix: string },
  vary: (f: FileConfig) => FileConfig,
  /** Maker A's swap tunables (e.g. a slow confirmation poll, so landed fills stay uncommitted). */
  swapA?: SwapTuning,
): Promise<TwoMakers> {
  const a = await createHarness({
    redis: { redis: redis.redis, prefix: `${redis.prefix}a:` },
    vary,
    ...(swapA ? { swap: swapA } : {}),
  });
  const makerB = Keypair.generate();
  creditSol(a.chain, makerB.publicKey, 100_000_000_000n);
  for (const t of a.config.file.tokens) {
    creditToken(a.chain, makerB.publicKey, new PublicKey(t.mint), 10_000_000n * 10n ** BigInt(t.decimals));
  }
  const b = await createHarness({
    chain: a.chain,
    maker: makerB,
    redis: { redis: redis.redis, prefix: `${redis.prefix}b:` },
  });
  const wa = await listen(a.app);
  const wb = await listen(b.app);
  const rpc = await startRpcServer(a.chain, { host: "127.0.0.1", port: 0 });
  const op = await startOperator({
    chain: operatorChainOverRpc(rpc.url),
    webhooks: [{ name: "a", baseUrl: wa.url }],
    // The operator's 250 ms fan-out budget is about speed, which tests never judge (the machine is
    // shared): a generous budget, as the harness gives the webhook's own deadline.
    quoteTimeoutMs: 5_000,
  });
  const api = new HttpOperatorSwapApi({ baseUrl: op.url, retryPauseMs: 10 });
  const { rebalancer, signer, metrics, lines } = rebalancerFor(a, redis, api);
  return {
    a,
    b,
    op,
    api,
    rebalancer,
    signer,
    metrics,
    lines,
    async registerB() {
      op.registry.register({ name: "b", baseUrl: wb.url });
      const s = await op.registry.sync("b");
      if (s.kind === "failed") throw new Error(`maker B's token lists: ${s.error}`);
    },
    async close() {
      await op.close();
      await rpc.close();
      await wa.close();
      await wb.close();
      await b.close();
      await a.close();
    },
  };
}

/** Maker A's rebalancer trading through `api`, its signer counting, its log lines and metrics kept. */
export function rebalancerFor(
  a: Harness,
  redis: { redis: Redis; prefix: string },
  api: HttpOperatorSwapApi,
): Pick<TwoMakers, "rebalancer" | "signer" | "metrics" | "lines"> {
  const signer = new CountingSigner(new KeypairSigner(a.maker));
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  const metrics = new RebalanceMetrics();
  const rebalancer = new Rebalancer({
    metrics,
    config: a.config,
    chain: a.chain,
    signer,
    inventory: a.inventory,
    usd: new UsdValuer(a.config, a.service.priceSources),
    api,
    state: new RedisRebalanceState(redis.redis, `${redis.prefix}a:rebal:`),
    // The webhook's own fill journal (same Redis prefix as the deployment's).
    fills: a.journal,
    log: createLogger("info", sink),
  });
  return { rebalancer, signer, metrics, lines };
}

/** A taker buys `outputMint` from whoever the operator picks, paying `amount` of `inputMint`. */
export async function takerBuys(
  op: OperatorServer,
  taker: Keypair,
  inputMint: string,
  outputMint: string,
  amount: bigint,
): Promise<Record<string, unknown>> {
  const q = new URLSearchParams({
    inputMint,
    outputMint,
    amount: amount.toString(),
    taker: taker.publicKey.toBase58(),
  });
  const order = (await (await fetch(`${op.url}/ultra/v1/order?${q}`)).json()) as Record<string, unknown>;
  if (typeof order.transaction !== "string" || !order.transaction)
    throw new Error(`order: ${JSON.stringify(order)}`);
  const tx = VersionedTransaction.deserialize(Buffer.from(order.transaction, "base64"));
  tx.sign([taker]);
  const res = await fetch(`${op.url}/swap/v2/execute`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
      requestId: order.requestId,
    }),
  });
  const x = (await res.json()) as Record<string, unknown>;
  if (x.code !== 0) throw new Error(`execute: ${JSON.stringify(x)}`);
  return order;
}

export function fundedTaker(h: Harness): Keypair {
  const taker = Keypair.generate();
  fundTaker(h.chain, taker.publicKey, {
    sol: 10_000_000_000n,
    tokens: { [MINT.USDC]: 1_000_000_000_000n, [MINT.JUP]: 0n },
  });
  return taker;
}

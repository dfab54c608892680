/**
 * A compromised webhook against the signer service (issue 45), on the sandbox stack (the chain's
 * JSON-RPC server, Redis, the signer service and the webhook each in their own process, the operator
 * simulator here). The attacker holds what the webhook holds: the Redis credentials and the signer's
 * socket. It writes the store directly and asks the signer itself, with a taker that plays along
 * (its signature is on every fill). Each attack is refused by the signer's own checks, and the maker's
 * accounts (lamports, owner, token amounts, delegate, close authority: the raw account bytes) are
 * unchanged.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TokenConfig } from "../../config/schema.ts";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { SignerRefusalCode } from "../../src/refusal/codes.ts";
import { SignerRefusal } from "../../src/signing/port.ts";
import { RemoteSigner } from "../../src/signing/remote.ts";
import { honestFillParams, signAsTaker } from "../fill/tamper.ts";
import { MINT } from "../support/config.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("compromised-webhook");
let stack: Stack;
let redis: Redis | Cluster;
let store: RedisQuoteStore;
let signer: RemoteSigner;
let tokens: Map<string, TokenConfig>;

beforeAll(async () => {
  stack = await startStack({
    dir,
    remoteSigner: true,
    takers: [{ name: "t", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n, JUP: 5_000_000_000n } }],
    webhookLogLevel: "info",
    operator: { quoteTimeoutMs: 5_000 },
  });
  // The stack's Redis as the webhook reaches it (a cluster when REDIS_CLUSTER_NODES is set).
  redis = stack.redis.startsWith("cluster ")
    ? new Cluster(
        stack.redis
          .slice("cluster ".length)
          .split(",")
          .map((n) => ({ host: n.split(":")[0]!, port: Number(n.split(":")[1]) })),
      )
    : new Redis(stack.redis);
  store = new RedisQuoteStore(redis, `${stack.config.redisPrefix}quote:`);
  signer = await RemoteSigner.connect({ url: stack.signerUrl! });
  tokens = new Map(stack.config.tokens.map((t) => [t.mint, t]));
}, 180_000);

afterAll(async () => {
  signer?.close();
  redis?.disconnect();
  await stack?.close();
});

async function rpc(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(stack.chainUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(JSON.stringify(body.error));
  return body.result;
}

/** The maker's wallet and token accounts, raw: lamports, owner and data (amount, owner, delegate, close authority). */
async function makerAccounts(): Promise<unknown> {
  const maker = new PublicKey(stack.maker);
  const keys = [
    maker,
    ...[MINT.USDC, MINT.JUP].map((m) => getAssociatedTokenAddressSync(new PublicKey(m), maker, true)),
  ];
  const r = (await rpc("getMultipleAccounts", [keys.map((k) => k.toBase58()), { encoding: "base64" }])) as {
    value: unknown[];
  };
  return r.value;
}

const latestBlockhash = async () =>
  ((await rpc("getLatestBlockhash", [{ commitment: "processed" }])) as { value: { blockhash: string } }).value
    .blockhash;

/** The webhook's quote for this taker, stored by the webhook itself (POST /quote, as the operator asks). */
async function webhookQuote(
  quoteId: string,
  tokenIn: string,
  tokenOut: string,
  amount: string,
): Promise<StoredQuote> {
  const res = await fetch(`${stack.webhookUrl}/quote`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-request-start": String(Date.now()),
      "x-request-timeout": "5000",
    },
    body: JSON.stringify({
      requestId: `${quoteId}-req`,
      quoteId,
      tokenIn,
      tokenOut,
      amount,
      quoteType: "exactIn",
      protocol: "v1",
      feeBps: 0,
      taker: stack.takers[0]!.keypair.publicKey.toBase58(),
    }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const q = await store.get(quoteId);
  expect(q).toBeDefined();
  return q!;
}

async function fillOf(q: StoredQuote, computeUnitPrice?: bigint): Promise<VersionedTransaction> {
  const tx = buildFillTransaction(
    honestFillParams(q, {
      maker: new PublicKey(stack.maker),
      taker: stack.takers[0]!.keypair.publicKey,
      tokens,
      recentBlockhash: await latestBlockhash(),
      ...(computeUnitPrice !== undefined ? { computeUnitPrice } : {}),
    }),
  );
  return signAsTaker(tx, stack.takers[0]!.keypair);
}

async function refusal(p: Promise<unknown>): Promise<SignerRefusal> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e, "the signer signed it").toBeInstanceOf(SignerRefusal);
  return e as SignerRefusal;
}

const makerSigned = (tx: VersionedTransaction) =>
  tx.signatures.some((s) => verifyEd25519(tx.message.serialize(), s, new PublicKey(stack.maker).toBytes()));

describe("a compromised webhook cannot make the signer sign for it", () => {
  it("a stored quote made 50 times more generous (amountOut rewritten with KEEPTTL) is refused by the signer's price band; the maker's accounts are unchanged", async () => {
    const q = await webhookQuote(`evil-${Date.now()}`, MINT.USDC, MINT.JUP, "1000010");
    const key = `${stack.config.redisPrefix}quote:{${q.quoteId}}:q`;
    const raw = JSON.parse((await redis.get(key))!) as Record<string, unknown> & {
      response?: { amountOut: string };
    };
    const generous = (BigInt(q.response.amountOut) * 50n).toString();
    if (raw.v === 2) raw.amountOut = generous;
    else raw.response!.amountOut = generous;
    expect(await redis.set(key, JSON.stringify(raw), "KEEPTTL")).toBe("OK");
    expect(await redis.pttl(key)).toBeGreaterThan(0);
    const rewritten = (await store.get(q.quoteId))!;
    expect(rewritten.response.amountOut).toBe(generous);

    const before = await makerAccounts();
    const tx = await fillOf(rewritten);
    const r = await refusal(signer.sign(tx, { quoteId: q.quoteId }));
    expect(r.code).toBe(SignerRefusalCode.SIGNER_PRICE_BAND);
    expect(r.context).toContain("JUP/USDC");
    expect(makerSigned(tx)).toBe(false);
    expect(await makerAccounts()).toEqual(before);
  }, 60_000);

  it("a second landable fill of a quote whose fill landed (the same quote, the compute-unit price 1 lower) is refused; the maker's accounts are unchanged", async () => {
    // The honest fill, through the operator and the webhook: it lands.
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const taker = stack.takers[0]!.keypair;
    const order = await client.order(
      { inputMint: MINT.USDC, outputMint: MINT.JUP, amount: 1_000_010n, swapMode: "ExactIn" },
      taker.publicKey,
    );
    expect(order.ok, order.ok ? "" : order.error).toBe(true);
    if (!order.ok) return;
    const result = await client.execute(order.body, taker);
    expect(result.ok && result.body.status, result.ok ? result.body.error : result.error).toBe("Success");
    const signed = readFileSync(join(dir, "signer.log"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"msg":"signed"'))
      .map((l) => JSON.parse(l) as { quoteId: string });
    const quoteId = signed.at(-1)!.quoteId;
    const q = (await store.get(quoteId))!;
    expect(q).toBeDefined();

    // The same quote again, one micro-lamport cheaper per compute unit: a different, landable message.
    const before = await makerAccounts();
    const again = await fillOf(q, BigInt(q.response.prioritizationFeeToUse ?? 1) - 1n);
    const r = await refusal(signer.sign(again, { quoteId }));
    expect(r.code).toBe(SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED);
    expect(makerSigned(again)).toBe(false);
    expect(await makerAccounts()).toEqual(before);
  }, 60_000);
});

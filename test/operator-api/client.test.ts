/**
 * The operator swap API client (src/operator-api/) against the sandbox's operator simulator over real
 * sockets (webhook, chain JSON-RPC and simulator each on their own port): orders parsed with every
 * listed field, `x-api-key` sent from configuration, and the execute codes the simulator produces
 * (0, -1, -2, -3, -2003) read as their named outcomes.
 */
import { Keypair, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { HttpOperatorSwapApi, makeOperatorSwapApi } from "../../src/operator-api/http.ts";
import type { SwapOrder } from "../../src/operator-api/wire.ts";
import { diagnose } from "../../src/ops/doctor.ts";
import { type Simulator, startSimulator } from "../sandbox/operator/simulator.ts";
import { MINT } from "../support/config.ts";
import { createHarness, type Harness } from "../support/harness.ts";
import { testRedis } from "../support/redis.ts";

const KEY = "operator-key-for-tests-0001";
let h: Harness;
let sim: Simulator;
let api: HttpOperatorSwapApi;
const redis = testRedis();
const taker = Keypair.generate();
let clockOffsetMs = 0;

beforeAll(async () => {
  h = await createHarness({ redis });
  fundTaker(h.chain, taker.publicKey, {
    sol: 50_000_000_000n,
    tokens: { [MINT.USDC]: 5_000_000_000n, [MINT.SOL]: 0n },
  });
  sim = await startSimulator(h, { now: () => Date.now() + clockOffsetMs, apiKey: KEY });
  api = new HttpOperatorSwapApi({ baseUrl: sim.op.url, apiKey: KEY, retryPauseMs: 10 });
});

afterAll(async () => {
  await sim?.close();
  await h?.close();
  await redis.redis.quit();
});

const buy = { inputMint: MINT.USDC, outputMint: MINT.SOL, amount: 2_000_000n };

async function signedOrder(): Promise<{ order: SwapOrder; signed: string }> {
  const r = await api.order({ ...buy, taker: taker.publicKey.toBase58() });
  if (!r.ok) throw new Error(`order: ${r.kind}: ${r.error}`);
  const tx = VersionedTransaction.deserialize(Buffer.from(r.order.transaction as string, "base64"));
  tx.sign([taker]);
  return { order: r.order, signed: Buffer.from(tx.serialize()).toString("base64") };
}

describe("order", () => {
  it("parses an order with a taker: every required field, the built transaction, router_2", async () => {
    const r = await api.order({ ...buy, taker: taker.publicKey.toBase58() });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const o = r.order;
    expect(o).toMatchObject({
      inputMint: MINT.USDC,
      outputMint: MINT.SOL,
      inAmount: "2000000",
      router: "router_2",
    });
    expect(o.taker).toBe(taker.publicKey.toBase58());
    expect(o.transaction?.length).toBeGreaterThan(100);
    expect(o.routePlan[0]?.swapInfo.inputMint).toBe(MINT.USDC);
    expect(o.maker).toBe(h.maker.publicKey.toBase58());
    expect(o.errorCode).toBeUndefined();
  });

  it("parses a price-only order (no taker): transaction null", async () => {
    const r = await api.order(buy);
    expect(r.ok && r.order.transaction).toBeNull();
  });

  it("sends x-api-key from configuration: without it the operator refuses (401), with it answers", async () => {
    const keyless = makeOperatorSwapApi({ OPERATOR_API_URL: sim.op.url });
    const refused = await keyless!.order(buy);
    expect(refused).toMatchObject({ ok: false, kind: "refused", status: 401, attempts: 1 });
    const keyed = makeOperatorSwapApi({ OPERATOR_API_URL: sim.op.url, OPERATOR_API_KEY: KEY });
    expect((await keyed!.order(buy)).ok).toBe(true);
  });

  it("reads a 400 {error} as refused, without retrying it", async () => {
    const r = await api.order({ ...buy, excludeRouters: ["router_2"] });
    expect(r).toMatchObject({ ok: false, kind: "refused", status: 400, attempts: 1 });
    expect(!r.ok && r.error).toMatch(/excluded/);
  });

  it("answers errorCode 1 (insufficient funds) as an order with an empty transaction", async () => {
    const r = await api.order({ ...buy, amount: 9_000_000_000n, taker: taker.publicKey.toBase58() });
    expect(r.ok && r.order).toMatchObject({ errorCode: 1, transaction: "" });
  });
});

describe("npm run doctor's operator API row", () => {
  const row = async (operatorApi: HttpOperatorSwapApi) => {
    const d = await diagnose({
      config: h.config,
      chain: h.chain,
      signer: h.signer,
      sources: h.service.priceSources,
      operatorApi,
    });
    return d.checks.find((c) => c.check === "operator swap API");
  };

  it("is ok when a price-only order answers with the configured key", async () => {
    expect(await row(api)).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/answered \(router router_2\)/),
    });
  });

  it("FAILs naming OPERATOR_API_KEY when the key is refused", async () => {
    const keyless = new HttpOperatorSwapApi({ baseUrl: sim.op.url, orderAttempts: 1 });
    expect(await row(keyless)).toMatchObject({ status: "FAIL", fix: "set OPERATOR_API_KEY" });
  });
});

describe("execute codes from the simulator", () => {
  it("0: a signed order lands (landed, with signature, slot and amounts)", async () => {
    const { order, signed } = await signedOrder();
    const x = await api.execute({
      signedTransaction: signed,
      requestId: order.requestId,
      lastValidBlockHeight: 0n,
    });
    expect(x).toMatchObject({ kind: "landed", code: 0, meaning: "success", attempts: 1 });
    expect(x.signature).toBeTruthy();
    expect(x.result?.totalInputAmount).toBe(order.inAmount);
    expect(x.result?.totalOutputAmount).toBe(order.outAmount);
  });

  it("-1: an unknown requestId is missing cached order, retry-safe", async () => {
    const { signed } = await signedOrder();
    const x = await api.execute({
      signedTransaction: signed,
      requestId: "no-such-request",
      lastValidBlockHeight: 0n,
    });
    expect(x).toMatchObject({ kind: "retrySafe", code: -1, meaning: "missing cached order" });
  });

  it("-2: bytes that are not a transaction are an invalid signed transaction, retry-safe", async () => {
    const { order } = await signedOrder();
    const x = await api.execute({
      signedTransaction: "AAAA",
      requestId: order.requestId,
      lastValidBlockHeight: 0n,
    });
    expect(x).toMatchObject({ kind: "retrySafe", code: -2, meaning: "invalid signed transaction" });
  });

  it("-3: a transaction other than the order's is invalid message bytes, retry-safe", async () => {
    const a = await signedOrder();
    const b = await api.order({ ...buy, amount: 3_000_000n, taker: taker.publicKey.toBase58() });
    if (!b.ok) throw new Error("second order");
    const other = VersionedTransaction.deserialize(Buffer.from(b.order.transaction as string, "base64"));
    other.sign([taker]);
    const x = await api.execute({
      signedTransaction: Buffer.from(other.serialize()).toString("base64"),
      requestId: a.order.requestId,
      lastValidBlockHeight: 0n,
    });
    expect(x).toMatchObject({ kind: "retrySafe", code: -3, meaning: "invalid message bytes" });
  });

  it("-2003: an order executed after its expiry is an expired quote", async () => {
    const { order, signed } = await signedOrder();
    clockOffsetMs = 120_000;
    try {
      const x = await api.execute({
        signedTransaction: signed,
        requestId: order.requestId,
        lastValidBlockHeight: 0n,
      });
      expect(x).toMatchObject({ kind: "expired", code: -2003, meaning: "quote expired" });
    } finally {
      clockOffsetMs = 0;
    }
  });
});

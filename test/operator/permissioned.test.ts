/**
 * Permissioned pairs through the operator simulator, over real sockets: the webhook (composed as
 * `npm start` composes it) advertises JUP on /permissioned-tokens; the simulator must then skip the
 * taker balance pre-check and the simulation and set the compute-unit limit to the 200,000 maximum,
 * leaving the balance check to the maker (CONTRACT.md, "Permissioned tokens").
 */
import { Keypair, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RpcServer, startRpcServer } from "../../src/chain/rpc-server.ts";
import { fundTaker } from "../../src/chain/seed.ts";
import { decodeFillTransaction } from "../../src/fill/decode.ts";
import { operatorChainOverRpc } from "../../src/operator/rpc-chain.ts";
import { type OperatorServer, startOperator } from "../../src/operator/server.ts";
import { MINT } from "../support/config.ts";
import { createHarness, type Harness, listen } from "../support/harness.ts";

let h: Harness;
let webhook: Awaited<ReturnType<typeof listen>>;
let rpc: RpcServer;
let op: OperatorServer;
const taker = Keypair.generate();

beforeAll(async () => {
  h = await createHarness({
    vary: (f) => ({
      ...f,
      tokens: f.tokens.map((t) => (t.mint === MINT.JUP ? { ...t, permissioned: true } : t)),
    }),
  });
  // USDC to pay with, but no JUP: a JUP sale cannot be paid.
  fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 100_000_000n } });
  webhook = await listen(h.app);
  rpc = await startRpcServer(h.chain, { host: "127.0.0.1", port: 0 });
  op = await startOperator({
    chain: operatorChainOverRpc(rpc.url),
    webhooks: [{ name: "mm", baseUrl: webhook.url }],
  });
});

afterAll(async () => {
  await op?.close();
  await rpc?.close();
  await webhook?.close();
  await h?.close();
});

async function order(params: Record<string, string>) {
  const res = await fetch(`${op.url}/ultra/v1/order?${new URLSearchParams(params)}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("operator simulator: permissioned pairs", () => {
  it("flags the mint from /permissioned-tokens", () => {
    expect([...(op.registry.get("mm")?.permissioned ?? [])]).toEqual([MINT.JUP]);
  });

  it("sets the 200,000 compute-unit limit without simulating, and skips the taker pre-check", async () => {
    const r = await order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "50000000",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.status).toBe(200);
    // The taker holds no JUP, yet a transaction is built: the maker is the one to check.
    expect(r.body.errorCode).toBeUndefined();
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    const decoded = decodeFillTransaction(tx);
    if (!decoded.ok) throw new Error(decoded.problem);
    const limit = decoded.decoded.computeBudget.find((i) => i.kind === "computeUnitLimit");
    expect(limit && "units" in limit ? limit.units : undefined).toBe(200_000);
  });

  it("lets the maker refuse a taker that cannot pay, and does not count the honest refusal", async () => {
    const r = await order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "50000000",
      taker: taker.publicKey.toBase58(),
    });
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    tx.sign([taker]);
    const res = await fetch(`${op.url}/swap/v2/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
        requestId: r.body.requestId,
      }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "Failed", code: -2004 });
    expect(body.error).toMatch(/insufficientBalance/);
    expect(op.fillRate.status("mm")).toMatchObject({ fills: 0, failures: 0 });
  });

  it("still pre-checks the taker on an open pair", async () => {
    const r = await order({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: "5000000000",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.body).toMatchObject({ errorCode: 1, transaction: "" });
  });
});

/**
 * The operator simulator end to end, every hop over a real socket: the taker calls the simulator's
 * GET /ultra/v1/order and POST .../execute; the simulator fans out to the real webhook (composed as
 * `npm start` composes it, Redis-backed) and reads the local chain through its JSON-RPC server; the
 * webhook co-signs and sends to the same chain (LiteSVM).
 *
 * The field tables below are the operator's order and execute API's ("Swap order" and "Swap execute
 * result"), written out here independently of sandbox/operator/wire.ts so that a drift in either shows.
 */
import { createTransferInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker, lamports, tokenBalance } from "../../../src/chain/local/seed.ts";
import { decodeFillData, NATIVE_MINT, ORDER_ENGINE_PROGRAM_ID } from "../../../src/program/layout.ts";
import { MINT } from "../../support/config.ts";
import { createHarness, type Harness } from "../../support/harness.ts";
import { testRedis } from "../../support/redis.ts";
import { type Simulator, startSimulator } from "./simulator.ts";

type Kind = "string" | "number" | "integer" | "boolean" | "array" | "object" | "string|null";

/** Swap order fields: [name, type, required]. */
const ORDER_FIELDS: [string, Kind, boolean][] = [
  ["mode", "string", true],
  ["inputMint", "string", true],
  ["outputMint", "string", true],
  ["inAmount", "string", true],
  ["outAmount", "string", true],
  ["inUsdValue", "number", false],
  ["outUsdValue", "number", false],
  ["priceImpact", "number", false],
  ["swapUsdValue", "number", false],
  ["otherAmountThreshold", "string", true],
  ["swapMode", "string", true],
  ["slippageBps", "number", true],
  ["priceImpactPct", "string", true],
  ["routePlan", "array", true],
  ["referralAccount", "string", false],
  ["feeMint", "string", false],
  ["feeBps", "number", true],
  ["platformFee", "object", true],
  ["signatureFeeLamports", "number", true],
  ["signatureFeePayer", "string|null", true],
  ["prioritizationFeeLamports", "number", true],
  ["prioritizationFeePayer", "string|null", true],
  ["rentFeeLamports", "number", true],
  ["rentFeePayer", "string|null", true],
  ["swapType", "string", true],
  ["router", "string", true],
  ["transaction", "string|null", true],
  ["gasless", "boolean", true],
  ["requestId", "string", true],
  ["totalTime", "number", true],
  ["taker", "string|null", true],
  ["quoteId", "string", false],
  ["maker", "string", false],
  ["expireAt", "string", false],
  ["errorCode", "number", false],
  ["errorMessage", "string", false],
];

const EXECUTE_FIELDS: [string, Kind][] = [
  ["status", "string"],
  ["signature", "string"],
  ["slot", "string"],
  ["code", "integer"],
  ["totalInputAmount", "string"],
  ["totalOutputAmount", "string"],
  ["inputAmountResult", "string"],
  ["outputAmountResult", "string"],
  ["swapEvents", "array"],
];

function typeOk(v: unknown, kind: Kind): boolean {
  switch (kind) {
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "integer":
      return Number.isInteger(v);
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v);
    case "string|null":
      return v === null || typeof v === "string";
  }
}

/** Names every required field missing and every present field of the wrong type. */
function orderShapeProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, kind, required] of ORDER_FIELDS) {
    if (!(name in body)) {
      if (required) problems.push(`${name}: missing`);
      continue;
    }
    if (!typeOk(body[name], kind)) problems.push(`${name}: not ${kind} (${JSON.stringify(body[name])})`);
  }
  if (!["router_1", "router_2", "router_3", "router_4"].includes(body.router as string)) {
    problems.push("router: not in the enum");
  }
  if ("errorCode" in body && ![1, 2, 3].includes(body.errorCode as number))
    problems.push("errorCode: not 1, 2 or 3");
  const fee = body.platformFee as Record<string, unknown> | undefined;
  if (fee && typeof fee === "object") {
    if (typeof fee.feeBps !== "number") problems.push("platformFee.feeBps: missing or not a number");
    if ("amount" in fee && typeof fee.amount !== "string") problems.push("platformFee.amount: not a string");
  }
  for (const [i, step] of ((body.routePlan as Record<string, unknown>[]) ?? []).entries()) {
    if (typeof step.percent !== "number") problems.push(`routePlan.${i}.percent: not a number`);
    if (typeof step.bps !== "number") problems.push(`routePlan.${i}.bps: not a number`);
    if ("usdValue" in step && typeof step.usdValue !== "number")
      problems.push(`routePlan.${i}.usdValue: not a number`);
    const info = step.swapInfo as Record<string, unknown> | undefined;
    for (const k of ["ammKey", "label", "inputMint", "outputMint", "inAmount", "outAmount"]) {
      if (typeof info?.[k] !== "string")
        problems.push(`routePlan.${i}.swapInfo.${k}: missing or not a string`);
    }
  }
  for (const k of ["inAmount", "outAmount", "otherAmountThreshold"]) {
    if (typeof body[k] === "string" && !/^\d+$/.test(body[k] as string))
      problems.push(`${k}: not an integer string`);
  }
  return problems;
}

function executeShapeProblems(body: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, kind] of EXECUTE_FIELDS) {
    if (!(name in body)) problems.push(`${name}: missing`);
    else if (!typeOk(body[name], kind)) problems.push(`${name}: not ${kind}`);
  }
  if (!["Success", "Failed"].includes(body.status as string)) problems.push("status: not Success or Failed");
  for (const [i, e] of ((body.swapEvents as Record<string, unknown>[]) ?? []).entries()) {
    for (const k of ["inputMint", "inputAmount", "outputMint", "outputAmount"]) {
      if (typeof e[k] !== "string") problems.push(`swapEvents.${i}.${k}: missing or not a string`);
    }
  }
  return problems;
}

let h: Harness;
let sim: Simulator;
let clockOffsetMs = 0;
/** When set, the simulator's clock stands still at this instant (ms). */
let frozenSimNowMs: number | undefined;
const redis = testRedis();
const taker = Keypair.generate();
/** Holds only SOL and JUP: no USDC account, so an order into USDC creates one. */
const freshTaker = Keypair.generate();
const broke = Keypair.generate();

beforeAll(async () => {
  h = await createHarness({ redis: redis });
  fundTaker(h.chain, taker.publicKey, {
    sol: 20_000_000_000n,
    tokens: { [MINT.USDC]: 5_000_000_000n, [MINT.JUP]: 5_000_000_000n, [MINT.SOL]: 0n },
  });
  fundTaker(h.chain, freshTaker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.JUP]: 1_000_000_000n } });
  fundTaker(h.chain, broke.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 1n } });
  sim = await startSimulator(h, { now: () => frozenSimNowMs ?? Date.now() + clockOffsetMs });
});

afterAll(async () => {
  await sim?.close();
  await h?.close();
  await redis.redis.quit();
});

/** An order selling `amount` USDC (smallest units) for JUP, as `who` (the funded taker by default). */
function usdcToJup(amount: string, who: Keypair = taker) {
  return sim.order({ inputMint: MINT.USDC, outputMint: MINT.JUP, amount, taker: who.publicKey.toBase58() });
}

function signed(tx64: string, signer: Keypair): { tx: VersionedTransaction; b64: string } {
  const tx = VersionedTransaction.deserialize(Buffer.from(tx64, "base64"));
  tx.sign([signer]);
  return { tx, b64: Buffer.from(tx.serialize()).toString("base64") };
}

function fillOf(tx: VersionedTransaction) {
  const keys = tx.message.staticAccountKeys;
  const ix = tx.message.compiledInstructions.find((i) =>
    keys[i.programIdIndex]?.equals(ORDER_ENGINE_PROGRAM_ID),
  );
  return ix ? decodeFillData(ix.data) : undefined;
}

describe("operator simulator: order", () => {
  it("reads the webhook's token lists at registration", () => {
    expect(sim.op.firstSync.get("mm")?.kind).toBe("changed");
    expect(sim.op.registry.get("mm")?.tokens.has(MINT.USDC)).toBe(true);
  });

  it("answers an indicative order (no taker) with every required field, transaction null", async () => {
    const r = await sim.order({ inputMint: MINT.USDC, outputMint: MINT.JUP, amount: "10000000" });
    expect(r.status).toBe(200);
    expect(orderShapeProblems(r.body)).toEqual([]);
    expect(r.body).toMatchObject({
      router: "router_2",
      transaction: null,
      taker: null,
      inAmount: "10000000",
    });
  });

  it("builds the fill for a taker: fee in USDC (the input, a stablecoin before JUP), expire_at now + 55 s, the maker's CU price, maker pays fees", async () => {
    // The simulator's clock stands still for this order, so expire_at is pinned exactly.
    frozenSimNowMs = Date.now();
    const orderedAt = BigInt(Math.floor(frozenSimNowMs / 1000));
    const r = await usdcToJup("10000000").finally(() => {
      frozenSimNowMs = undefined;
    });
    expect(r.status).toBe(200);
    expect(orderShapeProblems(r.body)).toEqual([]);
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    const keys = tx.message.staticAccountKeys;
    expect(keys[0]?.toBase58()).toBe(r.body.maker);
    expect(keys[1]?.equals(taker.publicKey)).toBe(true);
    const fill = fillOf(tx);
    const route = (r.body.routePlan as { swapInfo: { inAmount: string; outAmount: string } }[])[0]!.swapInfo;
    // 10 bps of the 10 USDC the taker pays stays with the maker (owed to the operator); the maker
    // was asked to quote the 9.99 USDC left, and its whole quoted output reaches the taker.
    expect(route.inAmount).toBe("9990000");
    const quotedOut = BigInt(route.outAmount);
    expect(fill).toMatchObject({
      inputAmount: 10_000_000n,
      outputAmount: quotedOut,
      feeBps: 10,
      exactOut: false,
    });
    expect(r.body).toMatchObject({
      inAmount: "10000000",
      outAmount: quotedOut.toString(),
      feeMint: MINT.USDC,
    });
    expect(r.body.platformFee).toEqual({ amount: "10000", feeBps: 10 });
    expect(fill!.expireAt).toBe(orderedAt + 55n);
    expect(r.body.expireAt).toBe(fill!.expireAt.toString());
    expect(r.body).toMatchObject({
      signatureFeePayer: r.body.maker,
      prioritizationFeePayer: r.body.maker,
      rentFeePayer: null,
      gasless: true,
    });
  });

  it("puts the taker's ATA creation, paid by the taker, in front of the fill when the output account is missing", async () => {
    const r = await sim.order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "100000000",
      taker: freshTaker.publicKey.toBase58(),
    });
    expect(r.status).toBe(200);
    expect(orderShapeProblems(r.body)).toEqual([]);
    expect(r.body.rentFeePayer).toBe(freshTaker.publicKey.toBase58());
    expect(r.body.rentFeeLamports as number).toBeGreaterThan(0);
    const { b64 } = signed(r.body.transaction as string, freshTaker);
    const usdcBefore = tokenBalance(h.chain, freshTaker.publicKey, new PublicKey(MINT.USDC));
    const solBefore = lamports(h.chain, freshTaker.publicKey);
    const x = await sim.execute("/swap/v2/execute", { signedTransaction: b64, requestId: r.body.requestId });
    expect(x.body).toMatchObject({ status: "Success", code: 0 });
    expect(tokenBalance(h.chain, freshTaker.publicKey, new PublicKey(MINT.USDC)) - usdcBefore).toBe(
      BigInt(r.body.outAmount as string),
    );
    expect(solBefore - lamports(h.chain, freshTaker.publicKey)).toBe(
      BigInt(r.body.rentFeeLamports as number),
    );
  });

  it("answers errorCode 1 with an empty transaction when the taker cannot pay", async () => {
    const r = await usdcToJup("10000000", broke);
    expect(r.status).toBe(200);
    expect(orderShapeProblems(r.body)).toEqual([]);
    expect(r.body).toMatchObject({ transaction: "", errorCode: 1, errorMessage: "Insufficient funds" });
  });

  it("answers 400 {error} for an unknown mint and for a malformed amount", async () => {
    const unknown = Keypair.generate().publicKey.toBase58();
    const a = await sim.order({ inputMint: MINT.USDC, outputMint: unknown, amount: "1000000" });
    expect(a.status).toBe(400);
    expect(typeof a.body.error).toBe("string");
    const b = await sim.order({ inputMint: MINT.USDC, outputMint: MINT.JUP, amount: "1.5" });
    expect(b.status).toBe(400);
    expect(b.body.error).toMatch(/amount/);
  });
});

describe("operator simulator: execute", () => {
  it("executes an exactIn order through /swap/v2/execute: Success, every field, balances moved as quoted", async () => {
    const r = await usdcToJup("25000000");
    const { b64 } = signed(r.body.transaction as string, taker);
    const usdc = new PublicKey(MINT.USDC);
    const jup = new PublicKey(MINT.JUP);
    const before = {
      usdc: tokenBalance(h.chain, taker.publicKey, usdc),
      jup: tokenBalance(h.chain, taker.publicKey, jup),
    };
    const x = await sim.execute("/swap/v2/execute", { signedTransaction: b64, requestId: r.body.requestId });
    expect(x.status).toBe(200);
    expect(executeShapeProblems(x.body)).toEqual([]);
    expect(x.body).toMatchObject({
      status: "Success",
      code: 0,
      totalInputAmount: r.body.inAmount,
      totalOutputAmount: r.body.outAmount,
      // What went through the route: the maker's quoted amounts (the fee was taken in USDC, the input).
      inputAmountResult: (r.body.routePlan as { swapInfo: { inAmount: string } }[])[0]!.swapInfo.inAmount,
    });
    expect(before.usdc - tokenBalance(h.chain, taker.publicKey, usdc)).toBe(
      BigInt(r.body.inAmount as string),
    );
    expect(tokenBalance(h.chain, taker.publicKey, jup) - before.jup).toBe(BigInt(r.body.outAmount as string));
    expect(sim.op.fillRate.status("mm").fills).toBeGreaterThanOrEqual(1);
  });

  it("executes an exactOut order paying native SOL through /ultra/v1/execute", async () => {
    const r = await sim.order({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: "5000000",
      swapMode: "ExactOut",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.status).toBe(200);
    expect(orderShapeProblems(r.body)).toEqual([]);
    expect(r.body.swapMode).toBe("ExactOut");
    const { tx, b64 } = signed(r.body.transaction as string, taker);
    expect(fillOf(tx)?.exactOut).toBe(true);
    const solBefore = lamports(h.chain, taker.publicKey);
    const x = await sim.execute("/ultra/v1/execute", { signedTransaction: b64, requestId: r.body.requestId });
    expect(executeShapeProblems(x.body)).toEqual([]);
    expect(x.body).toMatchObject({ status: "Success", code: 0 });
    expect(solBefore - lamports(h.chain, taker.publicKey)).toBe(BigInt(r.body.inAmount as string));
    expect((x.body.swapEvents as unknown[])[0]).toMatchObject({
      inputMint: NATIVE_MINT.toBase58(),
      outputMint: MINT.USDC,
    });
  });

  it("refuses a signed transaction whose message differs from the order's (code -3), and sends nothing", async () => {
    const r = await usdcToJup("3000000");
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    tx.message.recentBlockhash = Keypair.generate().publicKey.toBase58();
    tx.sign([taker]);
    const x = await sim.execute("/swap/v2/execute", {
      signedTransaction: Buffer.from(tx.serialize()).toString("base64"),
      requestId: r.body.requestId,
    });
    expect(x.status).toBe(400);
    expect(x.body).toMatchObject({ code: -3 });
    expect(typeof x.body.error).toBe("string");
  });

  it("refuses a transaction without a valid taker signature (code -2)", async () => {
    const r = await usdcToJup("3000000");
    const tx = VersionedTransaction.deserialize(Buffer.from(r.body.transaction as string, "base64"));
    // A signature in the taker's slot, but not the taker's over this message.
    tx.signatures[1] = Keypair.generate().secretKey.slice(0, 64);
    const b64 = Buffer.from(tx.serialize()).toString("base64");
    const x = await sim.execute("/swap/v2/execute", { signedTransaction: b64, requestId: r.body.requestId });
    expect(x.body).toMatchObject({ code: -2 });
  });

  it("refuses an unknown requestId (code -1)", async () => {
    const r = await usdcToJup("3000000");
    const { b64 } = signed(r.body.transaction as string, taker);
    const x = await sim.execute("/swap/v2/execute", { signedTransaction: b64, requestId: "no-such-request" });
    expect(x.body).toMatchObject({ code: -1 });
  });

  it("answers quote expired (code -2003) past the order's expiry without asking the maker", async () => {
    const r = await usdcToJup("3000000");
    const { b64 } = signed(r.body.transaction as string, taker);
    const fillsBefore = sim.op.fillRate.status("mm");
    clockOffsetMs = 60_000;
    try {
      const x = await sim.execute("/swap/v2/execute", {
        signedTransaction: b64,
        requestId: r.body.requestId,
      });
      expect(x.body).toMatchObject({ status: "Failed", code: -2003 });
    } finally {
      clockOffsetMs = 0;
    }
    const after = sim.op.fillRate.status("mm");
    expect(after.fills + after.failures).toBe(fillsBefore.fills + fillsBefore.failures);
  });

  it("reports the maker's honest rejection as swap rejected (-2004) without counting it against the fill rate", async () => {
    const spender = Keypair.generate();
    fundTaker(h.chain, spender.publicKey, {
      sol: 1_000_000_000n,
      tokens: { [MINT.USDC]: 10_000_000n, [MINT.JUP]: 0n },
    });
    const r = await usdcToJup("10000000", spender);
    expect(r.body.transaction).toBeTruthy();
    // The taker spends its USDC elsewhere between order and execute: the maker must refuse, honestly.
    const usdc = new PublicKey(MINT.USDC);
    const { blockhash } = await h.chain.getLatestBlockhash();
    const spend = new VersionedTransaction(
      new TransactionMessage({
        payerKey: spender.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          createTransferInstruction(
            getAssociatedTokenAddressSync(usdc, spender.publicKey),
            getAssociatedTokenAddressSync(usdc, h.maker.publicKey),
            spender.publicKey,
            10_000_000n,
          ),
        ],
      }).compileToV0Message(),
    );
    spend.sign([spender]);
    expect(await h.chain.send(spend)).toMatchObject({ ok: true });
    expect(tokenBalance(h.chain, spender.publicKey, usdc)).toBe(0n);
    const { b64 } = signed(r.body.transaction as string, spender);
    const statusBefore = sim.op.fillRate.status("mm");
    const x = await sim.execute("/swap/v2/execute", { signedTransaction: b64, requestId: r.body.requestId });
    expect(x.body).toMatchObject({ status: "Failed", code: -2004 });
    expect(x.body.error).toMatch(/insufficientBalance/);
    const after = sim.op.fillRate.status("mm");
    expect(after.failures).toBe(statusBefore.failures);
  });
});

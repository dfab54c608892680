/**
 * The operator simulator's order and execute answers as the operator's own clients read them
 * (docs/contract.md, "The operator's order and execute API" and "Fees"): every listed field with and
 * without a taker, ExactIn and ExactOut; the query parameters its integration suite sends; both
 * spellings of the router names; the execute paths with `?swapType=rfq`; the fee mint picked by
 * priority, an ExactOut order that delivers exactly the amount asked, and the fee owed booked in the
 * fee's mint. Expected amounts are worked out here from the maker's quoted figures.
 */
import { Keypair, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker, lamports, tokenBalance } from "../../../src/chain/local/seed.ts";
import { MINT } from "../../support/config.ts";
import { createHarness, type Harness } from "../../support/harness.ts";
import { testRedis } from "../../support/redis.ts";
import { type Simulator, startSimulator } from "./simulator.ts";

let h: Harness;
let sim: Simulator;
const redis = testRedis();
const taker = Keypair.generate();

beforeAll(async () => {
  h = await createHarness({ redis });
  fundTaker(h.chain, taker.publicKey, {
    sol: 50_000_000_000n,
    tokens: { [MINT.USDC]: 5_000_000_000n, [MINT.JUP]: 5_000_000_000n, [MINT.SOL]: 0n },
  });
  sim = await startSimulator(h);
});

afterAll(async () => {
  await sim?.close();
  await h?.close();
  await redis.redis.quit();
});

/** The fields docs/contract.md lists for every order answer. */
const LISTED = [
  "requestId",
  "quoteId",
  "maker",
  "expireAt",
  "swapMode",
  "inAmount",
  "outAmount",
  "inputMint",
  "outputMint",
  "feeBps",
  "feeMint",
  "router",
] as const;

/** The query parameters the operator's integration suite sends beside the order's own. */
const CLIENT_EXTRAS = {
  mode: "ultra",
  slippageBps: "50",
  broadcastFeeType: "maxCap",
  priorityFeeLamports: "1000000",
  useWsol: "false",
  asLegacyTransaction: "false",
  excludeDexes: "",
  excludeRouters: "metis,hashflow,dflow,pyth,okx",
  webhookId: "some-webhook-id",
};

const signed64 = (b64: string) => {
  const tx = VersionedTransaction.deserialize(Buffer.from(b64, "base64"));
  tx.sign([taker]);
  return Buffer.from(tx.serialize()).toString("base64");
};
const route = (body: Record<string, unknown>) =>
  (body.routePlan as { swapInfo: { inAmount: string; outAmount: string } }[])[0]!.swapInfo;

describe("order answers carry every field docs/contract.md lists", () => {
  it.each([
    ["ExactIn", "with a taker", true],
    ["ExactIn", "without a taker", false],
    ["ExactOut", "with a taker", true],
    ["ExactOut", "without a taker", false],
  ] as const)(
    "%s %s: every listed field, router_2, transaction a string or null, extra parameters accepted",
    async (swapMode, _w, withTaker) => {
      const before = Math.floor(Date.now() / 1000);
      const r = await sim.order({
        inputMint: MINT.USDC,
        outputMint: MINT.SOL,
        amount: "1000000",
        swapMode,
        ...CLIENT_EXTRAS,
        ...(withTaker ? { taker: taker.publicKey.toBase58() } : {}),
      });
      expect(r.status).toBe(200);
      const missing = LISTED.filter((f) => r.body[f] === undefined || r.body[f] === null);
      expect(missing).toEqual([]);
      expect(r.body).toMatchObject({
        swapMode,
        inputMint: MINT.USDC,
        outputMint: MINT.SOL,
        router: "router_2",
      });
      expect(Number(r.body.expireAt) - before).toBeGreaterThanOrEqual(55);
      expect(Number(r.body.expireAt) - before).toBeLessThanOrEqual(57);
      if (withTaker) expect(typeof r.body.transaction).toBe("string");
      else expect(r.body.transaction).toBeNull();
      // The amount asked is exact on its side: the taker pays it (ExactIn) or receives it (ExactOut).
      expect(r.body[swapMode === "ExactIn" ? "inAmount" : "outAmount"]).toBe("1000000");
    },
  );

  it("answers manual mode with the flat 2 bps fee and echoes the mode", async () => {
    const r = await sim.order({
      inputMint: MINT.USDC,
      outputMint: MINT.SOL,
      amount: "1000000",
      mode: "manual",
    });
    expect(r.body).toMatchObject({ mode: "manual", feeBps: 2 });
  });

  it.each([["router_2"], ["jupiterz"], ["metis,JupiterZ"]])(
    "answers 400 when excludeRouters=%s names the RFQ router",
    async (excludeRouters) => {
      const r = await sim.order({
        inputMint: MINT.USDC,
        outputMint: MINT.SOL,
        amount: "1000000",
        excludeRouters,
      });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(/excluded/);
    },
  );

  it.each([["metis"], ["router_1"], ["metis,hashflow,dflow,pyth,okx"]])(
    "quotes when excludeRouters=%s leaves the RFQ router in",
    async (excludeRouters) => {
      const r = await sim.order({
        inputMint: MINT.USDC,
        outputMint: MINT.SOL,
        amount: "1000000",
        excludeRouters,
      });
      expect(r.status).toBe(200);
    },
  );
});

describe("fees, both sides", () => {
  it("counts the fee in SOL for SOL/USDC (SOL first), in USDC for JUP/USDC (stablecoins before bluechips)", async () => {
    const a = await sim.order({ inputMint: MINT.USDC, outputMint: MINT.SOL, amount: "1000000" });
    const b = await sim.order({ inputMint: MINT.SOL, outputMint: MINT.USDC, amount: "10000000" });
    const c = await sim.order({ inputMint: MINT.JUP, outputMint: MINT.USDC, amount: "1000000" });
    const d = await sim.order({ inputMint: MINT.USDC, outputMint: MINT.JUP, amount: "1000000" });
    expect([a.body.feeMint, b.body.feeMint, c.body.feeMint, d.body.feeMint]).toEqual([
      MINT.SOL,
      MINT.SOL,
      MINT.USDC,
      MINT.USDC,
    ]);
  });

  it("ExactOut SOL for exactly 1 USDC: outAmount is the amount asked, the taker receives exactly it, the fee is owed in SOL", async () => {
    const r = await sim.order({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: "1000000",
      swapMode: "ExactOut",
      taker: taker.publicKey.toBase58(),
    });
    expect(r.status).toBe(200);
    expect(r.body.outAmount).toBe("1000000");
    expect(r.body.feeMint).toBe(MINT.SOL);
    // The maker quoted amountIn for 1 USDC; the taker pays that plus 10 bps on the gross, in SOL.
    const quotedIn = BigInt(route(r.body).inAmount);
    const gross = BigInt(r.body.inAmount as string);
    const fee = gross - quotedIn;
    expect(fee).toBe((gross * 10n) / 10_000n);
    expect(gross - 1n - ((gross - 1n) * 10n) / 10_000n).toBeLessThan(quotedIn); // the smallest such gross
    expect(r.body.platformFee).toEqual({ amount: fee.toString(), feeBps: 10 });

    const usdc = new PublicKey(MINT.USDC);
    const usdcBefore = tokenBalance(h.chain, taker.publicKey, usdc);
    const solBefore = lamports(h.chain, taker.publicKey);
    const x = await sim.execute("/ultra/v1/execute?swapType=rfq", {
      signedTransaction: signed64(r.body.transaction as string),
      requestId: r.body.requestId,
    });
    expect(x.body).toMatchObject({
      status: "Success",
      code: 0,
      totalInputAmount: gross.toString(),
      totalOutputAmount: "1000000",
      inputAmountResult: quotedIn.toString(),
      outputAmountResult: "1000000",
    });
    expect(tokenBalance(h.chain, taker.publicKey, usdc) - usdcBefore).toBe(1_000_000n);
    expect(solBefore - lamports(h.chain, taker.publicKey)).toBe(gross);

    const quoteId = r.body.quoteId as string;
    expect(await h.confirmations.settled(quoteId)).toBe("landed");
    const booked = (await h.journal.feesOwed()).filter((f) => f.quoteId === quoteId);
    expect(booked.map((f) => ({ mint: f.mint, amount: f.amount }))).toEqual([
      { mint: MINT.SOL, amount: fee.toString() },
    ]);
  });

  it("ExactIn JUP to USDC through /swap/v2/execute?swapType=rfq: the fee is kept from the USDC output and owed in USDC", async () => {
    const r = await sim.order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "100000000",
      taker: taker.publicKey.toBase58(),
    });
    const quotedOut = BigInt(route(r.body).outAmount);
    const fee = (quotedOut * 10n) / 10_000n;
    expect(r.body).toMatchObject({
      inAmount: "100000000",
      outAmount: (quotedOut - fee).toString(),
      feeMint: MINT.USDC,
    });
    const usdc = new PublicKey(MINT.USDC);
    const before = tokenBalance(h.chain, taker.publicKey, usdc);
    const x = await sim.execute("/swap/v2/execute?swapType=rfq", {
      signedTransaction: signed64(r.body.transaction as string),
      requestId: r.body.requestId,
    });
    expect(x.body).toMatchObject({ status: "Success", outputAmountResult: quotedOut.toString() });
    expect(tokenBalance(h.chain, taker.publicKey, usdc) - before).toBe(quotedOut - fee);
    const quoteId = r.body.quoteId as string;
    expect(await h.confirmations.settled(quoteId)).toBe("landed");
    const booked = (await h.journal.feesOwed()).filter((f) => f.quoteId === quoteId);
    expect(booked.map((f) => ({ mint: f.mint, amount: f.amount }))).toEqual([
      { mint: MINT.USDC, amount: fee.toString() },
    ]);
  });
});

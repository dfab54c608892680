/**
 * End to end through the real HTTP path over a real socket: POST /quote -> the fill the operator
 * builds from our answer (sandbox/fill/builder.ts) -> the taker signs -> POST /swap -> accepted, and both
 * parties' balances on the local chain (LiteSVM) moved by exactly the filled amounts. Then the
 * confirmation tracker settles the fill: landed, fee owed recorded, reservation committed.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { NATIVE_MINT } from "../../src/program/layout.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
  type Fetcher,
  type Harness,
  listen,
  operatorFill,
  postSwap,
} from "../support/harness.ts";

const JUP = new PublicKey(MINT.JUP);
const USDC = new PublicKey(MINT.USDC);
const TOKEN_ACCOUNT_SIZE = 165n;

let h: Harness;
let server: Awaited<ReturnType<typeof listen>>;
let http: Fetcher;

beforeAll(async () => {
  h = await createHarness();
  server = await listen(h.app);
  http = server.fetch;
});
afterAll(async () => {
  await server.close();
  await h.close();
});

/** Every balance a fill can move, for the taker and the maker. */
function balances(taker: PublicKey, mints: PublicKey[]) {
  const maker = h.maker.publicKey;
  const out: Record<string, bigint> = {
    takerLamports: lamports(h.chain, taker),
    makerLamports: lamports(h.chain, maker),
  };
  for (const m of mints) {
    out[`taker:${m.toBase58()}`] = tokenBalance(h.chain, taker, m);
    out[`maker:${m.toBase58()}`] = tokenBalance(h.chain, maker, m);
  }
  return out;
}

async function swapAndSettle(
  ask: Parameters<typeof askQuote>[2],
  taker: Keypair,
  nativeSol: { in?: boolean; out?: boolean } = {},
) {
  const { response, stored } = await askQuote(h, http, ask);
  const tx = await operatorFill(h, stored, taker.publicKey, {
    nativeSolIn: nativeSol.in ?? false,
    nativeSolOut: nativeSol.out ?? false,
  });
  tx.sign([taker]);
  const mints = [new PublicKey(ask.tokenIn), new PublicKey(ask.tokenOut)];
  const before = balances(taker.publicKey, mints);
  const swap = await postSwap(http, {
    requestId: response.requestId,
    quoteId: response.quoteId,
    transaction: tx,
  });
  const after = balances(taker.publicKey, mints);
  const outcome = await h.confirmations.settled(response.quoteId);
  return { response, stored, swap, before, after, outcome, tx };
}

/**
 * What the fill must move, by the contract's arithmetic written out here (not the fill builder's or
 * the validator's code): the quoted amountIn, and the quoted amountOut less the operator's fee,
 * rounded down.
 */
function expectedAmounts(stored: StoredQuote) {
  const amountOut = BigInt(stored.response.amountOut);
  const fee = (amountOut * BigInt(stored.request.feeBps)) / 10_000n;
  return { inputAmount: BigInt(stored.response.amountIn), outputAmount: amountOut - fee, fee };
}

const delta = (a: Record<string, bigint>, b: Record<string, bigint>, key: string) =>
  (b[key] ?? 0n) - (a[key] ?? 0n);

describe("POST /swap end to end (real socket, local chain)", () => {
  it("fills an exactIn SPL-to-SPL quote, creating the taker's output ATA at the taker's cost", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 10_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
    const r = await swapAndSettle(
      { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 2_000_000_000n, feeBps: 10, taker: taker.publicKey },
      taker,
    );
    expect(r.swap.status).toBe(200);
    expect(r.swap.body.state).toBe("accepted");
    expect(r.swap.body.txSignature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);

    const { inputAmount, outputAmount } = expectedAmounts(r.stored);
    expect(inputAmount).toBe(2_000_000_000n);
    const j = JUP.toBase58();
    const u = USDC.toBase58();
    expect(delta(r.before, r.after, `taker:${j}`)).toBe(-inputAmount);
    expect(delta(r.before, r.after, `maker:${j}`)).toBe(inputAmount);
    expect(delta(r.before, r.after, `taker:${u}`)).toBe(outputAmount);
    expect(delta(r.before, r.after, `maker:${u}`)).toBe(-outputAmount);
    // The taker pays only its new ATA's rent; the maker pays the transaction fee.
    const ataRent = await h.chain.getMinimumBalanceForRentExemption(Number(TOKEN_ACCOUNT_SIZE));
    expect(delta(r.before, r.after, "takerLamports")).toBe(-ataRent);
    // 60,000 compute units at the quoted price, rounded up to a lamport, plus two signatures.
    const price = BigInt(r.stored.response.prioritizationFeeToUse ?? 0);
    expect(delta(r.before, r.after, "makerLamports")).toBe(
      -((60_000n * price + 999_999n) / 1_000_000n + 10_000n),
    );

    expect(r.outcome).toBe("landed");
    const fees = await h.journal.feesOwed();
    const fee = fees.find((f) => f.quoteId === r.response.quoteId);
    expect(fee).toMatchObject({
      mint: MINT.USDC,
      amount: (BigInt(r.stored.response.amountOut) - outputAmount).toString(),
      feeBps: 10,
      txSignature: r.swap.body.txSignature,
    });
  });

  it("fills an exactOut SPL-to-SPL quote into an existing ATA, moving exactly the quoted amounts", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, {
      sol: 10_000_000n,
      tokens: { [MINT.USDC]: 50_000_000n, [MINT.JUP]: 1n },
    });
    const r = await swapAndSettle(
      {
        tokenIn: MINT.USDC,
        tokenOut: MINT.JUP,
        amount: 10_000_000n,
        quoteType: "exactOut",
        feeBps: 5,
        taker: taker.publicKey,
      },
      taker,
    );
    expect(r.swap.body.state).toBe("accepted");
    const { inputAmount, outputAmount } = expectedAmounts(r.stored);
    expect(BigInt(r.stored.response.amountOut)).toBe(10_000_000n);
    expect(outputAmount).toBe(9_995_000n); // 10 JUP less 5 bps
    const j = JUP.toBase58();
    const u = USDC.toBase58();
    expect(delta(r.before, r.after, `taker:${u}`)).toBe(-inputAmount);
    expect(delta(r.before, r.after, `maker:${u}`)).toBe(inputAmount);
    expect(delta(r.before, r.after, `taker:${j}`)).toBe(outputAmount);
    expect(delta(r.before, r.after, `maker:${j}`)).toBe(-outputAmount);
    expect(delta(r.before, r.after, "takerLamports")).toBe(0n);
    expect(r.outcome).toBe("landed");
  });

  it("fills a native-SOL-in quote: the taker's lamports pay the input, the maker's wSOL receives it", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 3_000_000_000n });
    const r = await swapAndSettle(
      { tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: 1_000_000_000n, feeBps: 10, taker: taker.publicKey },
      taker,
      { in: true },
    );
    expect(r.swap.body.state).toBe("accepted");
    const { inputAmount, outputAmount } = expectedAmounts(r.stored);
    const ataRent = await h.chain.getMinimumBalanceForRentExemption(Number(TOKEN_ACCOUNT_SIZE));
    expect(delta(r.before, r.after, "takerLamports")).toBe(-(inputAmount + ataRent));
    expect(delta(r.before, r.after, `maker:${NATIVE_MINT.toBase58()}`)).toBe(inputAmount);
    expect(delta(r.before, r.after, `taker:${USDC.toBase58()}`)).toBe(outputAmount);
    expect(delta(r.before, r.after, `maker:${USDC.toBase58()}`)).toBe(-outputAmount);
    expect(r.outcome).toBe("landed");
  });

  it("fills a native-SOL-out exactOut quote: the taker receives lamports, the maker's wSOL pays", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 5_000_000n, tokens: { [MINT.USDC]: 1_000_000_000n } });
    const r = await swapAndSettle(
      {
        tokenIn: MINT.USDC,
        tokenOut: MINT.SOL,
        amount: 2_000_000_000n,
        quoteType: "exactOut",
        feeBps: 10,
        taker: taker.publicKey,
      },
      taker,
      { out: true },
    );
    expect(r.swap.body.state).toBe("accepted");
    const { inputAmount, outputAmount } = expectedAmounts(r.stored);
    expect(delta(r.before, r.after, "takerLamports")).toBe(outputAmount);
    expect(delta(r.before, r.after, `maker:${NATIVE_MINT.toBase58()}`)).toBe(-outputAmount);
    expect(delta(r.before, r.after, `taker:${USDC.toBase58()}`)).toBe(-inputAmount);
    expect(delta(r.before, r.after, `maker:${USDC.toBase58()}`)).toBe(inputAmount);
    expect(r.outcome).toBe("landed");
  });

  it("counts landed fills and the fee owed on /metrics, and the fill rate over them", async () => {
    const res = await h.service.opsApp.request("/metrics");
    const text = await res.text();
    expect(text).toMatch(/rfq_fills_total\{outcome="landed"\} 4/);
    expect(text).toMatch(/rfq_swaps_total\{state="accepted",reason="none"\} 4/);
    expect(text).not.toMatch(/=""/); // no empty label value anywhere
    expect(text).toMatch(
      /rfq_operator_fee_owed_units_total\{mint="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"\} [1-9]/,
    );
    expect(h.fillRate.snapshot()).toMatchObject({ counted: 4, landed: 4, pending: 0, ratio: 1 });
  });
});

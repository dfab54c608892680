/**
 * The attack table, end to end: every tampered fill from the fill helper's toolkit
 * (test/fill/tamper.ts), plus attacks on the swap request itself, posted to POST /swap over a real
 * socket against the composed service on a local chain. Each must be refused with the right state,
 * and for each: no maker signature is produced (the Signer is wrapped to count signs), the chain
 * receives nothing (the Chain is wrapped to count sends), and no balance of either party moves.
 *
 * Validation runs before the quote is claimed, so none of these can burn the quote: after the whole
 * table, the honest fill for the same quote is still accepted.
 */
import { Keypair, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import type { SwapResponse } from "../../src/contract/swap.ts";
import { ed25519SigningKey, signEd25519 } from "../../src/crypto/ed25519.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import {
  AFTER_CLAIM_ATTACKS,
  FILL_ATTACKS,
  type FillScenario,
  NATIVE_SOL_OUT_ATTACKS,
  scenarioFromQuote,
  signAsTaker,
} from "../fill/tamper.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Fetcher,
  type Harness,
  type ObservedChain,
  postSwap,
} from "../support/harness.ts";
import { type SwapBed, swapBed } from "../support/swap-bed.ts";

let h: Harness;
let signer: CountingSigner;
let chain: ObservedChain;
let http: Fetcher;
let bed: SwapBed;
const taker = Keypair.generate();

beforeAll(async () => {
  bed = await swapBed({ taker });
  ({ h, signer, chain, http } = bed);
});
afterAll(() => bed.close());

async function scenario(ask: Parameters<typeof askQuote>[2], nativeSolOut = false) {
  const { stored } = await askQuote(h, http, ask);
  const { blockhash } = await h.chain.getLatestBlockhash();
  const s = scenarioFromQuote(stored, {
    maker: h.maker.publicKey,
    taker: taker.publicKey,
    tokens: h.config.tokensByMint,
    recentBlockhash: blockhash,
    nowUnix: BigInt(Math.floor(Date.now() / 1000)),
    maxFeeLamports: BigInt(h.config.file.limits.maxFeeLamports),
    nativeSolOut,
  });
  return { stored, s };
}

/** Posts a transaction and checks the refusal left no trace: no signature, no send, no balance move. */
async function expectRefusedWithoutTrace(
  quote: StoredQuote,
  tx: VersionedTransaction | string,
  requestId = quote.requestId,
): Promise<SwapResponse> {
  const signsBefore = signer.count;
  const sendsBefore = chain.sends;
  const before = bed.balances();
  const res = await postSwap(http, { requestId, quoteId: quote.quoteId, transaction: tx });
  expect(res.status).toBe(200);
  expect(res.body.state).not.toBe("accepted");
  expect(res.body.txSignature).toBeUndefined();
  expect(signer.count).toBe(signsBefore);
  expect(chain.sends).toBe(sendsBefore);
  expect(bed.balances()).toEqual(before);
  return res.body;
}

/** A raw ed25519 signature by `kp` (node:crypto; the 32-byte seed wrapped in its PKCS#8 header). */
function ed25519Sign(message: Uint8Array, kp: Keypair): Uint8Array {
  return signEd25519(message, ed25519SigningKey(kp.secretKey));
}

const serialize = (tx: VersionedTransaction) => Buffer.from(tx.serialize()).toString("base64");

describe("POST /swap refuses every tampered fill without signing (SPL output leg)", () => {
  let quote: StoredQuote;
  let s: FillScenario;
  beforeAll(async () => {
    ({ stored: quote, s } = await scenario({
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 3_000_000_000n,
      feeBps: 10,
      taker: taker.publicKey,
    }));
  });

  it.each(FILL_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", async (_name, attack) => {
    const tx = signAsTaker(attack.tamper(s), taker);
    const body = await expectRefusedWithoutTrace(quote, tx);
    expect(body.state).toBe("rejected");
    expect(body.rejectionReason).toMatch(new RegExp(`^${attack.code}: `));
  });

  it("refuses the honest fill carrying the taker's signature over a different (tampered) message", async () => {
    const honest = signAsTaker(buildFillTransaction(s.params), taker);
    // A lower price: a message the validator accepts, so only the signature check can catch the swap.
    const tampered = buildFillTransaction({ ...s.params, computeUnitPrice: s.params.computeUnitPrice - 1n });
    tampered.signatures[1] = honest.signatures[1] as Uint8Array;
    const body = await expectRefusedWithoutTrace(quote, tampered);
    expect(body.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
  });

  it("refuses a fill whose taker slot is signed by another key", async () => {
    const tx = buildFillTransaction(s.params);
    // An impostor signs the same message bytes with its own key; the signature sits in the taker's slot.
    tx.signatures[1] = ed25519Sign(tx.message.serialize(), Keypair.generate());
    const body = await expectRefusedWithoutTrace(quote, tx);
    expect(body.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
  });

  it("refuses a fill whose taker slot is empty", async () => {
    const body = await expectRefusedWithoutTrace(quote, buildFillTransaction(s.params));
    expect(body.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
  });

  it("refuses a fill whose maker slot is already filled", async () => {
    const tx = signAsTaker(buildFillTransaction(s.params), taker);
    tx.signatures[0] = new Uint8Array(64).fill(7);
    const body = await expectRefusedWithoutTrace(quote, tx);
    expect(body.state).toBe("rejected");
    expect(body.rejectionReason).toMatch(/maker's signature slot/);
  });

  it("refuses bytes that are not a transaction, and a transaction with trailing bytes", async () => {
    const garbage = await expectRefusedWithoutTrace(
      quote,
      Buffer.from("not a transaction at all").toString("base64"),
    );
    expect(garbage.rejectionReason).toMatch(/^MALFORMED_TRANSACTION: /);
    const honest = signAsTaker(buildFillTransaction(s.params), taker);
    const padded = Buffer.concat([Buffer.from(honest.serialize()), Buffer.from([0, 0, 0])]).toString(
      "base64",
    );
    const trailing = await expectRefusedWithoutTrace(quote, padded);
    expect(trailing.rejectionReason).toMatch(/^MALFORMED_TRANSACTION: .*trailing/);
  });

  it("refuses a swap whose requestId is not the quote's", async () => {
    const tx = signAsTaker(buildFillTransaction(s.params), taker);
    const body = await expectRefusedWithoutTrace(quote, serialize(tx), "someone-elses-request");
    expect(body.rejectionReason).toMatch(/does not match the quote's requestId/);
  });

  it("refuses a valid fill for another quote replayed under this quoteId", async () => {
    const other = await scenario({
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000_000_000n,
      feeBps: 10,
      taker: taker.publicKey,
    });
    const tx = signAsTaker(buildFillTransaction(other.s.params), taker);
    const body = await expectRefusedWithoutTrace(quote, tx);
    expect(body.rejectionReason).toMatch(/^INVALID_INPUT_AMOUNT: /);
  });

  it("refuses a swap naming a quote it never gave", async () => {
    const tx = signAsTaker(buildFillTransaction(s.params), taker);
    const res = await postSwap(http, {
      requestId: quote.requestId,
      quoteId: "no-such-quote",
      transaction: tx,
    });
    expect(res.body).toMatchObject({ state: "rejected", quoteId: "no-such-quote" });
    expect(res.body.rejectionReason).toMatch(/unknown quote/);
  });

  it("still accepts the honest fill for the same quote after the whole table", async () => {
    const signs = signer.count;
    const tx = signAsTaker(buildFillTransaction(s.params), taker);
    const res = await postSwap(http, { requestId: quote.requestId, quoteId: quote.quoteId, transaction: tx });
    expect(res.body.state).toBe("accepted");
    expect(signer.count).toBe(signs + 1);
    expect(await h.confirmations.settled(quote.quoteId)).toBe("landed");
  });
});

describe("POST /swap refuses tampered native-SOL-output fills without signing", () => {
  let quote: StoredQuote;
  let s: FillScenario;
  beforeAll(async () => {
    ({ stored: quote, s } = await scenario(
      {
        tokenIn: MINT.USDC,
        tokenOut: MINT.SOL,
        amount: 500_000_000n,
        quoteType: "exactOut",
        taker: taker.publicKey,
      },
      true,
    ));
  });

  it.each(NATIVE_SOL_OUT_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", async (_name, attack) => {
    const tx = signAsTaker(attack.tamper(s), taker);
    const body = await expectRefusedWithoutTrace(quote, tx);
    expect(body.state).toBe("rejected");
    expect(body.rejectionReason).toMatch(new RegExp(`^${attack.code}: `));
  });

  it("still accepts the honest native-SOL-output fill afterwards", async () => {
    const tx = signAsTaker(buildFillTransaction(s.params), taker);
    const res = await postSwap(http, { requestId: quote.requestId, quoteId: quote.quoteId, transaction: tx });
    expect(res.body.state).toBe("accepted");
  });
});

describe("POST /swap refuses clock-bound tampering without signing", () => {
  it.each(AFTER_CLAIM_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", async (_name, attack) => {
    const { stored, s } = await scenario({
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000_000_000n,
      taker: taker.publicKey,
    });
    const body = await expectRefusedWithoutTrace(stored, signAsTaker(attack.tamper(s), taker));
    expect(body.state).toBe("rejected");
    expect(body.rejectionReason).toMatch(new RegExp(`^${attack.code}: `));
  });
});

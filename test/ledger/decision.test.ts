/**
 * The ledger's record of one /swap answer (src/ledger/decision.ts), built from what the swap path
 * learned: every field it carries for an accepted fill, what it leaves out when the swap was refused
 * before the quote or the fill were known (absent keys, not `undefined` ones: the ledger stores what
 * is there), and the decision key of a transaction that never decoded (a hash of its raw text).
 */
import { createHash } from "node:crypto";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { type QuoteResponse, quoteRequestSchema } from "../../src/contract/quote.ts";
import { accepted, rejected, rejectedWithReason, type SwapRequest } from "../../src/contract/swap.ts";
import { decisionRecord, type FilledTerms } from "../../src/ledger/decision.ts";
import { type StoredQuote, storedQuoteOf } from "../../src/quote-store/interface.ts";
import { refusal } from "../../src/refusal/codes.ts";
import { MINT, testConfig } from "../support/config.ts";

const config = testConfig();
const REQ: SwapRequest = { requestId: "req-1", quoteId: "quote-1", transaction: "AQID" };
const TAKER = Keypair.generate().publicKey;
const QUOTE_TAKER = Keypair.generate().publicKey.toBase58();

/** A stored quote of `tokenIn` for `tokenOut` (the default: the taker buys SOL with USDC). */
function quote(o: { tokenIn?: string; tokenOut?: string; taker?: string } = {}): StoredQuote {
  const tokenIn = o.tokenIn ?? MINT.USDC;
  const tokenOut = o.tokenOut ?? MINT.SOL;
  const request = quoteRequestSchema.parse({
    requestId: "req-1",
    quoteId: "quote-1",
    tokenIn,
    tokenOut,
    amount: "25000000",
    quoteType: "exactIn",
    protocol: "v1",
    feeBps: 10,
    taker: o.taker,
  });
  const response: QuoteResponse = {
    requestId: "req-1",
    quoteId: "quote-1",
    tokenIn,
    tokenOut,
    quoteType: "exactIn",
    protocol: "v1",
    amountIn: "25000000",
    amountOut: "166000000",
    maker: Keypair.generate().publicKey.toBase58(),
  };
  return storedQuoteOf(request, response, false, 1_000, 31_000);
}

const FILL: FilledTerms = {
  taker: TAKER,
  inputAmount: 25_000_000n,
  outputAmount: 165_834_000n,
  feeBps: 10,
  feeMint: { toBase58: () => MINT.SOL },
  feeOwed: 166_000n,
};

describe("decisionRecord", () => {
  it("records an accepted fill whole: the fill's taker, the pair and side, the quote, the filled amounts and fee, the hash and signature", () => {
    const record = decisionRecord(
      config,
      REQ,
      { response: accepted("quote-1", "sig-1") },
      { messageHash: "hash-1", quote: quote({ taker: QUOTE_TAKER }), fill: FILL },
      1_500,
      1_700,
    );
    expect(record).toStrictEqual({
      kind: "decision",
      decisionKey: "quote-1:hash-1",
      quoteId: "quote-1",
      requestId: "req-1",
      taker: TAKER.toBase58(),
      pair: "SOL/USDC",
      side: "sell",
      quote: {
        inputMint: MINT.USDC,
        outputMint: MINT.SOL,
        amountIn: "25000000",
        amountOut: "166000000",
        quoteType: "exactIn",
        taker: QUOTE_TAKER,
        feeBps: 10,
        createdAtMs: 1_000,
        expiresAtMs: 31_000,
      },
      filledAmountIn: "25000000",
      filledAmountOut: "165834000",
      feeBps: 10,
      feeMint: MINT.SOL,
      feeOwed: "166000",
      decision: "accepted",
      messageHash: "hash-1",
      txSignature: "sig-1",
      receivedAtMs: 1_500,
      decidedAtMs: 1_700,
    });
  });

  it("keys a swap refused before its transaction decoded by the sha256 of the raw text, with nothing it did not learn", () => {
    const why = refusal("QUOTE_NOT_FOUND", "no such quote");
    const record = decisionRecord(
      config,
      REQ,
      { response: rejected("quote-1", "QUOTE_NOT_FOUND: no such quote"), refusal: why },
      {},
      1_500,
      1_600,
    );
    const rawHash = createHash("sha256").update("AQID").digest("hex");
    expect(record).toStrictEqual({
      kind: "decision",
      decisionKey: `quote-1:${rawHash}`,
      quoteId: "quote-1",
      requestId: "req-1",
      decision: "rejected",
      refusal: why,
      receivedAtMs: 1_500,
      decidedAtMs: 1_600,
    });
  });

  it("records an honest rejection as rejectedWithReason, and a quote without a taker without one", () => {
    const record = decisionRecord(
      config,
      REQ,
      { response: rejectedWithReason("quote-1", "insufficientBalance") },
      { messageHash: "hash-2", quote: quote() },
      1_500,
      1_600,
    );
    expect(record.decision).toBe("rejectedWithReason");
    expect(record.decisionKey).toBe("quote-1:hash-2");
    expect("taker" in record).toBe(false);
    expect(record.quote).toBeDefined();
    expect("taker" in (record.quote ?? {})).toBe(false);
    expect("refusal" in record).toBe(false);
    expect("txSignature" in record).toBe(false);
    expect("filledAmountIn" in record).toBe(false);
  });

  it("takes the quote's taker when no fill was validated, and the buy side when the taker sells the base", () => {
    const record = decisionRecord(
      config,
      REQ,
      { response: rejected("quote-1", "x") },
      { messageHash: "hash-3", quote: quote({ tokenIn: MINT.SOL, tokenOut: MINT.USDC, taker: QUOTE_TAKER }) },
      1_500,
      1_600,
    );
    expect(record.taker).toBe(QUOTE_TAKER);
    expect([record.pair, record.side]).toEqual(["SOL/USDC", "buy"]);
  });

  it("leaves out the pair and side of a quote whose mints no configured pair trades", () => {
    const other = Keypair.generate().publicKey.toBase58();
    const record = decisionRecord(
      config,
      REQ,
      { response: rejected("quote-1", "x") },
      { messageHash: "hash-4", quote: quote({ tokenIn: other }) },
      1_500,
      1_600,
    );
    expect("pair" in record).toBe(false);
    expect("side" in record).toBe(false);
    expect(record.quote?.inputMint).toBe(other);
  });
});

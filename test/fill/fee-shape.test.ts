/**
 * The operator's fee on either side (docs/contract.md, "Fees"; src/fill/fee-shape.ts). Each shape the
 * operator builds is accepted, and a fill one unit beyond it on either side is refused: the maker
 * never sends more than its quoted amountOut nor receives less than its quoted amountIn. The expected
 * figures are worked out here by hand, not with the module's own helpers.
 */
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildFillTransaction, fillAmountsFromQuote } from "../../sandbox/fill/builder.ts";
import { checkFeeShape, grossForNet } from "../../src/fill/fee-shape.ts";
import { validateFill } from "../../src/fill/validate.ts";
import { FillRejectCode } from "../../src/refusal/codes.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";
import { scenarioFromQuote, tokenMap } from "./tamper.ts";

describe("grossForNet: the smallest gross whose fee-less part is the net", () => {
  it("matches a brute-force search for every net up to 3,000 at 0, 2, 10, 30 and 5,000 bps", () => {
    for (const bps of [0, 2, 10, 30, 5_000]) {
      let g = 0n;
      for (let net = 0n; net <= 3_000n; net++) {
        while (g - (g * BigInt(bps)) / 10_000n < net) g++;
        expect({ bps, net, g: grossForNet(net, bps) }).toEqual({ bps, net, g });
      }
    }
  });

  it("finds 10,001 for 2 net at 9,999 bps, the largest fee below the whole amount (10,000 would leave 1)", () => {
    expect(grossForNet(1n, 9_999)).toBe(1n);
    expect(grossForNet(2n, 9_999)).toBe(10_001n);
  });

  it("finds no gross at 10,000 bps or more (the fee takes everything), but 0 for a net of 0", () => {
    expect(grossForNet(0n, 10_000)).toBe(0n);
    expect(grossForNet(1n, 10_000)).toBeUndefined();
    expect(grossForNet(1n, 12_000)).toBeUndefined();
  });

  it("finds 1,001,001 for 1,000,000 net at 10 bps (fee 1,001 on the gross)", () => {
    expect(grossForNet(1_000_000n, 10)).toBe(1_001_001n);
  });
});

const quoted = { quotedIn: 1_000_000n, quotedOut: 25_000_000n, feeBps: 10 };

describe("FEE_IN_OUTPUT shape: input = quoted amountIn, output = quoted amountOut less the fee", () => {
  it("accepts the floor fee (24,975,000 for 25,000,000 at 10 bps) and books 25,000 in the output mint", () => {
    expect(checkFeeShape({ ...quoted, inputAmount: 1_000_000n, outputAmount: 24_975_000n })).toEqual({
      ok: true,
      feeSide: "output",
      feeOwed: 25_000n,
    });
  });

  it("accepts the ceil fee when the operator rounds up (25,000,001 at 10 bps: 25,000 or 25,001)", () => {
    const q = { ...quoted, quotedOut: 25_000_001n };
    expect(checkFeeShape({ ...q, inputAmount: 1_000_000n, outputAmount: 24_975_001n }).ok).toBe(true);
    expect(checkFeeShape({ ...q, inputAmount: 1_000_000n, outputAmount: 24_975_000n }).ok).toBe(true);
  });

  it("refuses one unit more output than the quote less the fee (the maker would send more than quoted net)", () => {
    const r = checkFeeShape({ ...quoted, inputAmount: 1_000_000n, outputAmount: 24_975_001n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_OUTPUT_AMOUNT });
  });

  it("refuses one unit less output than the ceil fee leaves (the taker short-changed)", () => {
    const r = checkFeeShape({ ...quoted, inputAmount: 1_000_000n, outputAmount: 24_974_999n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_OUTPUT_AMOUNT });
  });

  it("refuses one unit less input than quoted, whatever the output (the maker would receive less)", () => {
    const r = checkFeeShape({ ...quoted, inputAmount: 999_999n, outputAmount: 24_975_000n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_INPUT_AMOUNT });
  });

  it("with no fee accepts exactly the quoted amounts and refuses one unit of output more", () => {
    const q = { ...quoted, feeBps: 0 };
    expect(checkFeeShape({ ...q, inputAmount: 1_000_000n, outputAmount: 25_000_000n })).toEqual({
      ok: true,
      feeSide: "output",
      feeOwed: 0n,
    });
    expect(checkFeeShape({ ...q, inputAmount: 1_000_000n, outputAmount: 25_000_001n }).ok).toBe(false);
  });
});

describe("FEE_IN_INPUT shape: output = quoted amountOut, input = a gross whose fee leaves the quoted amountIn", () => {
  // 1,001,001 at 10 bps: fee floor(1,001.001) = 1,001, leaving 1,000,000; ceil would be 1,002.
  it("accepts 1,001,001 in for 1,000,000 quoted and books 1,001 in the input mint", () => {
    expect(checkFeeShape({ ...quoted, inputAmount: 1_001_001n, outputAmount: 25_000_000n })).toEqual({
      ok: true,
      feeSide: "input",
      feeOwed: 1_001n,
    });
  });

  it("accepts 1,001,002 (the ceil fee on the gross) and nothing above it", () => {
    expect(checkFeeShape({ ...quoted, inputAmount: 1_001_002n, outputAmount: 25_000_000n }).ok).toBe(true);
    const r = checkFeeShape({ ...quoted, inputAmount: 1_001_003n, outputAmount: 25_000_000n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_INPUT_AMOUNT });
  });

  it("refuses 1,001,000 in (one unit short of the fee on top of the quoted amountIn)", () => {
    const r = checkFeeShape({ ...quoted, inputAmount: 1_001_000n, outputAmount: 25_000_000n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_INPUT_AMOUNT });
  });

  it("refuses one unit more output than quoted (the maker would send more than its amountOut)", () => {
    const r = checkFeeShape({ ...quoted, inputAmount: 1_001_001n, outputAmount: 25_000_001n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_OUTPUT_AMOUNT });
  });

  it("refuses the fee taken on both sides (gross input and a fee-net output)", () => {
    const r = checkFeeShape({ ...quoted, inputAmount: 1_001_001n, outputAmount: 24_975_000n });
    expect(r).toMatchObject({ ok: false, code: FillRejectCode.INVALID_OUTPUT_AMOUNT });
  });
});

describe("validateFill books the fee in the mint the fill carried it in", () => {
  const NOW_MS = 1_760_000_000_000;
  function validated(feeSide: "input" | "output") {
    const maker = Keypair.generate().publicKey;
    const taker = Keypair.generate().publicKey;
    const tokens = tokenMap();
    // SOL for exactly 1 USDC out, 10 bps: SOL comes first in the fee-mint priority, so the operator
    // counts the fee in SOL, the input.
    const quote = storedQuote({
      maker,
      taker,
      tokenIn: MINT.SOL,
      tokenOut: MINT.USDC,
      amountIn: 5_544_794n,
      amountOut: 1_000_000n,
      quoteType: "exactOut",
      feeBps: 10,
      createdAtMs: NOW_MS - 5_000,
    });
    const s = scenarioFromQuote(quote, {
      maker,
      taker,
      tokens,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
      nowUnix: BigInt(NOW_MS / 1000),
    });
    const tx = buildFillTransaction({ ...s.params, ...fillAmountsFromQuote(quote, feeSide) });
    return validateFill({
      tx,
      quote,
      maker,
      tokens,
      maxFeeLamports: 2_000_000n,
    });
  }

  it("fee in SOL (input): the taker receives exactly 1 USDC, pays 5,550,344 lamports; 5,550 owed in SOL", () => {
    // 5,550,344 - floor(5,550,344 x 10 / 10,000) = 5,550,344 - 5,550 = 5,544,794, the quoted amountIn;
    // 5,550,343 would leave 5,544,793. So the gross is 5,550,344 and the fee 5,550.
    const r = validated("input");
    if (!r.ok) throw new Error(`${r.code}: ${r.context}`);
    expect(r.fill.outputAmount).toBe(1_000_000n);
    expect(r.fill.inputAmount).toBe(5_550_344n);
    expect(r.fill.feeOwed).toBe(5_550n);
    expect(r.fill.feeMint.toBase58()).toBe(MINT.SOL);
  });

  it("fee in USDC (output): 999,000 reaches the taker, 1,000 owed in USDC", () => {
    const r = validated("output");
    if (!r.ok) throw new Error(`${r.code}: ${r.context}`);
    expect(r.fill.outputAmount).toBe(999_000n);
    expect(r.fill.inputAmount).toBe(5_544_794n);
    expect(r.fill.feeOwed).toBe(1_000n);
    expect(r.fill.feeMint.toBase58()).toBe(MINT.USDC);
  });
});

import { createHash } from "node:crypto";
import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import { buildFillTransaction, fillTransactionInstructions } from "../../sandbox/fill/builder.ts";
import {
  FillRejectCode,
  type FillValidation,
  type ValidatedFill,
  type ValidateFillInput,
  validateFill,
} from "../../src/fill/validate.ts";
import { deserializeFillTransaction } from "../../src/program/decode.ts";
import {
  ORDER_ENGINE_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "../../src/program/layout.ts";
import { expiryRefusal } from "../../src/swap/expiry.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";
import { acceptanceFixtureTx } from "./fixture.ts";
import { lighthouseIx, scenarioFromQuote, tokenMap, txFrom } from "./tamper.ts";

const NOW_MS = 1_760_000_000_000;
const NOW = BigInt(NOW_MS / 1000);
const blockhash = () => Keypair.generate().publicKey.toBase58();

interface SetupOptions {
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
  amountOut: bigint;
  quoteType: "exactIn" | "exactOut";
  feeBps: number;
  withTaker?: boolean;
  receiver?: PublicKey;
  nativeSolIn?: boolean;
  nativeSolOut?: boolean;
  lighthouseInstructions?: TransactionInstruction[];
  tokens?: ReturnType<typeof tokenMap>;
}

/** The quote a test does not care about: a small exactIn JUP to USDC, 1,000 in, 2,000 out, no fee. */
const SMALL_QUOTE = {
  tokenIn: MINT.JUP,
  tokenOut: MINT.USDC,
  amountIn: 1_000n,
  amountOut: 2_000n,
  quoteType: "exactIn",
  feeBps: 0,
} as const;

/** The validated fill; a rejection fails the test with its code and detail. */
function accepted(r: FillValidation): ValidatedFill {
  if (!r.ok) throw new Error(`${r.code}: ${r.context}`);
  return r.fill;
}

function setup(over: Partial<SetupOptions> = {}) {
  const opts: SetupOptions = { ...SMALL_QUOTE, ...over };
  const maker = Keypair.generate().publicKey;
  const taker = Keypair.generate().publicKey;
  const tokens = opts.tokens ?? tokenMap();
  const quote = storedQuote({
    maker,
    taker: opts.withTaker === false ? undefined : taker,
    receiver: opts.receiver,
    tokenIn: opts.tokenIn,
    tokenOut: opts.tokenOut,
    amountIn: opts.amountIn,
    amountOut: opts.amountOut,
    quoteType: opts.quoteType,
    feeBps: opts.feeBps,
    createdAtMs: NOW_MS - 5_000,
  });
  const s = scenarioFromQuote(quote, {
    maker,
    taker,
    tokens,
    recentBlockhash: blockhash(),
    nowUnix: NOW,
    nativeSolIn: opts.nativeSolIn,
    nativeSolOut: opts.nativeSolOut,
    lighthouseInstructions: opts.lighthouseInstructions,
  });
  const input = (tx = buildFillTransaction(s.params)): ValidateFillInput => ({
    tx,
    quote,
    maker,
    tokens,
    maxFeeLamports: 2_000_000n,
  });
  return { s, maker, taker, quote, tokens, input };
}

describe("validateFill accepts the operator's honest fills", () => {
  it("accepts an exactIn SPL-to-SPL fill with a taker-paid output ATA and reports what the swap needs", () => {
    const { s, maker, taker, input } = setup({
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amountIn: 1_000_000_000n,
      amountOut: 25_000_000n,
      quoteType: "exactIn",
      feeBps: 10,
    });
    const tx = buildFillTransaction(s.params);
    const f = accepted(validateFill(input(tx)));
    expect(f.taker.equals(taker)).toBe(true);
    expect(f.inputMint.toBase58()).toBe(MINT.JUP);
    expect(f.outputMint.toBase58()).toBe(MINT.USDC);
    expect(f.inputAmount).toBe(1_000_000_000n);
    expect(f.outputAmount).toBe(24_975_000n);
    expect(f.feeOwed).toBe(25_000n);
    expect(f.feeBps).toBe(10);
    expect(f.exactOut).toBe(false);
    expect(f.expireAt).toBe(BigInt(Math.floor(s.quote.expiresAtMs / 1000)));
    // ceil(38,941 x 53,770 / 1e6) = ceil(2,093.857...) = 2,094, plus 2 x 5,000.
    expect(f.makerPaysLamports).toBe(12_094n);
    expect(f.numSignatures).toBe(2);
    expect(f.computeUnitLimit).toBe(38_941);
    expect(f.computeUnitPrice).toBe(53_770n);
    const takerUsdc = getAssociatedTokenAddressSync(new PublicKey(MINT.USDC), taker, true);
    expect(f.ataCreations).toEqual([
      {
        payer: taker,
        ata: takerUsdc,
        owner: taker,
        mint: new PublicKey(MINT.USDC),
        tokenProgram: TOKEN_PROGRAM_ID,
      },
    ]);
    expect(
      f.takerInputTokenAccount.equals(getAssociatedTokenAddressSync(new PublicKey(MINT.JUP), taker, true)),
    ).toBe(true);
    expect(
      f.makerInputTokenAccount.equals(getAssociatedTokenAddressSync(new PublicKey(MINT.JUP), maker, true)),
    ).toBe(true);
    expect(f.nativeSolIn).toBe(false);
    expect(f.nativeSolOut).toBe(false);
    expect(f.messageHash).toBe(createHash("sha256").update(tx.message.serialize()).digest("hex"));
  });

  it("accepts an exactOut fill carrying the exact-out flag", () => {
    const { input } = setup({
      tokenIn: MINT.USDC,
      tokenOut: MINT.JUP,
      amountIn: 5_000_123n,
      amountOut: 10_000_000n,
      quoteType: "exactOut",
      feeBps: 25,
    });
    const fill = accepted(validateFill(input()));
    expect(fill.exactOut).toBe(true);
    expect(fill.outputAmount).toBe(9_975_000n);
  });

  it("accepts a fill whose taker pays native SOL (program id as the taker's input account)", () => {
    const { input } = setup({
      tokenIn: MINT.SOL,
      tokenOut: MINT.USDC,
      amountIn: 1_000_000_000n,
      amountOut: 180_000_000n,
      quoteType: "exactIn",
      feeBps: 5,
      nativeSolIn: true,
    });
    const fill = accepted(validateFill(input()));
    expect(fill.nativeSolIn).toBe(true);
    expect(fill.takerInputTokenAccount.equals(ORDER_ENGINE_PROGRAM_ID)).toBe(true);
  });

  it("accepts a fill whose taker receives native SOL through the temporary wSOL PDA", () => {
    const { input } = setup({
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amountIn: 180_000_000n,
      amountOut: 999_000_000n,
      quoteType: "exactIn",
      feeBps: 5,
      nativeSolOut: true,
    });
    const fill = accepted(validateFill(input()));
    expect(fill.nativeSolOut).toBe(true);
    expect(fill.ataCreations).toEqual([]);
    expect(fill.outputAmount).toBe(999_000_000n - 499_500n);
  });

  it("accepts trailing Lighthouse account and token-account assertions (tags 5, 6, 9, 10)", () => {
    const probe = PublicKey.unique();
    const { input } = setup({
      lighthouseInstructions: [
        lighthouseIx(5, [probe]),
        lighthouseIx(6),
        lighthouseIx(9, [probe]),
        lighthouseIx(10),
      ],
    });
    const fill = accepted(validateFill(input()));
    expect(fill.computeUnitLimit).toBeGreaterThan(0);
  });

  it("accepts the operator's own Lighthouse example: an AssertAccountInfo on the maker's wallet after the fill", () => {
    // tests/suites/integration/swap.ts in the operator's toolkit asserts the maker's lamports.
    const { s, maker, quote, tokens } = setup();
    const tx = buildFillTransaction({ ...s.params, lighthouseInstructions: [lighthouseIx(5, [maker])] });
    const fill = accepted(validateFill({ tx, quote, maker, tokens, maxFeeLamports: 2_000_000n }));
    expect(fill.outputAmount).toBe(s.params.outputAmount);
  });

  it("accepts the fee rounded up as well as down, and records what was kept back", () => {
    const { s, input } = setup({ amountOut: 12_345n, feeBps: 10 });
    // fee = 12.345: floor 12 (operator), ceil 13.
    expect(s.params.outputAmount).toBe(12_333n);
    const ceil = accepted(validateFill(input(buildFillTransaction({ ...s.params, outputAmount: 12_332n }))));
    expect(ceil.feeOwed).toBe(13n);
    const floor = validateFill(input());
    expect(floor.ok && floor.fill.feeOwed).toBe(12n);
  });

  it("accepts any taker for an indicative quote (no taker in the request)", () => {
    const { input } = setup({ withTaker: false });
    expect(validateFill(input()).ok).toBe(true);
  });

  it("accepts a taker-paid ATA creation for the quote's receiver", () => {
    const receiver = PublicKey.unique();
    const { s, input } = setup({ receiver });
    const usdc = new PublicKey(MINT.USDC);
    const ixs = fillTransactionInstructions(s.params);
    ixs.splice(
      2,
      0,
      createAssociatedTokenAccountIdempotentInstruction(
        s.taker,
        getAssociatedTokenAddressSync(usdc, receiver, true),
        receiver,
        usdc,
      ),
    );
    const fill = accepted(validateFill(input(txFrom(s.maker, ixs, s.params.recentBlockhash))));
    expect(fill.ataCreations.map((a) => a.owner.toBase58())).toEqual([
      receiver.toBase58(),
      s.taker.toBase58(),
    ]);
  });

  it("accepts a Token-2022 mint through its configured program", () => {
    const mint2022 = PublicKey.unique().toBase58();
    const tokens = tokenMap([
      { mint: mint2022, symbol: "T22", decimals: 6, tokenProgram: TOKEN_2022_PROGRAM },
    ]);
    const { s, input } = setup({ tokenIn: mint2022, tokens });
    expect(s.params.inputTokenProgram.equals(TOKEN_2022_PROGRAM_ID)).toBe(true);
    accepted(validateFill(input()));
  });

  it("accepts a third signer and charges its signature to the maker's fee", () => {
    const { s, input } = setup();
    const cosigner = PublicKey.unique();
    const lh = new TransactionInstruction({
      programId: new PublicKey("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95"),
      keys: [{ pubkey: cosigner, isSigner: true, isWritable: false }],
      data: Buffer.from([5]),
    });
    const fill = accepted(
      validateFill(
        input(txFrom(s.maker, [...fillTransactionInstructions(s.params), lh], s.params.recentBlockhash)),
      ),
    );
    expect(fill.numSignatures).toBe(3);
    expect(fill.makerPaysLamports).toBe(2_094n + 15_000n);
  });

  it("survives the wire: serialized, parsed back and validated", () => {
    const { input } = setup();
    const parsed = deserializeFillTransaction(Buffer.from(input().tx.serialize()).toString("base64"));
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(validateFill(input(parsed.tx)).ok).toBe(true);
  });
});

describe("validateFill boundaries", () => {
  it("accepts expire_at equal to now and equal to the quote's expiry rounded up", () => {
    const { s, input } = setup();
    expect(validateFill(input(buildFillTransaction({ ...s.params, expireAt: NOW }))).ok).toBe(true);
    // Whether `now` has passed is judged after the claim, against chain time (src/swap/expiry.ts).
    expect(
      expiryRefusal({
        quoteExpiresAtMs: s.quote.expiresAtMs,
        expireAt: NOW,
        chainTime: NOW,
        safetySeconds: 0n,
      }),
    ).toBeUndefined();
    const ceilExpiry = BigInt(Math.ceil(s.quote.expiresAtMs / 1000));
    expect(validateFill(input(buildFillTransaction({ ...s.params, expireAt: ceilExpiry }))).ok).toBe(true);
    const late = validateFill(input(buildFillTransaction({ ...s.params, expireAt: ceilExpiry + 1n })));
    expect(!late.ok && late.code).toBe(FillRejectCode.INVALID_EXPIRY);
  });

  it("lets expiryGraceSeconds absorb the operator's later clock, but never signs an expired quote", () => {
    const { s, input } = setup();
    const ceilExpiry = BigInt(Math.ceil(s.quote.expiresAtMs / 1000));
    const tx = buildFillTransaction({ ...s.params, expireAt: ceilExpiry + 2n });
    const fill = accepted(validateFill({ ...input(tx), expiryGraceSeconds: 2n }));
    // The chain clock one second past the quote's expiry: expire_at is still ahead, the quote is not.
    const stale = expiryRefusal({
      quoteExpiresAtMs: s.quote.expiresAtMs,
      expireAt: fill.expireAt,
      chainTime: ceilExpiry + 1n,
      safetySeconds: 0n,
    });
    expect(stale).toBe(`the quote expired at ${ceilExpiry}; chain time is ${ceilExpiry + 1n}`);
  });

  it("computeUnitLimitWithinCeiling: accepts a compute-unit limit of exactly 1,400,000, the runtime's ceiling", () => {
    const { s, input } = setup();
    const fill = accepted(
      validateFill(input(buildFillTransaction({ ...s.params, computeUnitLimit: 1_400_000 }))),
    );
    expect(fill.computeUnitLimit).toBe(1_400_000);
  });

  it("accepts a CreateIdempotent for the taker's input-mint ATA too (either of the fill's mints)", () => {
    const { s, taker, input } = setup();
    const inputAta = getAssociatedTokenAddressSync(
      s.params.inputMint,
      taker,
      true,
      s.params.inputTokenProgram,
    );
    const tx = txFrom(
      s.maker,
      [
        createAssociatedTokenAccountIdempotentInstruction(
          taker,
          inputAta,
          taker,
          s.params.inputMint,
          s.params.inputTokenProgram,
        ),
        ...fillTransactionInstructions(s.params),
      ],
      s.params.recentBlockhash,
    );
    const fill = accepted(validateFill(input(tx)));
    expect(fill.ataCreations.map((a) => a.ata.toBase58())).toContain(inputAta.toBase58());
  });

  it("names the grace in an INVALID_EXPIRY detail when one is configured", () => {
    const { s, input } = setup();
    const ceilExpiry = BigInt(Math.ceil(s.quote.expiresAtMs / 1000));
    const tx = buildFillTransaction({ ...s.params, expireAt: ceilExpiry + 3n });
    const r = validateFill({ ...input(tx), expiryGraceSeconds: 2n });
    expect(r.ok ? "accepted" : `${r.code}: ${r.context}`).toBe(
      `INVALID_EXPIRY: the fill expires at ${ceilExpiry + 3n}, after the quote's expiry ${ceilExpiry} (+2 s grace)`,
    );
  });

  it("accepts a fee exactly at the cap and refuses one lamport over it", () => {
    const { input } = setup();
    expect(validateFill({ ...input(), maxFeeLamports: 12_094n }).ok).toBe(true);
    const over = validateFill({ ...input(), maxFeeLamports: 12_093n });
    expect(!over.ok && over.code).toBe(FillRejectCode.FEE_CAP_EXCEEDED);
  });

  it("refuses an output mint we do not trade even when it matches the quote", () => {
    const { s, input } = setup();
    const tokens = new Map(s.tokens);
    tokens.delete(MINT.USDC);
    const r = validateFill({ ...input(), tokens });
    expect(!r.ok && r.code).toBe(FillRejectCode.INVALID_MINT);
  });
});

describe("validateFill on the acceptance fixture", () => {
  it("accepts the operator's own transaction for the quote it was built from, as its maker", () => {
    const tx = acceptanceFixtureTx();
    const keys = tx.message.staticAccountKeys;
    const quote = storedQuote({
      maker: keys[0] as PublicKey,
      taker: keys[1] as PublicKey,
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amountIn: 1_000_000_000n,
      amountOut: 25_000_000n,
      quoteType: "exactIn",
      feeBps: 10,
      createdAtMs: (1_739_139_690 - 55) * 1000,
    });
    const input: ValidateFillInput = {
      tx,
      quote,
      maker: keys[0] as PublicKey,
      tokens: tokenMap(),
      maxFeeLamports: 2_000_000n,
    };
    const fill = accepted(validateFill(input));
    expect(fill.outputAmount).toBe(24_975_000n);
    expect(fill.feeOwed).toBe(25_000n);
    // Not our maker: the same bytes are refused for any other wallet.
    const other = validateFill({ ...input, maker: PublicKey.unique() });
    expect(!other.ok && other.code).toBe(FillRejectCode.INVALID_FEE_PAYER);
    // Expired today: after the claim, chain time past the quote's expiry refuses it.
    const at = (chainTime: bigint) =>
      expiryRefusal({
        quoteExpiresAtMs: quote.expiresAtMs,
        expireAt: fill.expireAt,
        chainTime,
        safetySeconds: 1n,
      });
    expect(at(1_739_139_650n)).toBeUndefined();
    expect(at(1_739_139_691n)).toBe("the quote expired at 1739139690; chain time is 1739139691");
  });
});

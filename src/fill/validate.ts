/**
 * The maker's check of a fill transaction before it co-signs (CONTRACT.md, "The fill transaction"),
 * against the quote we answered and our configuration. Pure: no clock, no network; the caller passes
 * the time and verifies the taker's signature and balances separately.
 *
 * Decisions beyond the contract's letter, each because the maker pays the fee of any transaction it
 * signs, even one that fails on-chain:
 * - ComputeBudget and ATA creations must come before the fill, Lighthouse only after it.
 * - The compute limit must be 1..1,400,000 and ComputeBudget instructions carry no accounts.
 * - The compute-unit price may not exceed the prioritizationFeeToUse we answered (lower is fine).
 * - CreateIdempotent must be well formed: six accounts, the ATA derived from (owner, mint, token
 *   program), the mint one of the fill's mints with its configured token program, the payer a
 *   writable signer other than the maker.
 * - The maker's key may appear in no instruction except as the fill's maker, and as the (read-only)
 *   target of a Lighthouse assertion.
 * - Every fill token account (and the temporary wSOL PDA) must be writable; the taker accounts must
 *   be the taker's ATAs, or the order-engine id standing for a native-SOL leg on the wSOL mint.
 * - The flags byte's bit 0 must match the quote type; its other bits (like the trailing bytes
 *   generally) are ignored by the program, so they are ignored here too.
 * - `expire_at` may not exceed the quote's expiry (rounded up to the second) plus an optional grace
 *   for the operator's clock, and neither it nor the quote may be in the past.
 * - The amounts follow one of the operator's two fee shapes (fee-shape.ts: the fee in the output or
 *   in the input mint), so the maker never sends more than the quoted amountOut nor receives less
 *   than the quoted amountIn; the fee owed is what the fill kept back, booked in the fee's mint.
 */
import { createHash } from "node:crypto";
import { PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { TokenConfig } from "../../config/schema.ts";
import type { StoredQuote } from "../quote-store/interface.ts";
import { associatedTokenAddress } from "./ata.ts";
import { FillRejectCode } from "./codes.ts";
import {
  type AccountRef,
  type AtaCreateAccounts,
  decodeFillTransaction,
  describeAccount,
  type FillIx,
} from "./decode.ts";
import { checkFeeShape } from "./fee-shape.ts";
import {
  type FillTerms,
  LAMPORTS_PER_SIGNATURE,
  LIGHTHOUSE_ALLOWED_DISCRIMINATORS,
  NATIVE_MINT,
  ORDER_ENGINE_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  temporaryWsolAccount,
} from "./layout.ts";

export { FillRejectCode };

/** The runtime's largest compute-unit limit. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

export interface ValidateFillInput {
  tx: VersionedTransaction;
  quote: StoredQuote;
  /** Our maker wallet. */
  maker: PublicKey;
  /** The current time, unix seconds. */
  nowUnix: bigint;
  /** Configured tokens keyed by mint (base58). */
  tokens: ReadonlyMap<string, TokenConfig>;
  /** The most lamports the maker pays for one fill (limits.maxFeeLamports). */
  maxFeeLamports: bigint;
  /**
   * Seconds `expire_at` may exceed the quote's expiry, for the operator creating its quote a little
   * after we answered. Default 0.
   */
  expiryGraceSeconds?: bigint;
  /** sha256 (hex) of the message bytes, when the caller already has it; otherwise computed here. */
  messageHash?: string;
}

export interface AtaCreation {
  payer: PublicKey;
  ata: PublicKey;
  owner: PublicKey;
  mint: PublicKey;
  tokenProgram: PublicKey;
}

/** Everything the swap path needs from an accepted fill (`outputAmount` is net of the operator's fee). */
export interface ValidatedFill extends FillTerms {
  /**
   * What the maker owes the operator for this fill, in `feeMint` units: what the fill kept back on
   * the fee's side (quoted amountOut - output_amount, or input_amount - quoted amountIn).
   */
  feeOwed: bigint;
  /** The mint the fee was carried in: the output mint, or the input mint (fee-shape.ts). */
  feeMint: PublicKey;
  computeUnitLimit: number;
  computeUnitPrice: bigint;
  numSignatures: number;
  /** ceil(limit x price / 1e6) + 5,000 x signatures: the most this transaction costs the maker. */
  makerPaysLamports: bigint;
  ataCreations: AtaCreation[];
  /** The taker's input token account, or the order-engine id for a native-SOL input leg. */
  takerInputTokenAccount: PublicKey;
  /** The taker's output token account, or the order-engine id for a native-SOL output leg. */
  takerOutputTokenAccount: PublicKey;
  makerInputTokenAccount: PublicKey;
  makerOutputTokenAccount: PublicKey;
  nativeSolIn: boolean;
  nativeSolOut: boolean;
  /** sha256 (hex) of the message bytes: what the quote's claim records. */
  messageHash: string;
}

export type FillValidation =
  | { ok: true; fill: ValidatedFill }
  | { ok: false; code: FillRejectCode; detail: string };

const reject = (code: FillRejectCode, detail: string): FillValidation => ({ ok: false, code, detail });

/** sha256 (hex) of serialized message bytes: the id a fill's claim records. */
export function messageBytesHash(messageBytes: Uint8Array): string {
  return createHash("sha256").update(messageBytes).digest("hex");
}

/** sha256 (hex) of a transaction's message bytes. */
export function fillMessageHash(tx: VersionedTransaction): string {
  return messageBytesHash(tx.message.serialize());
}

/** ceil(limit x price / 1e6) + 5,000 x signatures. */
export function makerFeeLamports(
  computeUnitLimit: number,
  microLamportsPerCu: bigint,
  signatures: number,
): bigint {
  const micro = BigInt(computeUnitLimit) * microLamportsPerCu;
  return (micro + 999_999n) / 1_000_000n + LAMPORTS_PER_SIGNATURE * BigInt(signatures);
}

/** Checks a fill transaction against every rule of the contract; see the module comment. */
export function validateFill(input: ValidateFillInput): FillValidation {
  const { tx, quote, maker, tokens } = input;
  const decodedResult = decodeFillTransaction(tx);
  if (!decodedResult.ok) return reject(FillRejectCode.MALFORMED_TRANSACTION, decodedResult.problem);
  const d = decodedResult.decoded;

  // --- Message shape and the two fixed keys -------------------------------------------------------
  if (d.version !== 0) {
    return reject(FillRejectCode.INVALID_MESSAGE_VERSION, `the message is ${d.version}, only v0 is accepted`);
  }
  if (d.addressTableLookups > 0) {
    return reject(
      FillRejectCode.LOOKUP_TABLES_NOT_SUPPORTED,
      `the message uses ${d.addressTableLookups} address lookup table(s); none are accepted`,
    );
  }
  if (d.header.numRequiredSignatures < 2) {
    return reject(
      FillRejectCode.INVALID_SIGNER_COUNT,
      `the message requires ${d.header.numRequiredSignatures} signature(s); maker and taker make at least 2`,
    );
  }
  const feePayer = d.staticKeys[0] as PublicKey;
  if (!feePayer.equals(maker)) {
    return reject(
      FillRejectCode.INVALID_FEE_PAYER,
      `account key 0 (fee payer, signature slot 0) is ${feePayer.toBase58()}, not the maker ${maker.toBase58()}`,
    );
  }
  // The quote's price, size and inventory check were for the wallet it named; another wallet sharing
  // the quote store (its own key, a rotated key) must not sign it.
  if (quote.response.maker !== maker.toBase58()) {
    return reject(
      FillRejectCode.INVALID_QUOTE_MAKER,
      `the quote was answered for maker ${quote.response.maker}, not for ${maker.toBase58()}`,
    );
  }
  const taker = d.staticKeys[1] as PublicKey;
  if (!tx.message.isAccountWritable(1)) {
    return reject(FillRejectCode.INVALID_TAKER, "account key 1 (the taker) is not a writable signer");
  }
  const quotedTaker = quote.taker ?? quote.request.taker;
  if (quotedTaker !== undefined && taker.toBase58() !== quotedTaker) {
    return reject(
      FillRejectCode.INVALID_TAKER,
      `account key 1 (the taker) is ${taker.toBase58()}, but the quote was for taker ${quotedTaker}`,
    );
  }

  const inputMint = new PublicKey(quote.request.tokenIn);
  const outputMint = new PublicKey(quote.request.tokenOut);
  const receiver = quote.request.receiver;
  const isMaker = (a: AccountRef) => a.index === 0;

  // --- Instructions: which, in what order ----------------------------------------------------------
  let fill: FillIx | undefined;
  let lighthouseSeen = false;
  let limit: number | undefined;
  let price: bigint | undefined;
  const ataCreations: AtaCreation[] = [];
  for (const ix of d.instructions) {
    const where = `instruction ${ix.position}`;
    if (ix.kind === "other") {
      return reject(
        FillRejectCode.INVALID_PROGRAM,
        `${where} calls program ${ix.programId.toBase58()}, which a fill may not contain`,
      );
    }
    if (ix.kind === "orderEngineOther") {
      return reject(
        FillRejectCode.INVALID_PROGRAM,
        `${where} is an order-engine instruction other than fill`,
      );
    }
    if (ix.kind === "lighthouse") {
      if (!fill) {
        return reject(
          FillRejectCode.INVALID_INSTRUCTION_ORDER,
          `${where} is a Lighthouse assertion before the fill`,
        );
      }
      if (ix.discriminator === undefined || !LIGHTHOUSE_ALLOWED_DISCRIMINATORS.has(ix.discriminator)) {
        return reject(
          FillRejectCode.INVALID_LIGHTHOUSE_INSTRUCTION,
          `${where} is Lighthouse instruction ${ix.discriminator ?? "(empty)"}; only assertions 5, 6, 9 and 10 are allowed`,
        );
      }
      // An assertion may name the maker's wallet: assertions 5, 6, 9 and 10 only read the account
      // (no write, no CPI), and the operator's own client asserts on the maker's lamports.
      lighthouseSeen = true;
      continue;
    }
    if (lighthouseSeen) {
      return reject(
        FillRejectCode.INVALID_INSTRUCTION_ORDER,
        `${where} follows a Lighthouse assertion; only Lighthouse assertions may follow them`,
      );
    }
    if (ix.kind === "fill") {
      if (fill)
        return reject(FillRejectCode.MULTIPLE_FILLS, `${where} is a second fill; exactly one is allowed`);
      fill = ix;
      continue;
    }
    if (fill) {
      return reject(
        FillRejectCode.INVALID_INSTRUCTION_ORDER,
        `${where} (${ix.kind}) follows the fill; only Lighthouse assertions may`,
      );
    }
    switch (ix.kind) {
      case "computeBudgetOther":
        return reject(
          FillRejectCode.INVALID_COMPUTE_BUDGET,
          `${where} is ComputeBudget instruction ${ix.tag ?? "(empty)"} with ${ix.data.length} data bytes; only SetComputeUnitLimit and SetComputeUnitPrice are allowed`,
        );
      case "computeUnitLimit":
      case "computeUnitPrice": {
        if (ix.accounts.length > 0) {
          return reject(FillRejectCode.INVALID_COMPUTE_BUDGET, `${where} (ComputeBudget) names accounts`);
        }
        if (ix.kind === "computeUnitLimit") {
          if (limit !== undefined) {
            return reject(
              FillRejectCode.INVALID_COMPUTE_BUDGET,
              `${where} sets the compute-unit limit a second time`,
            );
          }
          limit = ix.units;
        } else {
          if (price !== undefined) {
            return reject(
              FillRejectCode.INVALID_COMPUTE_BUDGET,
              `${where} sets the compute-unit price a second time`,
            );
          }
          price = ix.microLamports;
        }
        break;
      }
      case "ataOther":
        return reject(
          FillRejectCode.INVALID_ATA_INSTRUCTION,
          `${where} is an Associated Token instruction other than CreateIdempotent (data must be exactly [1])`,
        );
      case "ataCreateIdempotent": {
        const checked = checkAtaCreation(ix.named, where, { taker, receiver, inputMint, outputMint, tokens });
        if (!checked.ok) return checked;
        ataCreations.push(checked.creation);
        break;
      }
    }
  }

  if (!fill)
    return reject(FillRejectCode.FILL_NOT_FOUND, "the transaction has no order-engine fill instruction");
  if (limit === undefined) {
    return reject(FillRejectCode.INVALID_COMPUTE_BUDGET, "the transaction does not set a compute-unit limit");
  }
  if (price === undefined) {
    return reject(FillRejectCode.INVALID_COMPUTE_BUDGET, "the transaction does not set a compute-unit price");
  }
  if (limit === 0 || limit > MAX_COMPUTE_UNIT_LIMIT) {
    return reject(
      FillRejectCode.INVALID_COMPUTE_BUDGET,
      `the compute-unit limit ${limit} is outside 1..${MAX_COMPUTE_UNIT_LIMIT}`,
    );
  }
  const makerPaysLamports = makerFeeLamports(limit, price, d.header.numRequiredSignatures);
  if (makerPaysLamports > input.maxFeeLamports) {
    return reject(
      FillRejectCode.FEE_CAP_EXCEEDED,
      `the maker would pay ${makerPaysLamports} lamports (limit ${limit} x price ${price} micro-lamports + ${d.header.numRequiredSignatures} signatures), more than the cap of ${input.maxFeeLamports}`,
    );
  }
  // The quote told the operator the price the maker pays (prioritizationFeeToUse, already capped by
  // limits.maxComputeUnitPriceMicroLamports); a higher one spends the maker's SOL beyond its answer.
  const quotedPrice = quote.response.prioritizationFeeToUse;
  if (quotedPrice !== undefined && price > BigInt(quotedPrice)) {
    return reject(
      FillRejectCode.COMPUTE_UNIT_PRICE_EXCEEDED,
      `the compute-unit price is ${price} micro-lamports, above the ${quotedPrice} the quote answered as prioritizationFeeToUse`,
    );
  }

  // --- The fill: data, accounts, amounts, expiry ----------------------------------------------------
  if (!fill.args)
    return reject(FillRejectCode.MALFORMED_FILL_DATA, fill.dataProblem ?? "the fill data is malformed");
  const args = fill.args;
  const n = fill.named;
  if (!n) {
    return reject(
      FillRejectCode.INVALID_FILL_ACCOUNTS,
      `the fill names ${fill.accounts.length} accounts; it takes 11, or 12 for a native-SOL output`,
    );
  }
  const key = (a: AccountRef) => a.key as PublicKey; // no lookup tables, so every key is static

  if (n.taker.index !== 1) {
    return reject(
      FillRejectCode.INVALID_TAKER,
      `the fill's taker is ${describeAccount(n.taker)}, not the transaction's taker (key 1) ${taker.toBase58()}`,
    );
  }
  if (!isMaker(n.maker)) {
    return reject(
      FillRejectCode.INVALID_FILL_ACCOUNTS,
      `the fill's maker is ${describeAccount(n.maker)}, not the maker ${maker.toBase58()}`,
    );
  }
  for (const [name, a] of Object.entries(n) as [string, AccountRef][]) {
    if (a !== n.maker && isMaker(a)) {
      return reject(
        FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
        `the fill passes the maker's wallet as its ${name}`,
      );
    }
  }
  if (!key(n.inputMint).equals(inputMint)) {
    return reject(
      FillRejectCode.INVALID_MINT,
      `the fill's input mint is ${describeAccount(n.inputMint)}, but the quote's tokenIn is ${quote.request.tokenIn}`,
    );
  }
  if (!key(n.outputMint).equals(outputMint)) {
    return reject(
      FillRejectCode.INVALID_MINT,
      `the fill's output mint is ${describeAccount(n.outputMint)}, but the quote's tokenOut is ${quote.request.tokenOut}`,
    );
  }
  const inputToken = tokens.get(quote.request.tokenIn);
  const outputToken = tokens.get(quote.request.tokenOut);
  if (!inputToken)
    return reject(FillRejectCode.INVALID_MINT, `the input mint ${quote.request.tokenIn} is not traded`);
  if (!outputToken)
    return reject(FillRejectCode.INVALID_MINT, `the output mint ${quote.request.tokenOut} is not traded`);
  const inputTokenProgram = new PublicKey(inputToken.tokenProgram);
  const outputTokenProgram = new PublicKey(outputToken.tokenProgram);
  if (!key(n.inputTokenProgram).equals(inputTokenProgram)) {
    return reject(
      FillRejectCode.INVALID_TOKEN_PROGRAM,
      `the input token program is ${describeAccount(n.inputTokenProgram)}, but ${inputToken.symbol} uses ${inputToken.tokenProgram}`,
    );
  }
  if (!key(n.outputTokenProgram).equals(outputTokenProgram)) {
    return reject(
      FillRejectCode.INVALID_TOKEN_PROGRAM,
      `the output token program is ${describeAccount(n.outputTokenProgram)}, but ${outputToken.symbol} uses ${outputToken.tokenProgram}`,
    );
  }
  if (!key(n.systemProgram).equals(SYSTEM_PROGRAM_ID)) {
    return reject(
      FillRejectCode.INVALID_FILL_ACCOUNTS,
      `the fill's system program is ${describeAccount(n.systemProgram)}, not ${SYSTEM_PROGRAM_ID.toBase58()}`,
    );
  }

  const makerIn = associatedTokenAddress(inputMint, maker, inputTokenProgram);
  const makerOut = associatedTokenAddress(outputMint, maker, outputTokenProgram);
  if (!key(n.makerInputTokenAccount).equals(makerIn)) {
    return reject(
      FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
      `the maker input token account is ${describeAccount(n.makerInputTokenAccount)}, not the maker's ${inputToken.symbol} ATA ${makerIn.toBase58()}`,
    );
  }
  if (!key(n.makerOutputTokenAccount).equals(makerOut)) {
    return reject(
      FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
      `the maker output token account is ${describeAccount(n.makerOutputTokenAccount)}, not the maker's ${outputToken.symbol} ATA ${makerOut.toBase58()}`,
    );
  }

  const takerIn = key(n.takerInputTokenAccount);
  const takerOut = key(n.takerOutputTokenAccount);
  const nativeSolIn = takerIn.equals(ORDER_ENGINE_PROGRAM_ID) && inputMint.equals(NATIVE_MINT);
  const nativeSolOut = takerOut.equals(ORDER_ENGINE_PROGRAM_ID) && outputMint.equals(NATIVE_MINT);
  const takerInAta = associatedTokenAddress(inputMint, taker, inputTokenProgram);
  const takerOutAta = associatedTokenAddress(outputMint, taker, outputTokenProgram);
  if (!nativeSolIn && !takerIn.equals(takerInAta)) {
    return reject(
      FillRejectCode.INVALID_TAKER_TOKEN_ACCOUNT,
      `the taker input token account is ${takerIn.toBase58()}, not the taker's ${inputToken.symbol} ATA ${takerInAta.toBase58()}${inputMint.equals(NATIVE_MINT) ? " or the native-SOL placeholder" : ""}`,
    );
  }
  if (!nativeSolOut && !takerOut.equals(takerOutAta)) {
    return reject(
      FillRejectCode.INVALID_TAKER_TOKEN_ACCOUNT,
      `the taker output token account is ${takerOut.toBase58()}, not the taker's ${outputToken.symbol} ATA ${takerOutAta.toBase58()}${outputMint.equals(NATIVE_MINT) ? " or the native-SOL placeholder" : ""}`,
    );
  }
  const pda = n.temporaryWsolTokenAccount;
  if (nativeSolOut) {
    const expected = temporaryWsolAccount(maker);
    if (!pda || !key(pda).equals(expected)) {
      return reject(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `a native-SOL output needs the temporary wSOL account ${expected.toBase58()} as the fill's 12th account, got ${pda ? describeAccount(pda) : "none"}`,
      );
    }
  } else if (pda) {
    return reject(
      FillRejectCode.INVALID_FILL_ACCOUNTS,
      `the fill has a 12th account ${describeAccount(pda)} but its output is not native SOL`,
    );
  }
  const mustWrite: [string, AccountRef, boolean][] = [
    ["taker input token account", n.takerInputTokenAccount, !nativeSolIn],
    ["maker input token account", n.makerInputTokenAccount, true],
    ["taker output token account", n.takerOutputTokenAccount, !nativeSolOut],
    ["maker output token account", n.makerOutputTokenAccount, true],
  ];
  if (pda) mustWrite.push(["temporary wSOL account", pda, true]);
  for (const [name, a, required] of mustWrite) {
    if (required && !a.writable) {
      return reject(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `the fill's ${name} is not writable, so the fill would fail`,
      );
    }
  }

  const feeBps = quote.request.feeBps;
  if (args.feeBps !== feeBps) {
    return reject(
      FillRejectCode.INVALID_FEE_BPS,
      `the fill's fee is ${args.feeBps} bps, but the quote request's feeBps is ${feeBps}`,
    );
  }
  // The maker's invariant, in one of the operator's two fee shapes (fee-shape.ts).
  const amounts = checkFeeShape({
    quotedIn: BigInt(quote.response.amountIn),
    quotedOut: BigInt(quote.response.amountOut),
    feeBps,
    inputAmount: args.inputAmount,
    outputAmount: args.outputAmount,
  });
  if (!amounts.ok) return reject(amounts.code, amounts.detail);
  const exactOut = quote.request.quoteType === "exactOut";
  if (args.exactOut !== exactOut) {
    return reject(
      FillRejectCode.INVALID_QUOTE_TYPE_FLAG,
      `the fill's exact-out flag is ${args.exactOut ? "set" : "clear"}, but the quote is ${quote.request.quoteType}`,
    );
  }
  const quoteExpiry = (BigInt(quote.expiresAtMs) + 999n) / 1000n;
  const grace = input.expiryGraceSeconds ?? 0n;
  if (args.expireAt > quoteExpiry + grace) {
    return reject(
      FillRejectCode.INVALID_EXPIRY,
      `the fill expires at ${args.expireAt}, after the quote's expiry ${quoteExpiry}${grace > 0n ? ` (+${grace} s grace)` : ""}`,
    );
  }
  if (input.nowUnix > quoteExpiry) {
    return reject(
      FillRejectCode.QUOTE_EXPIRED,
      `the quote expired at ${quoteExpiry}; it is now ${input.nowUnix}`,
    );
  }
  if (args.expireAt < input.nowUnix) {
    return reject(
      FillRejectCode.QUOTE_EXPIRED,
      `the fill expired at ${args.expireAt}; it is now ${input.nowUnix}`,
    );
  }

  return {
    ok: true,
    fill: {
      taker,
      inputMint,
      outputMint,
      inputTokenProgram,
      outputTokenProgram,
      inputAmount: args.inputAmount,
      outputAmount: args.outputAmount,
      expireAt: args.expireAt,
      feeBps,
      exactOut,
      feeOwed: amounts.feeOwed,
      feeMint: amounts.feeSide === "input" ? inputMint : outputMint,
      computeUnitLimit: limit,
      computeUnitPrice: price,
      numSignatures: d.header.numRequiredSignatures,
      makerPaysLamports,
      ataCreations,
      takerInputTokenAccount: takerIn,
      takerOutputTokenAccount: takerOut,
      makerInputTokenAccount: makerIn,
      makerOutputTokenAccount: makerOut,
      nativeSolIn,
      nativeSolOut,
      messageHash: input.messageHash ?? fillMessageHash(tx),
    },
  };
}

type AtaCheck = { ok: true; creation: AtaCreation } | { ok: false; code: FillRejectCode; detail: string };

function checkAtaCreation(
  named: AtaCreateAccounts | undefined,
  where: string,
  ctx: {
    taker: PublicKey;
    receiver: string | undefined;
    inputMint: PublicKey;
    outputMint: PublicKey;
    tokens: ReadonlyMap<string, TokenConfig>;
  },
): AtaCheck {
  const bad = (code: FillRejectCode, detail: string): AtaCheck => ({ ok: false, code, detail });
  if (!named)
    return bad(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} (CreateIdempotent) does not name six accounts`,
    );
  const { payer, ata, owner, mint, systemProgram, tokenProgram } = named;
  if (payer.index === 0) {
    return bad(
      FillRejectCode.INVALID_ATA_PAYER,
      `${where} creates an account paid by the maker; the taker pays for its ATAs`,
    );
  }
  if (!payer.signer || !payer.writable) {
    return bad(FillRejectCode.INVALID_ATA_PAYER, `${where} names a payer that is not a writable signer`);
  }
  const ownerKey = owner.key as PublicKey;
  const ownerOk =
    ownerKey.equals(ctx.taker) || (ctx.receiver !== undefined && ownerKey.toBase58() === ctx.receiver);
  if (!ownerOk) {
    return bad(
      FillRejectCode.INVALID_ATA_OWNER,
      `${where} creates an account owned by ${ownerKey.toBase58()}, who is neither the taker nor the receiver`,
    );
  }
  // The owner too: a quote's receiver is the requester's choice and may name the maker's wallet.
  if ([owner, ata, mint, systemProgram, tokenProgram].some((a) => a.index === 0)) {
    return bad(
      FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
      `${where} (CreateIdempotent) names the maker's wallet`,
    );
  }
  const mintKey = mint.key as PublicKey;
  if (!mintKey.equals(ctx.inputMint) && !mintKey.equals(ctx.outputMint)) {
    return bad(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} creates an account for ${mintKey.toBase58()}, not a mint of this fill`,
    );
  }
  const configured = ctx.tokens.get(mintKey.toBase58());
  const programKey = tokenProgram.key as PublicKey;
  const programOk = configured
    ? programKey.toBase58() === configured.tokenProgram
    : programKey.equals(TOKEN_PROGRAM_ID) || programKey.equals(TOKEN_2022_PROGRAM_ID);
  if (!programOk) {
    return bad(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} names token program ${programKey.toBase58()}, not the mint's`,
    );
  }
  if (!(systemProgram.key as PublicKey).equals(SYSTEM_PROGRAM_ID)) {
    return bad(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} names ${describeAccount(systemProgram)} as the system program`,
    );
  }
  const expected = associatedTokenAddress(mintKey, ownerKey, programKey);
  if (!(ata.key as PublicKey).equals(expected)) {
    return bad(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} creates ${describeAccount(ata)}, which is not the ATA ${expected.toBase58()} of its owner and mint`,
    );
  }
  return {
    ok: true,
    creation: {
      payer: payer.key as PublicKey,
      ata: expected,
      owner: ownerKey,
      mint: mintKey,
      tokenProgram: programKey,
    },
  };
}

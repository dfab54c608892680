/**
 * Builds the fill transaction exactly as the operator does (docs/contract.md, "The fill transaction";
 * fixtures/acceptance-fill-tx.json): SetComputeUnitPrice, SetComputeUnitLimit, optionally the
 * taker-paid CreateIdempotent of the taker's output ATA, the order-engine `fill`, then optional
 * Lighthouse assertions. Unsigned; key 0 is the maker (fee payer), key 1 the taker.
 *
 * Used by the operator simulator, the tests and the attack toolkit; the swap path never builds a
 * fill, it only validates the one it receives (src/fill/validate.ts).
 */

import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import { type PublicKey, TransactionInstruction, VersionedTransaction } from "@solana/web3.js";
import { grossForNet } from "../../src/fill/fee-shape.ts";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  CB_SET_COMPUTE_UNIT_LIMIT,
  CB_SET_COMPUTE_UNIT_PRICE,
  COMPUTE_BUDGET_PROGRAM_ID,
  encodeFillData,
  type FillArgs,
  type FillTerms,
  NATIVE_MINT,
  ORDER_ENGINE_PROGRAM_ID,
  operatorFee,
  SYSTEM_PROGRAM_ID,
  temporaryWsolAccount,
} from "../../src/program/layout.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { compileSortedMessageV0 } from "./compile.ts";

/** `outputAmount` is already net of the operator's fee. */
export interface BuildFillParams extends FillTerms {
  maker: PublicKey;
  /** Compute units (u32). */
  computeUnitLimit: number;
  /** Micro-lamports per compute unit (u64). */
  computeUnitPrice: bigint;
  recentBlockhash: string;
  /** Prepend the taker-paid CreateIdempotent of the taker's output ATA. */
  createTakerOutputAta: boolean;
  /** The taker pays native SOL (input mint must be wSOL): its input account is the program id. */
  nativeSolIn?: boolean;
  /** The taker receives native SOL (output mint must be wSOL): program id + temporary wSOL PDA. */
  nativeSolOut?: boolean;
  /** Lighthouse assertions appended after the fill. */
  lighthouseInstructions?: readonly TransactionInstruction[];
}

/** ComputeBudget `SetComputeUnitLimit` (tag 2, u32 LE). */
export function setComputeUnitLimitInstruction(units: number): TransactionInstruction {
  if (!Number.isInteger(units) || units < 0 || units > 0xffff_ffff) throw new RangeError("units out of u32");
  const data = Buffer.alloc(5);
  data.writeUInt8(CB_SET_COMPUTE_UNIT_LIMIT, 0);
  data.writeUInt32LE(units, 1);
  return new TransactionInstruction({ programId: COMPUTE_BUDGET_PROGRAM_ID, keys: [], data });
}

/** ComputeBudget `SetComputeUnitPrice` (tag 3, u64 LE micro-lamports). */
export function setComputeUnitPriceInstruction(microLamports: bigint): TransactionInstruction {
  const data = Buffer.alloc(9);
  data.writeUInt8(CB_SET_COMPUTE_UNIT_PRICE, 0);
  data.writeBigUInt64LE(microLamports, 1);
  return new TransactionInstruction({ programId: COMPUTE_BUDGET_PROGRAM_ID, keys: [], data });
}

/** The order-engine `fill` instruction with its 11 (or 12, native SOL out) accounts. */
export function fillInstruction(p: BuildFillParams): TransactionInstruction {
  if (p.nativeSolIn && !p.inputMint.equals(NATIVE_MINT))
    throw new RangeError("nativeSolIn needs the wSOL input mint");
  if (p.nativeSolOut && !p.outputMint.equals(NATIVE_MINT)) {
    throw new RangeError("nativeSolOut needs the wSOL output mint");
  }
  const ata = (mint: PublicKey, owner: PublicKey, program: PublicKey) =>
    getAssociatedTokenAddressSync(mint, owner, true, program);
  // An absent optional account is passed as the program id, readonly (Anchor's convention).
  const absent = { pubkey: ORDER_ENGINE_PROGRAM_ID, isSigner: false, isWritable: false };
  const keys = [
    { pubkey: p.taker, isSigner: true, isWritable: true },
    { pubkey: p.maker, isSigner: true, isWritable: true },
    p.nativeSolIn
      ? absent
      : { pubkey: ata(p.inputMint, p.taker, p.inputTokenProgram), isSigner: false, isWritable: true },
    { pubkey: ata(p.inputMint, p.maker, p.inputTokenProgram), isSigner: false, isWritable: true },
    p.nativeSolOut
      ? absent
      : { pubkey: ata(p.outputMint, p.taker, p.outputTokenProgram), isSigner: false, isWritable: true },
    { pubkey: ata(p.outputMint, p.maker, p.outputTokenProgram), isSigner: false, isWritable: true },
    { pubkey: p.inputMint, isSigner: false, isWritable: false },
    { pubkey: p.inputTokenProgram, isSigner: false, isWritable: false },
    { pubkey: p.outputMint, isSigner: false, isWritable: false },
    { pubkey: p.outputTokenProgram, isSigner: false, isWritable: false },
    { pubkey: SYSTEM_PROGRAM_ID, isSigner: false, isWritable: false },
  ];
  if (p.nativeSolOut) keys.push({ pubkey: temporaryWsolAccount(p.maker), isSigner: false, isWritable: true });
  const args: FillArgs = {
    inputAmount: p.inputAmount,
    outputAmount: p.outputAmount,
    expireAt: p.expireAt,
    feeBps: p.feeBps,
    exactOut: p.exactOut,
  };
  return new TransactionInstruction({ programId: ORDER_ENGINE_PROGRAM_ID, keys, data: encodeFillData(args) });
}

/** Every instruction of the fill transaction, in the operator's order. */
export function fillTransactionInstructions(p: BuildFillParams): TransactionInstruction[] {
  if (p.createTakerOutputAta && p.nativeSolOut) {
    throw new RangeError("a native-SOL output leg has no taker output ATA to create");
  }
  const ixs = [
    setComputeUnitPriceInstruction(p.computeUnitPrice),
    setComputeUnitLimitInstruction(p.computeUnitLimit),
  ];
  if (p.createTakerOutputAta) {
    ixs.push(
      createAssociatedTokenAccountIdempotentInstruction(
        p.taker,
        getAssociatedTokenAddressSync(p.outputMint, p.taker, true, p.outputTokenProgram),
        p.taker,
        p.outputMint,
        p.outputTokenProgram,
        ASSOCIATED_TOKEN_PROGRAM_ID,
      ),
    );
  }
  ixs.push(fillInstruction(p));
  ixs.push(...(p.lighthouseInstructions ?? []));
  return ixs;
}

/**
 * The unsigned fill transaction, byte-identical to the operator's for the same parameters: v0, no
 * lookup tables, static keys in the operator's order (compile.ts), two zeroed signature slots.
 */
export function buildFillTransaction(p: BuildFillParams): VersionedTransaction {
  const message = compileSortedMessageV0({
    payerKey: p.maker,
    instructions: fillTransactionInstructions(p),
    recentBlockhash: p.recentBlockhash,
  });
  return new VersionedTransaction(message);
}

/** The fill arguments the operator derives from a quote we answered. */
export interface FillAmounts {
  /** The quoted amountIn, plus the fee when the fee is in the input mint. */
  inputAmount: bigint;
  /** The quoted amountOut, less the fee when it is in the output mint (the fixture: 25,000,000 at 10 bps -> 24,975,000). */
  outputAmount: bigint;
  feeBps: number;
  exactOut: boolean;
}

/**
 * What the fill's amounts should be for a stored quote, with the fee on `feeSide` (default: the
 * output mint): the floor fee on the quoted amountOut, or the smallest gross input whose floor fee
 * leaves the quoted amountIn (src/fill/fee-shape.ts).
 */
export function fillAmountsFromQuote(
  quote: StoredQuote,
  feeSide: "input" | "output" = "output",
): FillAmounts {
  const quotedIn = BigInt(quote.response.amountIn);
  const quotedOut = BigInt(quote.response.amountOut);
  const feeBps = quote.request.feeBps;
  const exactOut = quote.request.quoteType === "exactOut";
  if (feeSide === "input") {
    const gross = grossForNet(quotedIn, feeBps);
    if (gross === undefined) throw new Error(`no gross input for ${quotedIn} at ${feeBps} bps`);
    return { inputAmount: gross, outputAmount: quotedOut, feeBps, exactOut };
  }
  return {
    inputAmount: quotedIn,
    outputAmount: quotedOut - operatorFee(quotedOut, feeBps),
    feeBps,
    exactOut,
  };
}

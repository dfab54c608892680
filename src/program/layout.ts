/**
 * The fill transaction's fixed facts (docs/contract.md, "The fill transaction"): program ids, the order
 * engine's `fill` discriminator, data layout and account order. Shared by the validator, the builder,
 * the local chain's emulation and the operator simulator, so that all four agree byte for byte.
 */
import { PublicKey } from "@solana/web3.js";
import { fitsU64 } from "../../amounts/u64.ts";

export const ORDER_ENGINE_PROGRAM_ID = new PublicKey("61DFfeTKM7trxYcPQCM78bJ794ddZprZpAwAnLiwTpYH");
export const LIGHTHOUSE_PROGRAM_ID = new PublicKey("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95");
export const COMPUTE_BUDGET_PROGRAM_ID = new PublicKey("ComputeBudget111111111111111111111111111111");
export const ASSOCIATED_TOKEN_PROGRAM_ID = new PublicKey("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
export const TOKEN_PROGRAM_ID = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
export const TOKEN_2022_PROGRAM_ID = new PublicKey("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
export const SYSTEM_PROGRAM_ID = new PublicKey("11111111111111111111111111111111");
export const NATIVE_MINT = new PublicKey("So11111111111111111111111111111111111111112");

export const FILL_DISCRIMINATOR = Uint8Array.from([168, 96, 183, 163, 92, 10, 40, 160]);
/** 8 discriminator + 3 x 8 (input_amount, output_amount, expire_at) + u16 fee bps + flags byte. */
export const FILL_DATA_LENGTH = 8 + 24 + 3;
/** Flags bit 0: the quote was exact-out. */
const FILL_FLAG_EXACT_OUT = 0x01;

/** Lighthouse instructions that only assert (account and token-account assertions); nothing else. */
export const LIGHTHOUSE_ALLOWED_DISCRIMINATORS: ReadonlySet<number> = new Set([5, 6, 9, 10]);

/** ComputeBudget instruction tags. */
export const CB_SET_COMPUTE_UNIT_LIMIT = 2;
export const CB_SET_COMPUTE_UNIT_PRICE = 3;
/** Associated Token program `CreateIdempotent`. */
export const ATA_CREATE_IDEMPOTENT = 1;

/** Base fee per signature, lamports. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

/** Positions of the `fill` instruction's accounts (docs/contract.md, "The fill transaction"). */
export const FillAccount = {
  taker: 0,
  maker: 1,
  takerInputTokenAccount: 2,
  makerInputTokenAccount: 3,
  takerOutputTokenAccount: 4,
  makerOutputTokenAccount: 5,
  inputMint: 6,
  inputTokenProgram: 7,
  outputMint: 8,
  outputTokenProgram: 9,
  systemProgram: 10,
  /** Only for native-SOL unwrapping. */
  temporaryWsolTokenAccount: 11,
} as const;
export const FILL_MIN_ACCOUNTS = 11;
export const FILL_MAX_ACCOUNTS = 12;

export interface FillArgs {
  /** Taker to maker, smallest units. */
  inputAmount: bigint;
  /** Maker to taker, smallest units. */
  outputAmount: bigint;
  /** Unix seconds; the program requires expire_at >= now. */
  expireAt: bigint;
  feeBps: number;
  exactOut: boolean;
}

/** The fill's legs: who takes, which mints move, under which token programs. */
export interface FillLegs {
  taker: PublicKey;
  inputMint: PublicKey;
  outputMint: PublicKey;
  inputTokenProgram: PublicKey;
  outputTokenProgram: PublicKey;
}

/** What a fill moves and under which terms: its legs plus its instruction arguments. */
export interface FillTerms extends FillLegs, FillArgs {}

const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

/** Encodes `fill` instruction data exactly as the operator does. */
export function encodeFillData(args: FillArgs): Buffer {
  if (!fitsU64(args.inputAmount)) throw new RangeError("inputAmount out of u64");
  if (!fitsU64(args.outputAmount)) throw new RangeError("outputAmount out of u64");
  if (args.expireAt < I64_MIN || args.expireAt > I64_MAX) throw new RangeError("expireAt out of i64");
  if (!Number.isInteger(args.feeBps) || args.feeBps < 0 || args.feeBps > 0xffff) {
    throw new RangeError("feeBps out of u16");
  }
  const buf = Buffer.alloc(FILL_DATA_LENGTH);
  buf.set(FILL_DISCRIMINATOR, 0);
  buf.writeBigUInt64LE(args.inputAmount, 8);
  buf.writeBigUInt64LE(args.outputAmount, 16);
  buf.writeBigInt64LE(args.expireAt, 24);
  buf.writeUInt16LE(args.feeBps, 32);
  buf.writeUInt8(args.exactOut ? FILL_FLAG_EXACT_OUT : 0, 34);
  return buf;
}

/** Decodes `fill` data; undefined when the bytes are not a well-formed fill (wrong size or tag). */
export function decodeFillData(data: Uint8Array): FillArgs | undefined {
  if (data.length !== FILL_DATA_LENGTH) return undefined;
  for (let i = 0; i < FILL_DISCRIMINATOR.length; i++) {
    if (data[i] !== FILL_DISCRIMINATOR[i]) return undefined;
  }
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const flags = buf.readUInt8(34);
  return {
    inputAmount: buf.readBigUInt64LE(8),
    outputAmount: buf.readBigUInt64LE(16),
    expireAt: buf.readBigInt64LE(24),
    feeBps: buf.readUInt16LE(32),
    exactOut: (flags & FILL_FLAG_EXACT_OUT) !== 0,
  };
}

/** The order engine's temporary wSOL account for native-SOL unwrapping (seeds: tag + maker). */
export function temporaryWsolAccount(maker: PublicKey): PublicKey {
  const key = maker.toBase58();
  let pda = temporaryWsolCache.get(key);
  if (!pda) {
    // A PDA search is a loop of SHA-256s; there is one maker, so remember it (bounded all the same).
    if (temporaryWsolCache.size >= 1_000) temporaryWsolCache.clear();
    pda = PublicKey.findProgramAddressSync(
      [Buffer.from("temporary-wsol-token-account"), maker.toBuffer()],
      ORDER_ENGINE_PROGRAM_ID,
    )[0];
    temporaryWsolCache.set(key, pda);
  }
  return pda;
}
const temporaryWsolCache = new Map<string, PublicKey>();

/**
 * The operator's fee on a quoted amount. The fill's maker-to-taker amount is the quoted amount less
 * this (docs/contract.md, "Fees"; the fixture: 25,000,000 at 10 bps -> 24,975,000). Floor: the operator
 * never takes more than its bps.
 */
export function operatorFee(quotedAmount: bigint, feeBps: number): bigint {
  return (quotedAmount * BigInt(feeBps)) / 10_000n;
}

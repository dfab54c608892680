/**
 * What every fill rule reads and returns. A rule is a small function of one `FillCheck` that returns
 * a `Refusal` (the rule is broken) or nothing (it holds). Rules run in the order of `FILL_RULES`
 * (index.ts); a few of them also record what they established (the fill instruction, the compute
 * budget, the token accounts) on the check for the rules after them, so each fact is derived once.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { TokenConfig } from "../../../config/schema.ts";
import type { StoredQuote } from "../../quote-store/interface.ts";
import type { Refusal as AnyRefusal, FillRejectCode } from "../../refusal/codes.ts";
import type { ComputeUnitTable } from "../compute-units.ts";
import type { AccountRef, DecodedFillTx, DecodedInstruction, FillAccounts, FillIx } from "../decode.ts";
import type { FillArgs } from "../layout.ts";
import type { RaisedFeeCap } from "../raised-fee-cap.ts";
import type { SmartAccountEnvelope } from "../smart-account.ts";

/** A fill rule's refusal: always one of the fill rules' own codes. */
export interface Refusal extends AnyRefusal {
  code: FillRejectCode;
}

export const refuse = (code: FillRejectCode, context: string): Refusal => ({ code, context });

export interface AtaCreation {
  payer: PublicKey;
  ata: PublicKey;
  owner: PublicKey;
  mint: PublicKey;
  tokenProgram: PublicKey;
}

/** The fill, the quote it claims to fill and our configuration, plus what earlier rules established. */
export interface FillCheck {
  readonly tx: VersionedTransaction;
  readonly d: DecodedFillTx;
  readonly quote: StoredQuote;
  /** Our maker wallet. */
  readonly maker: PublicKey;
  /** Configured tokens keyed by mint (base58). */
  readonly tokens: ReadonlyMap<string, TokenConfig>;
  /** The most lamports the maker pays for one fill. */
  readonly maxFeeLamports: bigint;
  /** The cap on a fill whose compute-unit price is above the quoted one; undefined: no raise is accepted. */
  readonly raisedFeeCap: RaisedFeeCap | undefined;
  /** Seconds expire_at may exceed the quote's expiry. */
  readonly expiryGraceSeconds: bigint;
  /** The measured compute units of each fill shape (../compute-units.ts). */
  readonly computeUnits: ComputeUnitTable;
  /**
   * The smart-account envelope the fill arrived in (../smart-account.ts); undefined for a plain fill.
   * The rules of smart-account.ts judge it; the others then read `instructions`, its inner ones.
   */
  readonly envelope: SmartAccountEnvelope | undefined;
  /**
   * The instructions the fill rules walk: the message's, with a smart-account execute replaced by the
   * instructions it carries (the maker's signer flag reaches each of them).
   */
  readonly instructions: readonly DecodedInstruction[];
  /** The maker's account index: 0 (fee payer) in a plain fill; its outer index in an envelope (-1: absent). */
  readonly makerIndex: number;
  /** The taker's account index: 1 in a plain fill; the vault's outer index in an envelope (-1: absent). */
  readonly takerIndex: number;
  /** Account key 1, or the smart account's vault. */
  readonly taker: PublicKey;
  readonly inputMint: PublicKey;
  readonly outputMint: PublicKey;

  // Set by the instruction rules (instructions.ts, compute-budget.ts):
  fill?: FillIx;
  computeUnitLimit?: number;
  computeUnitPrice?: bigint;
  makerPaysLamports?: bigint;
  /** The compute-unit price is above the quote's prioritizationFeeToUse. */
  priceRaised?: boolean;
  ataCreations: AtaCreation[];

  // Set by the fill rules (fill-accounts.ts, mints.ts, token-accounts.ts):
  args?: FillArgs;
  accounts?: FillAccounts;
  inputToken?: TokenConfig;
  outputToken?: TokenConfig;
  inputTokenProgram?: PublicKey;
  outputTokenProgram?: PublicKey;
  makerInputTokenAccount?: PublicKey;
  makerOutputTokenAccount?: PublicKey;
  takerInputTokenAccount?: PublicKey;
  takerOutputTokenAccount?: PublicKey;
  nativeSolIn?: boolean;
  nativeSolOut?: boolean;

  // Set by the amount rules (amounts.ts):
  feeOwed?: bigint;
  feeMint?: PublicKey;
}

export type FillRule = (c: FillCheck) => Refusal | undefined;

/**
 * Whether an account is the maker's: key 0 in a plain fill (the fee payer rule holds before any rule
 * uses this), the maker's own key's index in a smart-account envelope.
 */
export const isMaker = (c: FillCheck, a: AccountRef): boolean => a.index === c.makerIndex;

/** No lookup tables are accepted, so every account a rule reads has a static key. */
export const keyOf = (a: AccountRef): PublicKey => a.key as PublicKey;

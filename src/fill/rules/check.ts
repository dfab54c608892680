/**
 * What every fill rule reads and returns. A rule is a pure function of one `FillCheck`, the fill
 * resolved once (resolve.ts) into every fact a rule reads, that returns a `Refusal` (the rule is
 * broken) or nothing (it holds). No rule writes the check or reads what another rule found, so the
 * rules may run in any order; `FILL_RULES`' order (index.ts) only says which refusal names a fill that
 * breaks several. A fact the message lacks is `undefined` here, and the rule that requires it refuses;
 * every other rule holds where it cannot judge.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { TokenConfig } from "../../../config/schema.ts";
import type {
  AccountRef,
  DecodedFillTx,
  DecodedInstruction,
  FillAccounts,
  FillIx,
} from "../../program/decode.ts";
import type { FillArgs } from "../../program/layout.ts";
import type { SmartAccountEnvelope } from "../../program/smart-account.ts";
import type { StoredQuote } from "../../quote-store/interface.ts";
import type { Refusal as AnyRefusal, FillRejectCode } from "../../refusal/codes.ts";
import type { ComputeUnitTable } from "../compute-units.ts";
import type { FeeShapeCheck } from "../fee-shape.ts";
import type { RaisedFeeCap } from "../raised-fee-cap.ts";

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

/** The fill, the quote it claims to fill and our configuration, and every fact resolved from them. */
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

  /** The first order-engine fill among `instructions` (exactlyOneFill, and the walk refuses a second). */
  readonly fill: FillIx | undefined;
  /** The fill's arguments; undefined without a fill or when its data does not decode (fillDataReadable). */
  readonly args: FillArgs | undefined;
  /** The fill's named accounts; undefined without a fill or when it names too few or too many. */
  readonly accounts: FillAccounts | undefined;
  /** The first SetComputeUnitLimit's units (the walk refuses a second; computeUnitLimitSet, none). */
  readonly computeUnitLimit: number | undefined;
  /** The first SetComputeUnitPrice's micro-lamports (computeUnitPriceSet refuses none). */
  readonly computeUnitPrice: bigint | undefined;
  /**
   * What this transaction costs the maker: the fee payer pays the whole network fee, so a smart-account
   * fill (a member pays) costs it nothing. Undefined when a plain fill sets no limit or no price.
   */
  readonly makerPaysLamports: bigint | undefined;
  /** The compute-unit price is above the quote's prioritizationFeeToUse. */
  readonly priceRaised: boolean;
  /** Each well-formed CreateIdempotent, with the account it names (ata-creation.ts judges each). */
  readonly ataCreations: readonly AtaCreation[];
  /** The configured tokens of the quote's mints; undefined: not traded (mints.ts). */
  readonly inputToken: TokenConfig | undefined;
  readonly outputToken: TokenConfig | undefined;
  /** Their configured token programs. */
  readonly inputTokenProgram: PublicKey | undefined;
  readonly outputTokenProgram: PublicKey | undefined;
  /** The maker's ATAs of the quote's mints under their configured programs; undefined: not traded. */
  readonly makerInputTokenAccount: PublicKey | undefined;
  readonly makerOutputTokenAccount: PublicKey | undefined;
  /** The fill's taker-side token accounts; undefined without the fill's accounts. */
  readonly takerInputTokenAccount: PublicKey | undefined;
  readonly takerOutputTokenAccount: PublicKey | undefined;
  /** A taker leg is native SOL: the order-engine id as its account, on the wSOL mint. */
  readonly nativeSolIn: boolean;
  readonly nativeSolOut: boolean;
  /** The fill's amounts against the operator's fee shapes (../fee-shape.ts); undefined without arguments. */
  readonly feeShape: FeeShapeCheck | undefined;
}

export type FillRule = (c: FillCheck) => Refusal | undefined;

/**
 * Whether an account is the maker's: key 0 in a plain fill (the fee payer rule holds before any rule
 * uses this), the maker's own key's index in a smart-account envelope.
 */
export const isMaker = (c: FillCheck, a: AccountRef): boolean => a.index === c.makerIndex;

/** No lookup tables are accepted, so every account a rule reads has a static key. */
export const keyOf = (a: AccountRef): PublicKey => a.key as PublicKey;

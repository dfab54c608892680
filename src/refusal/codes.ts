/**
 * Every refusal code, in one list: the fill rules' (FillRejectCode), the swap path's around them
 * (SwapRefusalCode) and the signer service's (SignerRefusalCode). A refusal travels as a value,
 * `{ code, context }`, from the rule that refuses to the ledger's `code` column; it becomes text only
 * at the HTTP edge (src/contract/swap.ts) and in logs. Named by the fixed scheme (MALFORMED_,
 * INVALID_, _NOT_FOUND, _EXCEEDED, _UNAVAILABLE), one casing: UPPER_SNAKE. Logs, metric labels, the
 * ledger and tests key on these strings: once released a code is never renamed, renumbered or
 * reused, only added.
 */

/** Why a fill transaction breaks one of the contract's rules (src/fill/rules/). */
export const FillRejectCode = {
  /** The bytes or the message structure cannot be read (bad indexes, duplicate keys, signature count). */
  MALFORMED_TRANSACTION: "MALFORMED_TRANSACTION",
  /** Not a v0 message. */
  INVALID_MESSAGE_VERSION: "INVALID_MESSAGE_VERSION",
  /** The message references address lookup tables. */
  LOOKUP_TABLES_NOT_SUPPORTED: "LOOKUP_TABLES_NOT_SUPPORTED",
  /** Account key 0 (fee payer, signature slot 0) is not our maker. */
  INVALID_FEE_PAYER: "INVALID_FEE_PAYER",
  /** The quote was answered for another maker wallet than the one asked to co-sign. */
  INVALID_QUOTE_MAKER: "INVALID_QUOTE_MAKER",
  /** Key 1 is not a writable signer, differs from the quote's taker, or the fill's taker is not key 1. */
  INVALID_TAKER: "INVALID_TAKER",
  /** Fewer than two required signatures. */
  INVALID_SIGNER_COUNT: "INVALID_SIGNER_COUNT",
  /** An instruction of a program (or an order-engine instruction) the contract does not allow. */
  INVALID_PROGRAM: "INVALID_PROGRAM",
  /** Allowed instructions in a forbidden order (anything but Lighthouse after the fill, Lighthouse before it). */
  INVALID_INSTRUCTION_ORDER: "INVALID_INSTRUCTION_ORDER",
  /** ComputeBudget: a limit or price missing or repeated, another ComputeBudget instruction, a zero limit. */
  INVALID_COMPUTE_BUDGET: "INVALID_COMPUTE_BUDGET",
  /** limit x price + signature fees is more than the maker will pay. */
  FEE_CAP_EXCEEDED: "FEE_CAP_EXCEEDED",
  /** The compute-unit limit is below what the fill's shape consumes (src/fill/compute-units.ts): it cannot land. */
  COMPUTE_UNIT_LIMIT_TOO_LOW: "COMPUTE_UNIT_LIMIT_TOO_LOW",
  /** The compute-unit limit is above the ceiling: 1,400,000, or 200,000 for a permissioned pair. */
  COMPUTE_UNIT_LIMIT_EXCEEDED: "COMPUTE_UNIT_LIMIT_EXCEEDED",
  /** The compute-unit price is above the prioritizationFeeToUse the maker answered, and no raise cap is given. */
  COMPUTE_UNIT_PRICE_EXCEEDED: "COMPUTE_UNIT_PRICE_EXCEEDED",
  /**
   * The compute-unit price was raised above the quoted prioritizationFeeToUse and the fill would cost
   * the maker more than the raise cap (limits.raisedFeeCap or the pair's: lamports, share of notional).
   */
  RAISED_FEE_CAP_EXCEEDED: "RAISED_FEE_CAP_EXCEEDED",
  /** An Associated Token instruction other than a well-formed CreateIdempotent for one of the fill's mints. */
  INVALID_ATA_INSTRUCTION: "INVALID_ATA_INSTRUCTION",
  /** A CreateIdempotent paid by the maker, or by an account that is not a writable signer. */
  INVALID_ATA_PAYER: "INVALID_ATA_PAYER",
  /** A CreateIdempotent for an owner that is neither the taker nor the quote's receiver. */
  INVALID_ATA_OWNER: "INVALID_ATA_OWNER",
  /** The maker's key appears in an instruction other than as the fill's maker (e.g. in Lighthouse). */
  INVALID_MAKER_ACCOUNT_USE: "INVALID_MAKER_ACCOUNT_USE",
  /**
   * A smart-account envelope that is not the one the toolkit's SDK builds: unreadable, another
   * instruction beside the execute, a compute-budget instruction inside it, a wrong program account.
   */
  INVALID_SMART_ACCOUNT: "INVALID_SMART_ACCOUNT",
  /** A smart-account envelope whose members are wrong: the maker among them, one not signing, one twice. */
  INVALID_SMART_ACCOUNT_MEMBERS: "INVALID_SMART_ACCOUNT_MEMBERS",
  /** No order-engine fill. */
  FILL_NOT_FOUND: "FILL_NOT_FOUND",
  /** More than one order-engine fill. */
  MULTIPLE_FILLS: "MULTIPLE_FILLS",
  /** The fill's data is not exactly discriminator + 24 bytes of arguments + 3 trailing bytes. */
  MALFORMED_FILL_DATA: "MALFORMED_FILL_DATA",
  /** Wrong fill account count, maker, system program, writability or temporary wSOL account. */
  INVALID_FILL_ACCOUNTS: "INVALID_FILL_ACCOUNTS",
  /** A fill mint that is not the quote's (or not one we trade). */
  INVALID_MINT: "INVALID_MINT",
  /** A token program that is not the configured one for its mint. */
  INVALID_TOKEN_PROGRAM: "INVALID_TOKEN_PROGRAM",
  /** A maker token account that is not the maker's ATA for that mint. */
  INVALID_MAKER_TOKEN_ACCOUNT: "INVALID_MAKER_TOKEN_ACCOUNT",
  /** A taker token account that is not the taker's ATA (or the native-SOL placeholder on a wSOL leg). */
  INVALID_TAKER_TOKEN_ACCOUNT: "INVALID_TAKER_TOKEN_ACCOUNT",
  /** input_amount is not the quoted amountIn. */
  INVALID_INPUT_AMOUNT: "INVALID_INPUT_AMOUNT",
  /** output_amount is not the quoted amountOut less the operator's fee. */
  INVALID_OUTPUT_AMOUNT: "INVALID_OUTPUT_AMOUNT",
  /** The fee bps in the fill's trailing bytes is not the quote request's. */
  INVALID_FEE_BPS: "INVALID_FEE_BPS",
  /** The exact-out flag does not match the quote type. */
  INVALID_QUOTE_TYPE_FLAG: "INVALID_QUOTE_TYPE_FLAG",
  /** expire_at (or the quote itself) is already in the past. */
  QUOTE_EXPIRED: "QUOTE_EXPIRED",
  /** expire_at is later than the quote's own expiry. */
  INVALID_EXPIRY: "INVALID_EXPIRY",
  /** A Lighthouse instruction that is not an account or token-account assertion (tag 5, 6, 9 or 10). */
  INVALID_LIGHTHOUSE_INSTRUCTION: "INVALID_LIGHTHOUSE_INSTRUCTION",
  /** The recent blockhash is not one the chain accepts (never issued, or expired): it would never land. */
  BLOCKHASH_NOT_FOUND: "BLOCKHASH_NOT_FOUND",
  /** The recent blockhash has fewer blocks to live than limits.minBlockhashBlocksLeft: it would expire before landing. */
  BLOCKHASH_AGE_EXCEEDED: "BLOCKHASH_AGE_EXCEEDED",
  /** The co-signed transaction failed its pre-flight simulation (the simulated error follows): not sent. */
  SIMULATION_FAILED: "SIMULATION_FAILED",
} as const;

export type FillRejectCode = (typeof FillRejectCode)[keyof typeof FillRejectCode];

/** Why the swap path refused a fill before, around or after the fill rules (src/swap/). */
export const SwapRefusalCode = {
  /** The quote store could not be read or written in time (Redis down, its circuit open, a timeout). */
  QUOTE_STORE_UNAVAILABLE: "QUOTE_STORE_UNAVAILABLE",
  /** No such quote: never quoted here, or forgotten long after its expiry. */
  QUOTE_NOT_FOUND: "QUOTE_NOT_FOUND",
  /** The swap's requestId is not the one the quote was answered to. */
  INVALID_REQUEST_ID: "INVALID_REQUEST_ID",
  /** The maker's signature slot is already filled. */
  INVALID_MAKER_SIGNATURE_SLOT: "INVALID_MAKER_SIGNATURE_SLOT",
  /** The taker's signature is missing or does not verify (answered signatureVerificationFailed). */
  SIGNATURE_VERIFICATION_FAILED: "SIGNATURE_VERIFICATION_FAILED",
  /** A flagged or denied taker filling an indicative quote (answered botActivityDetected). */
  BOT_ACTIVITY_DETECTED: "BOT_ACTIVITY_DETECTED",
  /** The issued token's holder rules do not allow this taker (src/issuance/). */
  HOLDER_NOT_ALLOWED: "HOLDER_NOT_ALLOWED",
  /** Issuance of this token in this direction is switched off. */
  ISSUANCE_DISABLED: "ISSUANCE_DISABLED",
  /** The mint or burn is over the per-fill or the daily issuance cap. */
  ISSUANCE_CAP_EXCEEDED: "ISSUANCE_CAP_EXCEEDED",
  /** No bundle engine (or its tip accounts): the mint or burn could not land atomically with the fill. */
  ISSUANCE_UNAVAILABLE: "ISSUANCE_UNAVAILABLE",
  /** The issuance usage store could not be read or written in time. */
  ISSUANCE_STORE_UNAVAILABLE: "ISSUANCE_STORE_UNAVAILABLE",
  /** The message was already submitted for another quote: one message serves one quote. */
  MESSAGE_BOUND_TO_OTHER_QUOTE: "MESSAGE_BOUND_TO_OTHER_QUOTE",
  /** The quote is already claimed by a different transaction. */
  QUOTE_ALREADY_CLAIMED: "QUOTE_ALREADY_CLAIMED",
  /** A duplicate whose first request has not answered yet, or gave the quote back: retry. */
  DUPLICATE_IN_FLIGHT: "DUPLICATE_IN_FLIGHT",
  /** A duplicate whose first request's fill failed on chain or expired before it landed. */
  DUPLICATE_NOT_LANDED: "DUPLICATE_NOT_LANDED",
  /** The chain clock could not be read in time. */
  CHAIN_CLOCK_UNAVAILABLE: "CHAIN_CLOCK_UNAVAILABLE",
  /** The recent blockhash could not be checked in time. */
  BLOCKHASH_CHECK_UNAVAILABLE: "BLOCKHASH_CHECK_UNAVAILABLE",
  /** The taker lacks the input amount (answered insufficientBalance). */
  INSUFFICIENT_BALANCE: "INSUFFICIENT_BALANCE",
  /** The taker cannot pay for the token accounts the fill creates (answered insufficientBalanceForAtaCreation). */
  INSUFFICIENT_BALANCE_FOR_ATA_CREATION: "INSUFFICIENT_BALANCE_FOR_ATA_CREATION",
  /** The chain does not show that the taker can pay (an unreadable or frozen account, a failed read). */
  TAKER_FUNDS_UNVERIFIABLE: "TAKER_FUNDS_UNVERIFIABLE",
  /** The maker's inventory could not be reserved in time. */
  INVENTORY_UNAVAILABLE: "INVENTORY_UNAVAILABLE",
  /** The maker holds less than the fill takes. */
  INVENTORY_INSUFFICIENT: "INVENTORY_INSUFFICIENT",
  /** The fill would take the maker's exposure past its limit. */
  EXPOSURE_LIMIT_EXCEEDED: "EXPOSURE_LIMIT_EXCEEDED",
  /** The swap's time budget ran out before signing. */
  BUDGET_EXCEEDED: "BUDGET_EXCEEDED",
  /** The maker's signature could not be produced (the signer not reachable, or no signature came back). */
  SIGNATURE_UNAVAILABLE: "SIGNATURE_UNAVAILABLE",
  /** The signer refused with a code this webhook does not know (the signer is newer). */
  SIGNER_REFUSED: "SIGNER_REFUSED",
  /** The transaction was not sent, or not acknowledged, or refused by the chain. */
  SEND_FAILED: "SEND_FAILED",
  /** The issuer's mint or burn transaction could not be signed. */
  COMPANION_UNAVAILABLE: "COMPANION_UNAVAILABLE",
  /** The bundle engine did not accept the bundle, or did not answer in time. */
  BUNDLE_FAILED: "BUNDLE_FAILED",
  /** A bug in the swap path: answered rather than a 500 the operator reads as "webhook down". */
  INTERNAL_ERROR: "INTERNAL_ERROR",
} as const;

export type SwapRefusalCode = (typeof SwapRefusalCode)[keyof typeof SwapRefusalCode];

/** Why the signer service refused (src/signer/service/), beside the fill rules' codes, which it repeats. */
export const SignerRefusalCode = {
  /** The request is not one the protocol knows. */
  BAD_REQUEST: "SIGNER_BAD_REQUEST",
  /** No such quote in the shared store (never quoted, or forgotten). */
  UNKNOWN_QUOTE: "SIGNER_UNKNOWN_QUOTE",
  /** The shared quote store or the signer's own record could not be read or written. */
  STORE_UNAVAILABLE: "SIGNER_STORE_UNAVAILABLE",
  /** The taker's signature is missing or wrong, or the maker's slot is not empty. */
  TAKER_SIGNATURE: "SIGNER_TAKER_SIGNATURE",
  /** This exact message was signed before (the signer's own record). */
  ALREADY_SIGNED: "SIGNER_ALREADY_SIGNED",
  /**
   * The quote was signed for another message that can still land (its blockhash is still valid, or
   * the signer has no chain to tell): one landable fill per quote.
   */
  QUOTE_ALREADY_SIGNED: "SIGNER_QUOTE_ALREADY_SIGNED",
  /** The fill's pair has no price band in the signer's file: the signer does not sign what it cannot price. */
  NO_PRICE_BAND: "SIGNER_NO_PRICE_BAND",
  /** The signer's own price source has no fresh price for the pair. */
  NO_PRICE: "SIGNER_NO_PRICE",
  /** The fill's price is worse for the maker than the signer's band around its own mid allows. */
  PRICE_BAND: "SIGNER_PRICE_BAND",
  /** What the fill gives away beyond the signer's price would cross the token's daily loss limit. */
  LIMIT_LOSS_PER_DAY: "SIGNER_LIMIT_LOSS_PER_DAY",
  /** The fill's token has no limit configured: the signer does not sign what it cannot bound. */
  NO_LIMIT: "SIGNER_NO_LIMIT",
  LIMIT_PER_FILL: "SIGNER_LIMIT_PER_FILL",
  LIMIT_PER_MINUTE: "SIGNER_LIMIT_PER_MINUTE",
  LIMIT_PER_DAY: "SIGNER_LIMIT_PER_DAY",
  /** The signer holds no issuer key (SIGNER_ISSUER_KEYPAIR), or the fill is not one it makes a companion for. */
  NO_ISSUER: "SIGNER_NO_ISSUER",
  /** A companion is asked for a fill this signer did not sign for that quote. */
  COMPANION_UNSIGNED_FILL: "SIGNER_COMPANION_UNSIGNED_FILL",
  /** A companion was already made for this quote: one per quote. */
  COMPANION_ALREADY_MADE: "SIGNER_COMPANION_ALREADY_MADE",
  /**
   * An RFQ v2 swap loads accounts from lookup tables and the signer has no chain reader (SIGNER_RPC_URL)
   * to resolve them: it signs only what it can read. With one, the tables' own codes apply
   * (V2_LOOKUP_TABLE_NOT_FOUND, V2_LOOKUP_TABLE_DEACTIVATED, V2_LOOKUP_INDEX_OUT_OF_RANGE,
   * V2_LOOKUP_TABLES_UNRESOLVED, src/rfq-v2/codes.ts).
   */
  V2_LOOKUP_TABLES: "SIGNER_V2_LOOKUP_TABLES",
  /** An RFQ v2 swap runs a top-level program outside the ones an offered swap holds (compute budget, system, token, ATA, aggregator). */
  V2_UNEXPECTED_PROGRAM: "SIGNER_V2_UNEXPECTED_PROGRAM",
  /** An RFQ v2 swap's expire_at is past, or further ahead than the configuration's rfqV2.quoteExpirySeconds. */
  V2_EXPIRY: "SIGNER_V2_EXPIRY",
  /** An RFQ v2 swap's lot or levels are not within the level set the webhook says it streamed (a webhook fault). */
  V2_LEVELS_NOT_CLAIMED: "SIGNER_V2_LEVELS_NOT_CLAIMED",
} as const;

export type SignerRefusalCode = (typeof SignerRefusalCode)[keyof typeof SignerRefusalCode];

export type RefusalCode = FillRejectCode | SwapRefusalCode | SignerRefusalCode;

const ALL_CODES: ReadonlySet<string> = new Set<string>([
  ...Object.values(FillRejectCode),
  ...Object.values(SwapRefusalCode),
  ...Object.values(SignerRefusalCode),
]);

/** A code read from outside the process (the signer's wire) that this list holds. */
export const isRefusalCode = (code: string): code is RefusalCode => ALL_CODES.has(code);

/** Why a fill was refused: the code, and the context that names what broke (ids, amounts, the detail). */
export interface Refusal {
  code: RefusalCode;
  context: string;
}

export const refusal = (code: RefusalCode, context: string): Refusal => ({ code, context });

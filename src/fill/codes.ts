/**
 * Why a fill transaction was refused. Named by the fixed scheme (MALFORMED_, INVALID_, _NOT_FOUND,
 * _EXCEEDED); the value is the name. Logs, metrics labels and tests key on these strings: never
 * rename or reuse one once committed, only add.
 */
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

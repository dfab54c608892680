/**
 * Every refusal code, in one list, each family a channel's: the fill rules' (FillRejectCode), the swap
 * path's around them (SwapRefusalCode), the inventory's and the issuer's, the quote's declines
 * (QuoteDeclineCode), RFQ v2's (V2RejectCode), the signer service's (SignerRefusalCode) and the
 * rebalancer's (RebalanceRefusalCode). A code is written once, key equal to value; a family that shares
 * another's code (one idea, one name) lists it by reference. A code whose meaning is one channel's own
 * carries its prefix (V2_, SIGNER_, REBALANCE_). A refusal travels as a value, `{ code, context }`, from
 * the rule that refuses to the HTTP answer, the logs, the signer's reply, the ledger's `code` column and
 * the metric labels; it becomes the operator's text in one place (src/contract/swap.ts). Named by the
 * fixed scheme (MALFORMED_, INVALID_, _NOT_FOUND, _EXCEEDED, _UNAVAILABLE), one casing: UPPER_SNAKE.
 * Logs, metric labels, the ledger and tests key on these strings: a rename is a ledger migration
 * (src/ledger/migrations.ts) and a change of every document that names the code; `npm run check`
 * (scripts/check-refusals.ts) keeps every list here and every refusal in this shape.
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

/** Why the maker's inventory (inventory/) will not carry a trade: the quote, /swap, RFQ v2 and the rebalancer. */
export const InventoryRefusalCode = {
  /** The maker holds less than the fill takes. */
  INVENTORY_INSUFFICIENT: "INVENTORY_INSUFFICIENT",
  /** The fill would take the maker's exposure past its limit. */
  EXPOSURE_LIMIT_EXCEEDED: "EXPOSURE_LIMIT_EXCEEDED",
  /** Balances could not be read from the chain for longer than `inventory.maxBalanceAgeMs`. */
  INVENTORY_STALE: "INVENTORY_STALE",
  /** The maker's native SOL is below `inventory.minSolLamports`: it could not pay the fill's fees. */
  SOL_FOR_FEES_LOW: "SOL_FOR_FEES_LOW",
} as const;

export type InventoryRefusalCode = (typeof InventoryRefusalCode)[keyof typeof InventoryRefusalCode];

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
  INVENTORY_INSUFFICIENT: InventoryRefusalCode.INVENTORY_INSUFFICIENT,
  EXPOSURE_LIMIT_EXCEEDED: InventoryRefusalCode.EXPOSURE_LIMIT_EXCEEDED,
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
  /** A bug in the swap path (or the signer's): answered rather than a 500 the operator reads as "webhook down". */
  INTERNAL_ERROR: "INTERNAL_ERROR",
} as const;

export type SwapRefusalCode = (typeof SwapRefusalCode)[keyof typeof SwapRefusalCode];

/** The issuer's refusals (src/issuance/, src/policy/trade.ts): the quote, /swap, RFQ v2 and the rebalancer. */
export type IssuanceRefusalCode =
  | typeof SwapRefusalCode.HOLDER_NOT_ALLOWED
  | typeof SwapRefusalCode.ISSUANCE_DISABLED
  | typeof SwapRefusalCode.ISSUANCE_CAP_EXCEEDED
  | typeof SwapRefusalCode.ISSUANCE_UNAVAILABLE;

/** Why POST /quote answered 404: the price book's, the quote service's and the quote path's reasons. */
export const QuoteDeclineCode = {
  /** The pair is not configured. */
  PAIR_NOT_SUPPORTED: "PAIR_NOT_SUPPORTED",
  /** The pair's switch is off. */
  PAIR_DISABLED: "PAIR_DISABLED",
  /** No price for the pair. */
  PRICE_UNAVAILABLE: "PRICE_UNAVAILABLE",
  /** The pair's price is older than its freshness bound. */
  PRICE_STALE: "PRICE_STALE",
  /** The trade's base size is below the pair's minimum. */
  SIZE_BELOW_MIN: "SIZE_BELOW_MIN",
  /** The trade's base size is above the pair's maximum. */
  SIZE_ABOVE_MAX: "SIZE_ABOVE_MAX",
  /** The amount prices to nothing on the other side. */
  AMOUNT_TOO_SMALL: "AMOUNT_TOO_SMALL",
  /** The amount does not fit the token's u64 bounds. */
  AMOUNT_TOO_LARGE: "AMOUNT_TOO_LARGE",
  /** The global kill switch is on. */
  PAUSED: "PAUSED",
  /** The shared switches (Redis) cannot be read: a dependency outage, not a pause; no quote until back. */
  CONTROLS_UNAVAILABLE: "CONTROLS_UNAVAILABLE",
  /** The quote's notional exceeds the pair's `maxNotionalUsd`. */
  NOTIONAL_EXCEEDED: "NOTIONAL_EXCEEDED",
  INVENTORY_INSUFFICIENT: InventoryRefusalCode.INVENTORY_INSUFFICIENT,
  EXPOSURE_LIMIT_EXCEEDED: InventoryRefusalCode.EXPOSURE_LIMIT_EXCEEDED,
  INVENTORY_STALE: InventoryRefusalCode.INVENTORY_STALE,
  SOL_FOR_FEES_LOW: InventoryRefusalCode.SOL_FOR_FEES_LOW,
  /** A mint of the request is not one the maker trades. */
  TOKEN_NOT_SUPPORTED: "TOKEN_NOT_SUPPORTED",
  HOLDER_NOT_ALLOWED: SwapRefusalCode.HOLDER_NOT_ALLOWED,
  ISSUANCE_DISABLED: SwapRefusalCode.ISSUANCE_DISABLED,
  ISSUANCE_CAP_EXCEEDED: SwapRefusalCode.ISSUANCE_CAP_EXCEEDED,
  ISSUANCE_UNAVAILABLE: SwapRefusalCode.ISSUANCE_UNAVAILABLE,
  /**
   * The counterparty is this maker's own wallet (a wash trade that only pays fees): the taker of a
   * quote (the maker's rebalancer buying through the operator's order API), or the maker of an order
   * the rebalancer was offered.
   */
  SELF_TRADE: "SELF_TRADE",
  /**
   * The request names a `receiver` other than the taker: the order-engine fill pays only the taker's
   * own output account and the operator's fill carries no forward transfer, so such a quote could not
   * be filled as asked (docs/contract.md, "receiver"). A 404 costs nothing; a refused swap would.
   */
  RECEIVER_NOT_TAKER: "RECEIVER_NOT_TAKER",
  /** Toxic-flow controls (src/toxicity/): the taker is flagged and flagged takers are refused. */
  TAKER_FLAGGED: "TAKER_FLAGGED",
  /** Toxic-flow controls: the taker is on the deny list. */
  TAKER_DENIED: "TAKER_DENIED",
  /** A dependency of the fill is failing (src/health/fill-path.ts): the RPC. */
  RPC_UNAVAILABLE: "RPC_UNAVAILABLE",
  /** A dependency of the fill is failing: the signer service. */
  SIGNER_UNAVAILABLE: "SIGNER_UNAVAILABLE",
  /** A dependency of the fill is failing: the ledger. */
  LEDGER_UNAVAILABLE: "LEDGER_UNAVAILABLE",
  /** A dependency of an issued token's fill (minted or burned with it) is failing: the block engine. */
  BUNDLE_UNAVAILABLE: "BUNDLE_UNAVAILABLE",
  /** The operator's deadline passed (or too little of it is left to answer in). */
  DEADLINE: "DEADLINE",
  /** The request waited in the queue past its share of the budget (src/http/shed.ts). */
  OVERLOADED: "OVERLOADED",
  /** The quote store is full (its memory bound): the quote could not be kept for its swap. */
  QUOTE_STORE_FULL: "QUOTE_STORE_FULL",
  QUOTE_STORE_UNAVAILABLE: SwapRefusalCode.QUOTE_STORE_UNAVAILABLE,
  /** The store already holds a quote under this id. */
  QUOTE_ID_CLAIMED: "QUOTE_ID_CLAIMED",
} as const;

export type QuoteDeclineCode = (typeof QuoteDeclineCode)[keyof typeof QuoteDeclineCode];

/** The price book's declines (pricing/book.ts): the quote's, and RFQ v2's reasons to withdraw a pair. */
export type PriceDeclineCode =
  | typeof QuoteDeclineCode.PAIR_NOT_SUPPORTED
  | typeof QuoteDeclineCode.PAIR_DISABLED
  | typeof QuoteDeclineCode.PRICE_UNAVAILABLE
  | typeof QuoteDeclineCode.PRICE_STALE
  | typeof QuoteDeclineCode.SIZE_BELOW_MIN
  | typeof QuoteDeclineCode.SIZE_ABOVE_MAX
  | typeof QuoteDeclineCode.AMOUNT_TOO_SMALL
  | typeof QuoteDeclineCode.AMOUNT_TOO_LARGE
  | typeof QuoteDeclineCode.PAUSED
  | typeof QuoteDeclineCode.CONTROLS_UNAVAILABLE
  | typeof QuoteDeclineCode.NOTIONAL_EXCEEDED;

/** Every QuoteDeclineCode, for the no-quote counter's series at 0 from the start. */
export const QUOTE_DECLINE_CODES: readonly QuoteDeclineCode[] = Object.values(QuoteDeclineCode);

/**
 * Why an RFQ v2 swap (SWAP_AVAILABLE) was not co-signed, where the reason is the stream's own; the
 * fill rules' and the swap path's codes serve it where the idea is theirs (MALFORMED_TRANSACTION,
 * INVALID_MAKER_ACCOUNT_USE, the inventory's, the issuer's, MESSAGE_BOUND_TO_OTHER_QUOTE).
 */
export const V2RejectCode = {
  /** The lookup tables could not be read: the chain read failed or did not answer within the deadline. */
  V2_LOOKUP_TABLES_UNRESOLVED: "V2_LOOKUP_TABLES_UNRESOLVED",
  /** A lookup table the message loads from does not exist, or the account is not a lookup table. */
  V2_LOOKUP_TABLE_NOT_FOUND: "V2_LOOKUP_TABLE_NOT_FOUND",
  /** A lookup table the message loads from is deactivated (or deactivating: it may be closed before landing). */
  V2_LOOKUP_TABLE_DEACTIVATED: "V2_LOOKUP_TABLE_DEACTIVATED",
  /** The message loads an index beyond the lookup table's addresses, as read from the chain just now. */
  V2_LOOKUP_INDEX_OUT_OF_RANGE: "V2_LOOKUP_INDEX_OUT_OF_RANGE",
  /** Not exactly two required signatures, or the maker's key is not the read-only signer at slot 1. */
  V2_INVALID_SIGNERS: "V2_INVALID_SIGNERS",
  /** Not exactly one aggregator route_v2 instruction, or its plan does not hold exactly one RFQ v2 leg. */
  V2_ROUTE_NOT_FOUND: "V2_ROUTE_NOT_FOUND",
  /**
   * The route plan holds a step the maker cannot read (a swap tag outside the published enum, or a value
   * Borsh refuses): nothing after it can be located, so the route is refused, never searched for bytes.
   */
  V2_ROUTE_UNREADABLE: "V2_ROUTE_UNREADABLE",
  /** The route's or the leg's accounts are not the ones the fill needs (programs, mints, maker accounts, taker). */
  V2_INVALID_ACCOUNTS: "V2_INVALID_ACCOUNTS",
  /** The pair is not one the maker streams, or its levels are withdrawn. */
  V2_PAIR_NOT_STREAMED: "V2_PAIR_NOT_STREAMED",
  /** Lot size, levels or prices match no level set the maker streamed that is still valid. */
  V2_LEVELS_NOT_STREAMED: "V2_LEVELS_NOT_STREAMED",
  /**
   * expire_at is past, or later than the streamed levels' validity (the signer service: further ahead
   * than the configuration's rfqV2.quoteExpirySeconds).
   */
  V2_EXPIRED: "V2_EXPIRED",
  /**
   * A lone leg's input is not the whole route input (bps 10,000, input index 0), a leg beside others
   * takes no share or more than all of its input (bps outside 1-10,000), or the input buys no whole lot.
   */
  V2_INVALID_AMOUNTS: "V2_INVALID_AMOUNTS",
  /** The swap id was signed before. */
  V2_DUPLICATE_SWAP: "V2_DUPLICATE_SWAP",
} as const;

export type V2RejectCode = (typeof V2RejectCode)[keyof typeof V2RejectCode];

/**
 * Why the signer service refused (src/signer/service/), where the reason is the signer's own; beside
 * these it answers the fill rules', RFQ v2's and the swap path's codes where the idea is theirs
 * (QUOTE_NOT_FOUND, SIGNATURE_VERIFICATION_FAILED, INVALID_MAKER_SIGNATURE_SLOT, INVALID_PROGRAM, V2_EXPIRED,
 * INTERNAL_ERROR).
 */
export const SignerRefusalCode = {
  /** The request is not one the protocol knows. */
  SIGNER_BAD_REQUEST: "SIGNER_BAD_REQUEST",
  /** The shared quote store or the signer's own record could not be read or written. */
  SIGNER_STORE_UNAVAILABLE: "SIGNER_STORE_UNAVAILABLE",
  /** This exact message was signed before (the signer's own record). */
  SIGNER_ALREADY_SIGNED: "SIGNER_ALREADY_SIGNED",
  /**
   * The quote was signed for another message that can still land (its blockhash is still valid, or
   * the signer has no chain to tell): one landable fill per quote.
   */
  SIGNER_QUOTE_ALREADY_SIGNED: "SIGNER_QUOTE_ALREADY_SIGNED",
  /** The fill's pair has no price band in the signer's file: the signer does not sign what it cannot price. */
  SIGNER_NO_PRICE_BAND: "SIGNER_NO_PRICE_BAND",
  /** The signer's own price source has no fresh price for the pair. */
  SIGNER_NO_PRICE: "SIGNER_NO_PRICE",
  /** The fill's price is worse for the maker than the signer's band around its own mid allows. */
  SIGNER_PRICE_BAND: "SIGNER_PRICE_BAND",
  /** What the fill gives away beyond the signer's price would cross the token's daily loss limit. */
  SIGNER_LIMIT_LOSS_PER_DAY: "SIGNER_LIMIT_LOSS_PER_DAY",
  /** The fill's token has no limit configured: the signer does not sign what it cannot bound. */
  SIGNER_NO_LIMIT: "SIGNER_NO_LIMIT",
  /** The fill is above the token's per-fill limit. */
  SIGNER_LIMIT_PER_FILL: "SIGNER_LIMIT_PER_FILL",
  /** The fill would cross the token's per-minute limit. */
  SIGNER_LIMIT_PER_MINUTE: "SIGNER_LIMIT_PER_MINUTE",
  /** The fill would cross the token's daily limit. */
  SIGNER_LIMIT_PER_DAY: "SIGNER_LIMIT_PER_DAY",
  /** The signer holds no issuer key (SIGNER_ISSUER_KEYPAIR), or the fill is not one it makes a companion for. */
  SIGNER_NO_ISSUER: "SIGNER_NO_ISSUER",
  /** A companion is asked for a fill this signer did not sign for that quote. */
  SIGNER_COMPANION_UNSIGNED_FILL: "SIGNER_COMPANION_UNSIGNED_FILL",
  /** A companion was already made for this quote: one per quote. */
  SIGNER_COMPANION_ALREADY_MADE: "SIGNER_COMPANION_ALREADY_MADE",
  /**
   * An RFQ v2 swap loads accounts from lookup tables and the signer has no chain reader (SIGNER_RPC_URL)
   * to resolve them: it signs only what it can read. With one, the tables' own codes apply
   * (V2_LOOKUP_TABLE_NOT_FOUND, V2_LOOKUP_TABLE_DEACTIVATED, V2_LOOKUP_INDEX_OUT_OF_RANGE,
   * V2_LOOKUP_TABLES_UNRESOLVED).
   */
  SIGNER_V2_LOOKUP_TABLES: "SIGNER_V2_LOOKUP_TABLES",
  /** An RFQ v2 swap's lot or levels are not within the level set the webhook says it streamed (a webhook fault). */
  SIGNER_V2_LEVELS_NOT_CLAIMED: "SIGNER_V2_LEVELS_NOT_CLAIMED",
} as const;

export type SignerRefusalCode = (typeof SignerRefusalCode)[keyof typeof SignerRefusalCode];

/**
 * Why the rebalancer did not sign an order (src/rebalance/), where the reason is its own; beside these
 * it answers the fill rules' and the swap path's codes where the idea is theirs (MALFORMED_TRANSACTION,
 * LOOKUP_TABLES_NOT_SUPPORTED, INVALID_MAKER_ACCOUNT_USE, SIMULATION_FAILED, SIGNATURE_UNAVAILABLE,
 * SELF_TRADE, the inventory's, the issuer's).
 */
const RebalanceRefusalCode = {
  /** The operator answered an error code, or an order without a transaction. */
  REBALANCE_ORDER_WITHOUT_TRANSACTION: "REBALANCE_ORDER_WITHOUT_TRANSACTION",
  /** The order swaps other mints than the ones asked. */
  REBALANCE_ORDER_WRONG_PAIR: "REBALANCE_ORDER_WRONG_PAIR",
  /** The order's taker is not this maker. */
  REBALANCE_ORDER_WRONG_TAKER: "REBALANCE_ORDER_WRONG_TAKER",
  /** The order routes through a router the configuration excludes (rebalance.excludeRouters). */
  REBALANCE_ORDER_EXCLUDED_ROUTER: "REBALANCE_ORDER_EXCLUDED_ROUTER",
  /** The order's inAmount is more than the amount asked. */
  REBALANCE_ORDER_INPUT_EXCEEDED: "REBALANCE_ORDER_INPUT_EXCEEDED",
  /** The order's outAmount is below the trade's price limit. */
  REBALANCE_ORDER_PRICE_BELOW_LIMIT: "REBALANCE_ORDER_PRICE_BELOW_LIMIT",
  /** The order's expiry is past. */
  REBALANCE_ORDER_EXPIRED: "REBALANCE_ORDER_EXPIRED",
  /** The maker is not a signer of the order's transaction. */
  REBALANCE_MAKER_NOT_SIGNER: "REBALANCE_MAKER_NOT_SIGNER",
  /** An instruction would change the maker wallet's owner (System Assign and the like). */
  REBALANCE_WALLET_OWNER_CHANGED: "REBALANCE_WALLET_OWNER_CHANGED",
  /** An instruction would hand an authority over a maker account to someone else. */
  REBALANCE_AUTHORITY_HANDED_AWAY: "REBALANCE_AUTHORITY_HANDED_AWAY",
  /** An instruction would close a maker account to someone else. */
  REBALANCE_CLOSE_TO_STRANGER: "REBALANCE_CLOSE_TO_STRANGER",
  /** The order's router has no swap programs configured, or none of them is in the transaction. */
  REBALANCE_ROUTE_PROGRAM_MISSING: "REBALANCE_ROUTE_PROGRAM_MISSING",
  /** An instruction outside the router's allowlist. */
  REBALANCE_INSTRUCTION_NOT_ALLOWED: "REBALANCE_INSTRUCTION_NOT_ALLOWED",
  /** The order-engine fill is not the one the order describes. */
  REBALANCE_FILL_NOT_AS_ORDERED: "REBALANCE_FILL_NOT_AS_ORDERED",
  /** A maker account other than the trade's is writable. */
  REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT: "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
  /** The simulation could not be run (the RPC failed or did not answer). */
  REBALANCE_SIMULATION_UNAVAILABLE: "REBALANCE_SIMULATION_UNAVAILABLE",
  /** After the simulation a maker token account has another owner. */
  REBALANCE_OWNER_CHANGED: "REBALANCE_OWNER_CHANGED",
  /** After the simulation a maker token account has a delegate it did not have. */
  REBALANCE_DELEGATE_CHANGED: "REBALANCE_DELEGATE_CHANGED",
  /** After the simulation a maker token account has another close authority. */
  REBALANCE_CLOSE_AUTHORITY_CHANGED: "REBALANCE_CLOSE_AUTHORITY_CHANGED",
  /** The simulation spends more of the input than the order's inAmount. */
  REBALANCE_INPUT_EXCEEDED: "REBALANCE_INPUT_EXCEEDED",
  /** The simulation brings in less of the output than the order's outAmount. */
  REBALANCE_OUTPUT_BELOW_ORDER: "REBALANCE_OUTPUT_BELOW_ORDER",
  /** The simulation moves a token of the maker's that is neither the input nor the output. */
  REBALANCE_OTHER_TOKEN_MOVED: "REBALANCE_OTHER_TOKEN_MOVED",
  /** The simulation takes more SOL from the maker than the order's declared fees. */
  REBALANCE_SOL_LEFT_MAKER: "REBALANCE_SOL_LEFT_MAKER",
} as const;

export type RebalanceRefusalCode = (typeof RebalanceRefusalCode)[keyof typeof RebalanceRefusalCode];

export type RefusalCode =
  | FillRejectCode
  | SwapRefusalCode
  | InventoryRefusalCode
  | QuoteDeclineCode
  | V2RejectCode
  | SignerRefusalCode
  | RebalanceRefusalCode;

const ALL_CODES: ReadonlySet<string> = new Set<string>([
  ...Object.values(FillRejectCode),
  ...Object.values(SwapRefusalCode),
  ...Object.values(InventoryRefusalCode),
  ...Object.values(QuoteDeclineCode),
  ...Object.values(V2RejectCode),
  ...Object.values(SignerRefusalCode),
  ...Object.values(RebalanceRefusalCode),
]);

/** A code read from outside the process (the signer's wire) that this list holds. */
export const isRefusalCode = (code: string): code is RefusalCode => ALL_CODES.has(code);

/** Why something was refused: the code, and the context that names what broke (ids, amounts, the detail). */
export interface Refusal<C extends RefusalCode = RefusalCode> {
  code: C;
  context: string;
}

/** A verdict that refuses: `{ ok: false, code, context }`, the one shape every rule answers with. */
export type Refused<C extends RefusalCode = RefusalCode> = { ok: false } & Refusal<C>;

export const refusal = (code: RefusalCode, context: string): Refusal => ({ code, context });

/**
 * Why an RFQ v2 swap (SWAP_AVAILABLE) was not co-signed. The value is the name; logs, metric labels and
 * tests key on these strings: never rename or reuse one once released, only add.
 */
export const V2RejectCode = {
  /** The base64 or the transaction bytes cannot be read, or an instruction names an account out of range. */
  V2_MALFORMED_TRANSACTION: "V2_MALFORMED_TRANSACTION",
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
  /** The maker's key or token accounts appear outside the leg's own account slots. */
  V2_MAKER_NOT_EXCLUSIVE: "V2_MAKER_NOT_EXCLUSIVE",
  /** The pair is not one the maker streams, or its levels are withdrawn. */
  V2_PAIR_NOT_STREAMED: "V2_PAIR_NOT_STREAMED",
  /** Lot size, levels or prices match no level set the maker streamed that is still valid. */
  V2_LEVELS_NOT_STREAMED: "V2_LEVELS_NOT_STREAMED",
  /** expire_at is past, or later than the streamed levels' validity. */
  V2_EXPIRED: "V2_EXPIRED",
  /**
   * A lone leg's input is not the whole route input (bps 10,000, input index 0), a leg beside others
   * takes no share or more than all of its input (bps outside 1-10,000), or the input buys no whole lot.
   */
  V2_INVALID_AMOUNTS: "V2_INVALID_AMOUNTS",
  /** The maker cannot carry the fill's outflow (the inventory check). */
  V2_INVENTORY_INSUFFICIENT: "V2_INVENTORY_INSUFFICIENT",
  /** The swap id was signed before. */
  V2_DUPLICATE_SWAP: "V2_DUPLICATE_SWAP",
} as const;
export type V2RejectCode = (typeof V2RejectCode)[keyof typeof V2RejectCode];

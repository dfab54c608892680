/**
 * Every execute code of the operator's swap API (docs/contract.md, "Execute codes"), mapped to what
 * the caller may do next. The mapping is data (a table), so a code is never handled by accident in
 * a branch, and a code the table does not know is treated as the least safe outcome.
 *
 * - `landed`: the swap is on chain as ordered (code 0).
 * - `failedOnChain`: the transaction landed (a slot is reported) and failed: nothing was swapped, fees
 *   were paid. A new order is safe.
 * - `expired`: the quote expired before the operator executed it: nothing was sent. A new order is safe.
 * - `retrySafe`: refused before anything could be sent (a missing order, a bad or unsigned
 *   transaction, a payload or block height the operator refused, the maker's rejection): the signed
 *   transaction can never land, so a new order is safe.
 * - `notRetrySafe`: the fate is unknown (the "unknown" codes, a failure to land without a slot, an
 *   unmapped code, an answer lost in transport): the signed transaction may still land until its
 *   blockhash expires. Another order before then could double the trade.
 */

export type ExecuteOutcomeKind = "landed" | "failedOnChain" | "expired" | "retrySafe" | "notRetrySafe";

export interface ExecuteCodeInfo {
  /** The contract's name for the code. */
  meaning: string;
  group: "success" | "first-generation" | "aggregator" | "rfq";
  /**
   * The outcome. "failedToLand" codes are `failedOnChain` when the answer names the slot the
   * transaction failed in, and `notRetrySafe` without one (it may still land).
   */
  outcome: ExecuteOutcomeKind | "failedToLand";
}

export const EXECUTE_CODES: Readonly<Record<number, ExecuteCodeInfo>> = {
  0: { meaning: "success", group: "success", outcome: "landed" },
  [-1]: { meaning: "missing cached order", group: "first-generation", outcome: "retrySafe" },
  [-2]: { meaning: "invalid signed transaction", group: "first-generation", outcome: "retrySafe" },
  [-3]: { meaning: "invalid message bytes", group: "first-generation", outcome: "retrySafe" },
  [-1000]: { meaning: "failed to land", group: "aggregator", outcome: "failedToLand" },
  [-1001]: { meaning: "unknown", group: "aggregator", outcome: "notRetrySafe" },
  [-1002]: { meaning: "invalid transaction", group: "aggregator", outcome: "retrySafe" },
  [-1003]: { meaning: "not fully signed", group: "aggregator", outcome: "retrySafe" },
  [-1004]: { meaning: "invalid block height", group: "aggregator", outcome: "retrySafe" },
  [-2000]: { meaning: "failed to land", group: "rfq", outcome: "failedToLand" },
  [-2001]: { meaning: "unknown", group: "rfq", outcome: "notRetrySafe" },
  [-2002]: { meaning: "invalid payload", group: "rfq", outcome: "retrySafe" },
  [-2003]: { meaning: "quote expired", group: "rfq", outcome: "expired" },
  [-2004]: { meaning: "swap rejected", group: "rfq", outcome: "retrySafe" },
};

/** The outcome of one execute answer: its code, and for a failure to land whether a slot was named. */
export function outcomeOfCode(code: number, slot: string | undefined): ExecuteOutcomeKind {
  const info = EXECUTE_CODES[code];
  if (!info) return "notRetrySafe";
  if (info.outcome === "failedToLand") return slot ? "failedOnChain" : "notRetrySafe";
  return info.outcome;
}

/**
 * OperatorSwapApi port: the maker as a taker of the operator's own swap order and execute API
 * (docs/contract.md, "The operator's order and execute API"), used to rebalance inventory. Adapter:
 * http.ts (the operator's HTTP API; the sandbox's operator simulator is its local stand-in).
 *
 * Expected failures are values: an order the operator will not give, an execute
 * whose outcome is anything but landed. Only a programming error throws.
 */
import type { ExecuteOutcomeKind } from "./codes.ts";
import type { ExecuteResult, Router, SwapOrder } from "./wire.ts";

export interface OrderParams {
  inputMint: string;
  outputMint: string;
  /** ExactIn: the input amount, smallest units. */
  amount: bigint;
  /** The wallet that signs and pays: the maker's own. Absent: a price only (transaction null). */
  taker?: string;
  excludeRouters?: readonly Router[];
}

export type OrderResult =
  /** A parsed order; it may still carry `errorCode` with an empty transaction. */
  | { ok: true; order: SwapOrder; attempts: number }
  /** The operator answered 400 or 500 with `{error}` (or another status), after any retries. */
  | { ok: false; kind: "refused"; status: number; error: string; attempts: number }
  /** No answer within the timeout, or the connection failed, after the retries. */
  | { ok: false; kind: "unavailable"; error: string; attempts: number }
  /** A 200 whose body is not a swap order (the zod issues named). */
  | { ok: false; kind: "malformed"; error: string; attempts: number };

export interface ExecuteRequest {
  /** Base64 of the fully signed transaction (the maker's signature as taker). */
  signedTransaction: string;
  requestId: string;
  lastValidBlockHeight: bigint;
}

export interface ExecuteOutcome {
  kind: ExecuteOutcomeKind;
  /** The execute code, when the operator gave one. */
  code?: number;
  /** The contract's name for the code, or what happened on the way (timeout, unreadable answer). */
  meaning: string;
  signature?: string;
  slot?: string;
  error?: string;
  /** The full answer when it parsed as an execute result. */
  result?: ExecuteResult;
  /** HTTP attempts made with these same signed bytes. */
  attempts: number;
}

export interface OperatorSwapApi {
  order(params: OrderParams): Promise<OrderResult>;
  /**
   * Submits one signed transaction. Resends only the same signed bytes (the chain runs one
   * transaction at most once), and never reports a resend's refusal as safe when an earlier attempt's
   * fate is unknown.
   */
  execute(req: ExecuteRequest): Promise<ExecuteOutcome>;
}

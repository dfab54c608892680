/**
 * The simulator's own endpoints, shaped as the operator's order and execute API: the swap order
 * returned by GET /ultra/v1/order and the swap execute result of the execute endpoints.
 */

/** Element of `routePlan`. */
export interface RouteStep {
  swapInfo: {
    ammKey: string;
    label: string;
    inputMint: string;
    outputMint: string;
    inAmount: string;
    outAmount: string;
  };
  percent: number;
  bps: number;
  usdValue?: number;
}

/** GET /ultra/v1/order answer. Fields without `?` are the seed's required (R) fields. */
export interface SwapOrder {
  mode: string;
  inputMint: string;
  outputMint: string;
  inAmount: string;
  outAmount: string;
  inUsdValue?: number;
  outUsdValue?: number;
  priceImpact?: number;
  swapUsdValue?: number;
  otherAmountThreshold: string;
  swapMode: "ExactIn" | "ExactOut";
  slippageBps: number;
  /** Deprecated; kept for backwards compatibility. */
  priceImpactPct: string;
  routePlan: RouteStep[];
  referralAccount?: string;
  feeMint?: string;
  feeBps: number;
  platformFee: { amount?: string; feeBps: number };
  signatureFeeLamports: number;
  signatureFeePayer: string | null;
  prioritizationFeeLamports: number;
  prioritizationFeePayer: string | null;
  rentFeeLamports: number;
  rentFeePayer: string | null;
  /** Deprecated in favour of router. */
  swapType: string;
  router: "router_1" | "router_2" | "router_3" | "router_4";
  /** Unsigned base64 transaction; null without a taker; "" when an error code applies. */
  transaction: string | null;
  gasless: boolean;
  requestId: string;
  /** ms spent building the answer. */
  totalTime: number;
  taker: string | null;
  quoteId?: string;
  maker?: string;
  /** Unix seconds (the fill's expire_at), as a string. */
  expireAt?: string;
  errorCode?: 1 | 2 | 3;
  errorMessage?: string;
}

export interface SwapEvent {
  inputMint: string;
  inputAmount: string;
  outputMint: string;
  outputAmount: string;
}

/** POST /ultra/v1/execute and /swap/v2/execute answer. */
export interface ExecuteResult {
  status: "Success" | "Failed";
  signature?: string;
  slot?: string;
  error?: string;
  code: number;
  totalInputAmount?: string;
  totalOutputAmount?: string;
  inputAmountResult?: string;
  outputAmountResult?: string;
  swapEvents?: SwapEvent[];
}

/** Execute codes (seed, "Errors"): first-generation order flow, and the RFQ router's. */
export const ExecuteCode = {
  SUCCESS: 0,
  MISSING_CACHED_ORDER: -1,
  INVALID_SIGNED_TRANSACTION: -2,
  INVALID_MESSAGE_BYTES: -3,
  RFQ_FAILED_TO_LAND: -2000,
  RFQ_UNKNOWN: -2001,
  RFQ_INVALID_PAYLOAD: -2002,
  RFQ_QUOTE_EXPIRED: -2003,
  RFQ_SWAP_REJECTED: -2004,
} as const;

/**
 * The ledger's record of one /swap answer (records.ts), built from what the swap path learned on the
 * way to it: the quote, the validated fill, the message hash, and the refusal as a value.
 */
import { createHash } from "node:crypto";
import type { Config } from "../../config/load.ts";
import type { SwapRequest, SwapResponse } from "../contract/swap.ts";
import type { StoredQuote } from "../quote-store/interface.ts";
import type { Refusal } from "../refusal/codes.ts";
import { decisionKey } from "./ledger.ts";
import { pairSide } from "./pairs.ts";
import type { DecisionRecord } from "./records.ts";

/** What the ledger records of a validated fill (src/fill/validate.ts gives it): who took it, what moved, the fee. */
export interface FilledTerms {
  taker: { toBase58(): string };
  inputAmount: bigint;
  outputAmount: bigint;
  feeBps: number;
  feeMint: { toBase58(): string };
  feeOwed: bigint;
}

/** What a request revealed before it was answered. */
export interface DecisionSeen {
  /** When the request arrived (ms epoch). */
  receivedAtMs?: number;
  messageHash?: string;
  quote?: StoredQuote;
  fill?: FilledTerms;
}

export function decisionRecord(
  config: Config,
  req: SwapRequest,
  { response, refusal }: { response: SwapResponse; refusal?: Refusal | undefined },
  seen: DecisionSeen,
  receivedAtMs: number,
  decidedAtMs: number,
): DecisionRecord {
  const { quote, fill } = seen;
  const hash = seen.messageHash ?? createHash("sha256").update(req.transaction).digest("hex");
  const state = response.state;
  const where = quote ? pairSide(config, quote.request.tokenIn, quote.request.tokenOut) : undefined;
  const taker = fill?.taker.toBase58() ?? quote?.taker;
  return {
    kind: "decision",
    decisionKey: decisionKey(req.quoteId, hash),
    quoteId: req.quoteId,
    requestId: req.requestId,
    ...(taker ? { taker } : {}),
    ...(where ? { pair: where.pair, side: where.side } : {}),
    ...(quote
      ? {
          quote: {
            inputMint: quote.request.tokenIn,
            outputMint: quote.request.tokenOut,
            amountIn: quote.response.amountIn,
            amountOut: quote.response.amountOut,
            quoteType: quote.request.quoteType,
            ...(quote.taker ? { taker: quote.taker } : {}),
            feeBps: quote.feeBps,
            createdAtMs: quote.createdAtMs,
            expiresAtMs: quote.expiresAtMs,
          },
        }
      : {}),
    ...(fill
      ? {
          filledAmountIn: fill.inputAmount.toString(),
          filledAmountOut: fill.outputAmount.toString(),
          feeBps: fill.feeBps,
          feeMint: fill.feeMint.toBase58(),
          feeOwed: fill.feeOwed.toString(),
        }
      : {}),
    decision: state === "accepted" ? "accepted" : state === "rejected" ? "rejected" : "rejectedWithReason",
    ...(refusal ? { refusal } : {}),
    ...(seen.messageHash ? { messageHash: seen.messageHash } : {}),
    ...(response.txSignature ? { txSignature: response.txSignature } : {}),
    receivedAtMs,
    decidedAtMs,
  };
}

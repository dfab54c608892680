/** StoredQuote records as the quote path writes them, for fill tests. */
import type { PublicKey } from "@solana/web3.js";
import type { QuoteType } from "../../src/contract/quote.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";

export const MINT = {
  SOL: "So11111111111111111111111111111111111111112",
  USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  USDT: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  JUP: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
} as const;

let seq = 0;

export function storedQuote(q: {
  maker: PublicKey;
  taker?: PublicKey;
  receiver?: PublicKey;
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
  amountOut: bigint;
  quoteType: QuoteType;
  feeBps: number;
  createdAtMs: number;
  ttlMs?: number;
  prioritizationFee?: number;
}): StoredQuote {
  seq += 1;
  const quoteId = `quote-${seq}`;
  const requestId = `request-${seq}`;
  const taker = q.taker?.toBase58();
  const receiver = q.receiver?.toBase58();
  return {
    quoteId,
    requestId,
    request: {
      requestId,
      quoteId,
      tokenIn: q.tokenIn,
      tokenOut: q.tokenOut,
      amount: String(q.quoteType === "exactIn" ? q.amountIn : q.amountOut),
      quoteType: q.quoteType,
      protocol: "v1",
      feeBps: q.feeBps,
      taker,
      suggestedPrioritizationFees: q.prioritizationFee,
      isWsol: undefined,
      receiver,
    },
    response: {
      requestId,
      quoteId,
      tokenIn: q.tokenIn,
      tokenOut: q.tokenOut,
      quoteType: q.quoteType,
      protocol: "v1",
      amountIn: String(q.amountIn),
      amountOut: String(q.amountOut),
      maker: q.maker.toBase58(),
      ...(taker ? { taker } : {}),
      ...(receiver ? { receiver } : {}),
      ...(q.prioritizationFee !== undefined ? { prioritizationFeeToUse: q.prioritizationFee } : {}),
    },
    feeBps: q.feeBps,
    taker,
    permissioned: false,
    createdAtMs: q.createdAtMs,
    expiresAtMs: q.createdAtMs + (q.ttlMs ?? 55_000),
  };
}

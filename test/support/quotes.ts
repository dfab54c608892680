/** Quote request bodies as the operator sends them, and quotes as the service stores them. */
import { randomUUID } from "node:crypto";
import type { PublicKey } from "@solana/web3.js";
import type { QuoteType } from "../../pricing/book.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { MINT } from "./config.ts";

export function quoteBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    requestId: randomUUID(),
    quoteId: randomUUID(),
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amount: "1000000",
    quoteType: "exactIn",
    protocol: "v1",
    feeBps: 10,
    ...over,
  };
}

export function jsonPost(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    // A deadline budget no loaded test machine misses (the deadline rules: test/http/deadline.test.ts);
    // a test about deadlines passes its own headers.
    headers: { "content-type": "application/json", "x-request-timeout": "10000", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

/** A response body as loosely typed JSON (tests assert on its shape). */
// biome-ignore lint/suspicious/noExplicitAny: test helper for asserting on arbitrary JSON
export const readJson = async (res: Response): Promise<any> => res.json();

let seq = 0;

/**
 * A StoredQuote as the quote path writes it. Ids are numbered per process unless given; the taker,
 * receiver and prioritization fee appear only when given.
 */
export function storedQuote(q: {
  quoteId?: string;
  requestId?: string;
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
  const quoteId = q.quoteId ?? `quote-${seq}`;
  const requestId = q.requestId ?? `request-${seq}`;
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

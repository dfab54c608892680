/**
 * QuoteStore port: every quote we answered, kept until its expiry (plus a grace period so a late
 * `/swap` learns "expired" rather than "unknown"), and the once-only claim a swap takes on it.
 *
 * Adapters: memory.ts (embedded default, one process) and redis.ts (production, shared by every
 * instance). Both pass test/quote-store/contract.ts.
 */
import type { QuoteRequest, QuoteResponse } from "../contract/quote.ts";
import type { SwapResponse } from "../contract/swap.ts";

export interface StoredQuote {
  quoteId: string;
  requestId: string;
  /** The request as parsed (quoteType normalised). */
  request: QuoteRequest;
  /** Exactly what we answered; amounts are the signed-over truth for the swap. */
  response: QuoteResponse;
  feeBps: number;
  taker?: string;
  permissioned: boolean;
  createdAtMs: number;
  /** After this instant the quote may not be filled (creation + quote TTL). */
  expiresAtMs: number;
}

/**
 * The StoredQuote of `request` answered with `response`: its ids, fee and taker are the request's.
 * The quote path stores it (src/quote/service.ts) and the compact record is read back through it.
 */
export function storedQuoteOf(
  request: QuoteRequest,
  response: QuoteResponse,
  permissioned: boolean,
  createdAtMs: number,
  expiresAtMs: number,
): StoredQuote {
  // The taker only when there is one (no key at all otherwise).
  return request.taker
    ? {
        quoteId: request.quoteId,
        requestId: request.requestId,
        request,
        response,
        feeBps: request.feeBps,
        taker: request.taker,
        permissioned,
        createdAtMs,
        expiresAtMs,
      }
    : {
        quoteId: request.quoteId,
        requestId: request.requestId,
        request,
        response,
        feeBps: request.feeBps,
        permissioned,
        createdAtMs,
        expiresAtMs,
      };
}

/** What a swap left on its quote: the message it signed over and, once decided, the answer it gave. */
export interface ClaimRecord {
  /** sha256 (hex) of the fill transaction's message bytes. */
  messageHash: string;
  claimedAtMs: number;
  /** Present once the swap has an answer; a duplicate with the same message receives this again. */
  outcome?: SwapResponse;
}

export type ClaimResult =
  /** This caller holds the quote now and alone may sign for it. */
  | { kind: "claimed" }
  /** Someone claimed first; compare `existing.messageHash` to decide what to answer. */
  | { kind: "taken"; existing: ClaimRecord };

export interface QuoteStore {
  /**
   * Stores a quote; it stays readable until the store's retention (`limits.quoteRetainAfterExpiryMs`)
   * past `expiresAtMs`, or, once claimed, as long as its claim (CLAIM_RETAIN_MS). The
   * operator may send a quoteId again (docs/contract.md, "POST /quote": its acceptance suite reuses one id
   * for every quote): a later answer replaces the earlier one as what `/swap` is checked against,
   * until a swap has claimed the quoteId. Returns false, storing nothing, when a claim exists: a quote
   * a swap has claimed is never re-opened. Atomic with `claim` (no put can slip in after a claim).
   */
  put(quote: StoredQuote): Promise<boolean>;
  get(quoteId: string): Promise<StoredQuote | undefined>;
  /**
   * The exactly-once step: atomically records the claim if none exists. Across every instance
   * sharing the store, at most one caller ever gets `claimed` for a quoteId.
   */
  claim(quoteId: string, messageHash: string, nowMs: number): Promise<ClaimResult>;
  /**
   * One message, one quote: binds a fill message (sha256 hex of its bytes) to the first quoteId it is
   * presented with, atomically across every instance, and returns the quoteId it is bound to (this
   * one, or the first). A binding is kept as long as a claim (CLAIM_RETAIN_MS).
   */
  bindMessage(messageHash: string, quoteId: string): Promise<string>;
  /**
   * Gives a claimed quote back, when the claim's swap ended without sending anything (its pre-flight
   * simulation failed): removes the claim and its answer if, and only if, the claim is still this
   * message's. Returns whether it did. Atomic across instances.
   */
  releaseClaim(quoteId: string, messageHash: string): Promise<boolean>;
  /** Attaches the final answer to an existing claim (idempotent retries read it back). */
  recordOutcome(quoteId: string, outcome: SwapResponse): Promise<void>;
  /** Reachability for /ready. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * How long an unclaimed quote stays readable after its expiry, unless configured
 * (`limits.quoteRetainAfterExpiryMs`; config/schema.ts says why).
 */
export const DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS = 30_000;

/** How long a claim (and the answer it produced) is remembered: well past any quote's life. */
export const CLAIM_RETAIN_MS = 60 * 60_000;

/**
 * In-memory QuoteStore: the embedded default for a single instance. Bounded (oldest quotes evicted
 * first) and self-expiring. Claims, and a put's check for a claim, are atomic because the event loop
 * runs one callback at a time.
 * Not shared between processes: production uses redis.ts.
 */
import type { SwapResponse } from "../contract/swap.ts";
import {
  CLAIM_RETAIN_MS,
  type ClaimRecord,
  type ClaimResult,
  DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS,
  type QuoteStore,
  type StoredQuote,
} from "./interface.ts";

interface Entry {
  quote: StoredQuote;
  dropAtMs: number;
}

interface ClaimEntry {
  record: ClaimRecord;
  dropAtMs: number;
  /** The claimed quote, kept with its claim so a retried /swap finds it after the quote's retention. */
  quote?: StoredQuote;
}

export class MemoryQuoteStore implements QuoteStore {
  /** Insertion order is creation order, so the head is always the oldest quote. */
  private readonly quotes = new Map<string, Entry>();
  /** Claims outlive their quotes (CLAIM_RETAIN_MS) so a late duplicate still finds the first answer. */
  private readonly claims = new Map<string, ClaimEntry>();
  /** Message hash -> the quoteId it was first presented with; kept as long as claims. */
  private readonly bindings = new Map<string, { quoteId: string; dropAtMs: number }>();

  constructor(
    private readonly maxQuotes = 200_000,
    private readonly now: () => number = Date.now,
    private readonly retainAfterExpiryMs = DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS,
  ) {}

  async put(quote: StoredQuote): Promise<boolean> {
    this.sweep();
    this.sweepClaims();
    if (this.claims.has(quote.quoteId)) return false;
    // A repeat replaces the earlier answer; re-inserting keeps the map in creation order.
    const earlier = this.quotes.get(quote.quoteId);
    if (earlier) this.quotes.delete(quote.quoteId);
    while (this.quotes.size >= this.maxQuotes) this.dropOldest();
    this.quotes.set(quote.quoteId, { quote, dropAtMs: quote.expiresAtMs + this.retainAfterExpiryMs });
    return true;
  }

  async get(quoteId: string): Promise<StoredQuote | undefined> {
    const quote = this.live(quoteId)?.quote;
    if (quote) return quote;
    const claim = this.claims.get(quoteId);
    return claim && claim.dropAtMs > this.now() ? claim.quote : undefined;
  }

  async claim(quoteId: string, messageHash: string, nowMs: number): Promise<ClaimResult> {
    this.sweepClaims();
    const existing = this.claims.get(quoteId);
    if (existing) return { kind: "taken", existing: { ...existing.record } };
    const quote = this.live(quoteId)?.quote;
    this.claims.set(quoteId, {
      record: { messageHash, claimedAtMs: nowMs },
      dropAtMs: this.now() + CLAIM_RETAIN_MS,
      ...(quote ? { quote } : {}),
    });
    return { kind: "claimed" };
  }

  async bindMessage(messageHash: string, quoteId: string): Promise<string> {
    const now = this.now();
    for (const [hash, b] of this.bindings) {
      if (b.dropAtMs > now) break;
      this.bindings.delete(hash);
    }
    const existing = this.bindings.get(messageHash);
    if (existing) return existing.quoteId;
    this.bindings.set(messageHash, { quoteId, dropAtMs: now + CLAIM_RETAIN_MS });
    return quoteId;
  }

  async releaseClaim(quoteId: string, messageHash: string): Promise<boolean> {
    const entry = this.claims.get(quoteId);
    if (!entry || entry.record.messageHash !== messageHash) return false;
    this.claims.delete(quoteId);
    return true;
  }

  async recordOutcome(quoteId: string, outcome: SwapResponse): Promise<void> {
    const entry = this.claims.get(quoteId);
    if (entry) entry.record.outcome = outcome;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.quotes.clear();
    this.claims.clear();
    this.bindings.clear();
  }

  get size(): number {
    return this.quotes.size;
  }

  private live(quoteId: string): Entry | undefined {
    const e = this.quotes.get(quoteId);
    if (e && e.dropAtMs <= this.now()) {
      this.quotes.delete(quoteId);
      return undefined;
    }
    return e;
  }

  /** Drops expired quotes from the head; amortised O(1) per put since the map is in creation order. */
  private sweep(): void {
    const now = this.now();
    for (const [id, e] of this.quotes) {
      if (e.dropAtMs > now) break;
      this.quotes.delete(id);
    }
  }

  private sweepClaims(): void {
    const now = this.now();
    for (const [id, c] of this.claims) {
      if (c.dropAtMs > now) break;
      this.claims.delete(id);
    }
  }

  private dropOldest(): void {
    const first = this.quotes.entries().next();
    if (!first.done) this.quotes.delete(first.value[0]);
  }
}

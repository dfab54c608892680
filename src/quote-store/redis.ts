/**
 * Redis QuoteStore: production, shared by every instance.
 *
 * Keys carry the quoteId (or the message hash) as a hash tag so that everything one operation touches
 * lives in one slot and the same commands run unchanged on Redis Cluster:
 *   <prefix>{<quoteId>}:q        the StoredQuote as JSON, expiring with the quote + the retention
 *                                (`limits.quoteRetainAfterExpiryMs`); once claimed, with the claim
 *   <prefix>{<quoteId>}:claim    the claim record (SET NX: the exactly-once step)
 *   <prefix>{<quoteId>}:outcome  the answer the claimed swap gave
 *   <prefix>{<messageHash>}:msg  the quoteId a fill message was first presented with (SET NX)
 *
 * One key per quote answered: that is what /swap needs (the quote until it expires) and nothing else.
 * Claims, outcomes and message bindings exist only for swaps, a small fraction of quotes, and live
 * CLAIM_RETAIN_MS (replay protection and idempotent retries).
 *
 * A repeated quoteId replaces the stored quote unless a swap has claimed it: one Lua script checks
 * the claim key and writes the quote key (both under the quoteId's hash tag), so no put can land
 * between a claim and its swap.
 */

import { Cluster } from "ioredis";
import type { SwapResponse } from "../contract/swap.ts";
import type { RedisClient } from "../redis/client.ts";
import {
  CLAIM_RETAIN_MS,
  type ClaimRecord,
  type ClaimResult,
  DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS,
  type QuoteStore,
  type StoredQuote,
} from "./interface.ts";

/** KEYS: quote, claim. ARGV: quote JSON, TTL ms. 1 = stored, 0 = the quoteId is claimed. */
const PUT_UNLESS_CLAIMED = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS: claim, outcome. ARGV: message hash. 1 = released, 0 = no claim, or another message's. */
const RELEASE_CLAIM = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if cjson.decode(raw).messageHash ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`;

/** One of a quote's keys, built alone (the store reads and writes them one or two at a time). */
const quoteKey = (prefix: string, quoteId: string, kind: "q" | "claim" | "outcome") =>
  `${prefix}{${quoteId}}:${kind}`;

/**
 * The keys of one quote, all under the quoteId's hash tag: the put script (quote + claim) and the
 * release script (claim + outcome) touch them together, so they must share a cluster slot.
 */
export function quoteKeys(prefix: string, quoteId: string) {
  return {
    quote: quoteKey(prefix, quoteId, "q"),
    claim: quoteKey(prefix, quoteId, "claim"),
    outcome: quoteKey(prefix, quoteId, "outcome"),
  };
}

interface Scripted {
  rfqPutQuote(quoteKey: string, claimKey: string, json: string, ttlMs: number): Promise<number>;
  rfqReleaseClaim(claimKey: string, outcomeKey: string, messageHash: string): Promise<number>;
}

export interface RedisQuoteStoreOptions {
  /** The clock the retention counts from (default Date.now). */
  now?: () => number;
  /** `limits.quoteRetainAfterExpiryMs` (default DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS). */
  retainAfterExpiryMs?: number;
}

export class RedisQuoteStore implements QuoteStore {
  private readonly now: () => number;
  private readonly retainAfterExpiryMs: number;
  private corked = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = "rfq:",
    opts: RedisQuoteStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.retainAfterExpiryMs = opts.retainAfterExpiryMs ?? DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS;
    // defineCommand sends EVALSHA and falls back to EVAL once per connection: the script stays cached.
    if (!("rfqPutQuote" in redis))
      redis.defineCommand("rfqPutQuote", { numberOfKeys: 2, lua: PUT_UNLESS_CLAIMED });
    if (!("rfqReleaseClaim" in redis))
      redis.defineCommand("rfqReleaseClaim", { numberOfKeys: 2, lua: RELEASE_CLAIM });
  }

  /**
   * Holds the connection's writes until the event loop's check phase, so the puts of every quote parsed
   * in one poll phase leave in one system call (what it buys: docs/capacity.md, "Speed constructs
   * kept"). A Cluster
   * client has one socket per node, so its puts are written one by one.
   */
  private corkForTurn(): void {
    if (this.corked) return;
    const stream = (this.redis as { stream?: import("node:net").Socket }).stream;
    if (!stream || this.redis instanceof Cluster) return;
    this.corked = true;
    stream.cork();
    setImmediate(() => {
      this.corked = false;
      stream.uncork();
    });
  }

  private quoteKey(quoteId: string) {
    return quoteKey(this.prefix, quoteId, "q");
  }
  private claimKey(quoteId: string) {
    return quoteKey(this.prefix, quoteId, "claim");
  }
  private outcomeKey(quoteId: string) {
    return quoteKey(this.prefix, quoteId, "outcome");
  }
  private messageKey(messageHash: string) {
    return `${this.prefix}{${messageHash}}:msg`;
  }

  /** Stores the quote unless its quoteId is claimed (true), or refuses (false). */
  async put(quote: StoredQuote): Promise<boolean> {
    this.corkForTurn();
    const ttl = Math.max(1, quote.expiresAtMs + this.retainAfterExpiryMs - this.now());
    const json = JSON.stringify(quote);
    const stored = await (this.redis as unknown as Scripted).rfqPutQuote(
      this.quoteKey(quote.quoteId),
      this.claimKey(quote.quoteId),
      json,
      ttl,
    );
    return stored === 1;
  }

  async get(quoteId: string): Promise<StoredQuote | undefined> {
    const raw = await this.redis.get(this.quoteKey(quoteId));
    return raw ? (JSON.parse(raw) as StoredQuote) : undefined;
  }

  async claim(quoteId: string, messageHash: string, nowMs: number): Promise<ClaimResult> {
    const record: ClaimRecord = { messageHash, claimedAtMs: nowMs };
    const key = this.claimKey(quoteId);
    // Two tries: the second covers a claim that expired between our failed SET NX and the GET.
    for (let attempt = 0; attempt < 2; attempt++) {
      const set = await this.redis.set(key, JSON.stringify(record), "PX", CLAIM_RETAIN_MS, "NX");
      if (set === "OK") {
        // A claimed quote is kept as long as its claim, so a retried /swap reads it and gets the
        // recorded answer (put never rewrites a claimed quote, so this TTL stays).
        await this.redis.pexpire(this.quoteKey(quoteId), CLAIM_RETAIN_MS);
        return { kind: "claimed" };
      }
      const [claimRaw, outcomeRaw] = await this.redis.mget(key, this.outcomeKey(quoteId));
      if (claimRaw) {
        const existing = JSON.parse(claimRaw) as ClaimRecord;
        if (outcomeRaw) existing.outcome = JSON.parse(outcomeRaw) as SwapResponse;
        return { kind: "taken", existing };
      }
    }
    throw new Error(`claim on ${quoteId} neither set nor readable`);
  }

  async bindMessage(messageHash: string, quoteId: string): Promise<string> {
    const key = this.messageKey(messageHash);
    // Two tries, as for a claim: the second covers a binding that expired between SET NX and GET.
    for (let attempt = 0; attempt < 2; attempt++) {
      if ((await this.redis.set(key, quoteId, "PX", CLAIM_RETAIN_MS, "NX")) === "OK") return quoteId;
      const bound = await this.redis.get(key);
      if (bound !== null) return bound;
    }
    throw new Error(`message binding for ${messageHash} neither set nor readable`);
  }

  async releaseClaim(quoteId: string, messageHash: string): Promise<boolean> {
    const released = await (this.redis as unknown as Scripted).rfqReleaseClaim(
      this.claimKey(quoteId),
      this.outcomeKey(quoteId),
      messageHash,
    );
    return released === 1;
  }

  async recordOutcome(quoteId: string, outcome: SwapResponse): Promise<void> {
    await this.redis.set(this.outcomeKey(quoteId), JSON.stringify(outcome), "PX", CLAIM_RETAIN_MS);
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.redis.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // The connection belongs to whoever created it (main.ts shares it between ports).
  }
}

/**
 * Redis QuoteStore: production, shared by every instance.
 *
 * Keys carry the quoteId (or the message hash) as a hash tag so that everything one operation touches
 * lives in one slot and the same commands run unchanged on Redis Cluster:
 *   <prefix>{<quoteId>}:q        the StoredQuote as JSON (compact by default: codec.ts), expiring with the quote + the retention
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
 * between a claim and its swap. Outside a cluster the quote path's puts of one turn share one script
 * (`put`), whose keys span slots: a single node has none.
 */

import { Cluster } from "ioredis";
import type { SwapResponse } from "../contract/swap.ts";
import type { RedisClient } from "../redis/client.ts";
import { clientSockets, WriteCoalescer } from "../redis/coalesce.ts";
import { decodeStoredQuote, encodeStoredQuote, type QuoteStoreFormat } from "./codec.ts";
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

/**
 * The puts of one turn of the event loop, on a single node (or a Sentinel-found master): KEYS quote1,
 * claim1, quote2, claim2, ...; ARGV json1, ttl1, json2, ttl2, ... Each pair is PUT_UNLESS_CLAIMED, in
 * order, and answers on its own: 1 stored, 0 claimed, or the error Redis gave its SET (pcall: an
 * "OOM ..." under maxmemory fails that quote alone, as its own command would have).
 */
const PUT_MANY_UNLESS_CLAIMED = `
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then
    out[#out + 1] = 0
  else
    local r = redis.pcall('SET', KEYS[i], ARGV[i], 'PX', ARGV[i + 1])
    if type(r) == 'table' and r.err then out[#out + 1] = r.err else out[#out + 1] = 1 end
  end
end
return out
`;

/** The most puts one PUT_MANY_UNLESS_CLAIMED carries: Redis runs nothing else while a script runs. */
export const MAX_PUTS_PER_COMMAND = 128;

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
  /** numKeys, then the keys, then the arguments (defined without a fixed number of keys). */
  rfqPutQuotes(...args: Array<string | number>): Promise<Array<number | string>>;
}

/** The puts waiting for the end of this turn: one command carries them all. */
interface PutBatch {
  keys: string[];
  argv: Array<string | number>;
  waiters: Array<{ resolve: (stored: boolean) => void; reject: (e: unknown) => void }>;
}

export interface RedisQuoteStoreOptions {
  /** The clock the retention counts from (default Date.now). */
  now?: () => number;
  /** `limits.quoteRetainAfterExpiryMs` (default DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS). */
  retainAfterExpiryMs?: number;
  /** `limits.quoteStoreFormat`: how quotes are written (codec.ts; read in either). Default compact. */
  format?: QuoteStoreFormat;
}

export class RedisQuoteStore implements QuoteStore {
  private readonly now: () => number;
  private readonly retainAfterExpiryMs: number;
  private readonly format: QuoteStoreFormat;
  /** One command per turn for the quote path's puts: not on a cluster, whose quotes' keys span slots. */
  private readonly batched: boolean;
  private pending: PutBatch | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = "rfq:",
    opts: RedisQuoteStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.retainAfterExpiryMs = opts.retainAfterExpiryMs ?? DEFAULT_QUOTE_RETAIN_AFTER_EXPIRY_MS;
    this.format = opts.format ?? "compact";
    // defineCommand sends EVALSHA and falls back to EVAL once per connection: the script stays cached.
    if (!("rfqPutQuote" in redis))
      redis.defineCommand("rfqPutQuote", { numberOfKeys: 2, lua: PUT_UNLESS_CLAIMED });
    if (!("rfqReleaseClaim" in redis))
      redis.defineCommand("rfqReleaseClaim", { numberOfKeys: 2, lua: RELEASE_CLAIM });
    if (!("rfqPutQuotes" in redis)) redis.defineCommand("rfqPutQuotes", { lua: PUT_MANY_UNLESS_CLAIMED });
    this.batched = !(redis instanceof Cluster);
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

  /** On a cluster, the quote path's puts leave in one write per turn (src/redis/coalesce.ts). */
  readonly coalescer = new WriteCoalescer(() => clientSockets(this.redis));
  /** Elsewhere, in one command per turn: the commands sent, and the puts they carried. */
  readonly batchStats = { commands: 0, puts: 0 };

  /**
   * Stores the quote unless its quoteId is claimed (true), or refuses (false). On a single node or a
   * Sentinel-found master, the puts of one turn of the event loop go to Redis as one script
   * (PUT_MANY_UNLESS_CLAIMED) once the turn's I/O callbacks have run, each answered on its own; a turn
   * with one put sends the one-quote script. On a cluster the quotes' keys span slots, so each put
   * is its own script, the turn's scripts corked into one write per master.
   *
   * One command instead of one per quote saves the Redis client's per-command work (the command
   * object, its encoding, its reply): about 4% of the webhook's CPU per quote at 4,000/s in paired
   * whole-request runs (`bench:quote-ab --http`, docs/performance.md). Redis' own CPU did not move.
   */
  put(quote: StoredQuote): Promise<boolean> {
    const ttl = Math.max(1, quote.expiresAtMs + this.retainAfterExpiryMs - this.now());
    const quoteKey = this.quoteKey(quote.quoteId);
    const claimKey = this.claimKey(quote.quoteId);
    let json: string;
    try {
      json = encodeStoredQuote(quote, this.format);
    } catch (e) {
      // A rejected promise, as from every other failure of a put, never a throw.
      return Promise.reject(e);
    }
    if (!this.batched) {
      this.coalescer.hold();
      return this.putOne(quoteKey, claimKey, json, ttl);
    }
    let batch = this.pending;
    if (!batch) {
      batch = this.pending = { keys: [], argv: [], waiters: [] };
      setImmediate(this.flush);
    }
    batch.keys.push(quoteKey, claimKey);
    batch.argv.push(json, ttl);
    const b = batch;
    const stored = new Promise<boolean>((resolve, reject) => b.waiters.push({ resolve, reject }));
    // A full command leaves now, so that no one script holds Redis for long.
    if (b.waiters.length >= MAX_PUTS_PER_COMMAND) this.flush();
    return stored;
  }

  private async putOne(quoteKey: string, claimKey: string, json: string, ttl: number) {
    const stored = await (this.redis as unknown as Scripted).rfqPutQuote(quoteKey, claimKey, json, ttl);
    return stored === 1;
  }

  /** After this turn's I/O callbacks (so after every request read in it): the turn's puts, sent. */
  private readonly flush = (): void => {
    const batch = this.pending;
    if (!batch) return;
    this.pending = undefined;
    const { keys, argv, waiters } = batch;
    this.batchStats.commands++;
    this.batchStats.puts += waiters.length;
    if (waiters.length === 1) {
      const w = waiters[0] as PutBatch["waiters"][number];
      this.putOne(keys[0] as string, keys[1] as string, argv[0] as string, argv[1] as number).then(
        w.resolve,
        w.reject,
      );
      return;
    }
    (this.redis as unknown as Scripted).rfqPutQuotes(keys.length, ...keys, ...argv).then(
      (results) => {
        for (let i = 0; i < waiters.length; i++) {
          const w = waiters[i] as PutBatch["waiters"][number];
          const r = results[i];
          if (r === 1 || r === 0) w.resolve(r === 1);
          else w.reject(new Error(typeof r === "string" ? r : `unexpected put reply ${String(r)}`));
        }
      },
      (e: unknown) => {
        for (const w of waiters) w.reject(e);
      },
    );
  };

  async get(quoteId: string): Promise<StoredQuote | undefined> {
    const raw = await this.redis.get(this.quoteKey(quoteId));
    return raw ? decodeStoredQuote(raw) : undefined;
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

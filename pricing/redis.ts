/**
 * Prices from the maker's own pricing engine, through Redis. The engine writes each pair's latest
 * price to a key and publishes it on a channel (`publishPrice` below does both in one MULTI):
 *
 *   SET <keyPrefix><BASE/QUOTE> <payload>     PUBLISH <channel> <payload>
 *
 * payload (JSON): {"pair":"SOL/USDC","ts":<ms epoch of the price>,"mid":"180.25"}
 *   or a full ladder: {"pair":..,"ts":..,"bids":[{"upToBase":"10000000000","price":"180.10"},..],
 *                      "asks":[{"upToBase":"10000000000","price":"180.40"},..]} (mid optional)
 *
 * Every instance keeps the latest payload per pair in memory: pub/sub delivers an update at once, and
 * a poll (a GET per pair every `pollMs`) catches anything the subscriber missed while reconnecting. Staleness is
 * measured from `ts`, the engine's own clock: an engine that stops writing makes the pairs go stale.
 */
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { z } from "zod";
import { compareRatio, parseDecimal, type Ratio } from "../amounts/decimal.ts";
import { decimalString, u64String } from "../config/schema.ts";
import type { LadderLevel, PricePoint, PriceSource } from "./interface.ts";
import { subscriberOf } from "./subscriber.ts";

const levelWire = z.object({ upToBase: u64String, price: decimalString });

export const redisPricePayload = z
  .object({
    pair: z.string().optional(),
    ts: z.number().int().nonnegative(),
    mid: decimalString.optional(),
    bids: z.array(levelWire).min(1).optional(),
    asks: z.array(levelWire).min(1).optional(),
  })
  .refine((p) => p.mid !== undefined || (p.bids !== undefined && p.asks !== undefined), {
    message: "needs mid, or both bids and asks",
  })
  .refine((p) => (p.bids === undefined) === (p.asks === undefined), {
    message: "a ladder needs both bids and asks",
  });
export type RedisPricePayload = z.input<typeof redisPricePayload>;

export interface RedisPriceOptions {
  keyPrefix?: string;
  channel?: string;
  maxAgeMs?: number;
  pollMs?: number;
  log?: Logger;
}

export class RedisPriceSource implements PriceSource {
  readonly maxAgeMs: number;
  private readonly keyPrefix: string;
  private readonly channel: string;
  private readonly pollMs: number;
  private readonly prices = new Map<string, PricePoint>();
  private readonly pairSet: ReadonlySet<string>;
  private readonly listeners = new Set<(pairKey: string, point: PricePoint) => void>();
  private subscriber: Redis | Cluster | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private pollFailing = false;
  /** Per pair, the last malformed payload logged. */
  private readonly lastMalformed = new Map<string, string>();

  /** `pairs` are the "BASE/QUOTE" keys configured to use this source. */
  constructor(
    readonly name: string,
    private readonly redis: Redis | Cluster,
    private readonly pairs: readonly string[],
    private readonly opts: RedisPriceOptions = {},
  ) {
    this.keyPrefix = opts.keyPrefix ?? "rfq:price:";
    this.channel = opts.channel ?? "rfq:prices";
    this.maxAgeMs = opts.maxAgeMs ?? 5_000;
    this.pollMs = opts.pollMs ?? 500;
    this.pairSet = new Set(pairs);
  }

  price(pairKey: string): PricePoint | undefined {
    return this.prices.get(pairKey);
  }

  /** Called for every accepted update (tests and the propagation benchmark wait on it). */
  onUpdate(listener: (pairKey: string, point: PricePoint) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {
    this.subscriber = subscriberOf(this.redis, `prices-subscriber:${this.name}`, this.opts.log);
    this.subscriber.on("message", (_channel: string, message: string) => this.ingest(message));
    // After a reconnect the subscription is restored by ioredis, but messages sent meanwhile are gone.
    this.subscriber.on("ready", () => void this.poll());
    await this.subscriber.subscribe(this.channel);
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  /** Reads every configured pair's key once. */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      if (!this.pairs.length) return;
      try {
        // One GET per pair (auto-pipelined): the engine's keys carry no common hash tag, so one MGET
        // would cross slots on a cluster.
        const values = await Promise.all(this.pairs.map((p) => this.redis.get(this.keyPrefix + p)));
        values.forEach((v, i) => {
          if (v !== null) this.ingest(v, this.pairs[i]);
        });
        this.pollFailing = false;
      } catch (err) {
        // Once per outage: the poll runs every `pollMs`; the pairs go stale on their own.
        if (!this.pollFailing) this.opts.log?.warn({ err, source: this.name }, "redis prices: poll failed");
        this.pollFailing = true;
      }
    })().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  /** Applies one payload; malformed, unknown or older ones are logged and dropped. */
  private ingest(raw: string, pairFromKey?: string): void {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (e) {
      this.malformed(raw, pairFromKey, undefined, `not JSON: ${(e as Error).message}`);
      return;
    }
    const parsed = redisPricePayload.safeParse(json);
    if (!parsed.success) {
      const named = (json as { pair?: unknown } | null)?.pair;
      const pair = pairFromKey ?? (typeof named === "string" ? named : undefined);
      const issue = parsed.error.issues[0]!;
      this.malformed(raw, pair, issue.path.join(".") || undefined, issue.message);
      return;
    }
    const payload = parsed.data;
    this.lastMalformed.delete(pairFromKey ?? payload.pair ?? "");
    const pairKey = pairFromKey ?? payload.pair;
    if (!pairKey || !this.pairSet.has(pairKey)) return;
    const current = this.prices.get(pairKey);
    if (current && current.updatedAtMs >= payload.ts) return;
    const point = toPoint(payload);
    if (typeof point === "string") {
      this.opts.log?.warn(
        { source: this.name, pair: pairKey, problem: point },
        "redis prices: payload refused",
      );
      return;
    }
    this.prices.set(pairKey, point);
    for (const l of this.listeners) l(pairKey, point);
  }

  /** One line per bad payload, naming the pair and the field; the poll re-reading it stays quiet. */
  private malformed(raw: string, pair: string | undefined, field: string | undefined, problem: string): void {
    const key = pair ?? "";
    if (this.lastMalformed.get(key) === raw) return;
    this.lastMalformed.set(key, raw);
    this.opts.log?.warn(
      { source: this.name, pair: pair ?? "(none)", field: field ?? "(payload)", problem },
      "redis prices: malformed payload ignored",
    );
  }
}

/** A payload as a PricePoint, or what is wrong with it. */
function toPoint(p: z.output<typeof redisPricePayload>): PricePoint | string {
  if (!p.bids || !p.asks) return { mid: parseDecimal(p.mid!), updatedAtMs: p.ts };
  const side = (ls: { upToBase: string; price: string }[]): LadderLevel[] | string => {
    const out: LadderLevel[] = [];
    let prev = 0n;
    for (const l of ls) {
      const up = BigInt(l.upToBase);
      if (up <= prev) return "ladder sizes must ascend";
      prev = up;
      const price = parseDecimal(l.price);
      if (price.num === 0n) return "ladder price is zero";
      out.push({ upToBase: up, price });
    }
    return out;
  };
  const bids = side(p.bids);
  const asks = side(p.asks);
  if (typeof bids === "string") return bids;
  if (typeof asks === "string") return asks;
  // A crossed ladder (some bid at or above some ask) would let a taker buy and sell back at a profit.
  const maxBid = bids.reduce((m, l) => (compareRatio(l.price, m) > 0 ? l.price : m), bids[0]!.price);
  const minAsk = asks.reduce((m, l) => (compareRatio(l.price, m) < 0 ? l.price : m), asks[0]!.price);
  if (compareRatio(maxBid, minAsk) >= 0) return "crossed ladder: a bid is at or above an ask";
  const mid: Ratio = p.mid
    ? parseDecimal(p.mid)
    : {
        num: bids[0]!.price.num * asks[0]!.price.den + asks[0]!.price.num * bids[0]!.price.den,
        den: 2n * bids[0]!.price.den * asks[0]!.price.den,
      };
  return { mid, ladder: { bids, asks }, updatedAtMs: p.ts };
}

/**
 * What the maker's pricing engine calls (or does the equivalent of, in any language): store the
 * latest price and tell every instance, atomically.
 */
export async function publishPrice(
  redis: Redis | Cluster,
  pairKey: string,
  payload: Omit<RedisPricePayload, "pair">,
  opts: { keyPrefix?: string; channel?: string } = {},
): Promise<void> {
  const body = JSON.stringify({ pair: pairKey, ...payload });
  await redis
    .multi()
    .set((opts.keyPrefix ?? "rfq:price:") + pairKey, body)
    .publish(opts.channel ?? "rfq:prices", body)
    .exec();
}

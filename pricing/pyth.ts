/**
 * Pyth prices from a Hermes server's server-sent event stream:
 *   GET <url>/v2/updates/price/stream?ids[]=<feed>&...&parsed=true
 * Each event's JSON carries `parsed: [{id, price: {price, conf, expo, publish_time}, ema_price, ...}]`
 * (price and conf are integer strings scaled by 10^expo; publish_time is unix seconds).
 *
 * A pair is one feed (SOL/USD standing for SOL/USDC) or the ratio of two (JUP/USD over SOL/USD for
 * JUP/SOL); its age is that of the older feed. The stream is re-opened with backoff when it ends,
 * fails, or stays silent for `idleReconnectMs` (Hermes closes streams after a day).
 */
import type { Logger } from "pino";
import type { Ratio } from "../amounts/decimal.ts";
import type { PricePoint, PriceSource } from "./interface.ts";
import { readSse } from "./sse.ts";

export interface PythFeedPair {
  /** Feed id (64 hex chars, no 0x) giving the base's price. */
  base: string;
  /** Feed id to divide by; unset when the feed is already quoted in the pair's quote unit. */
  quote?: string;
}

export interface PythOptions {
  url: string;
  feeds: Record<string, PythFeedPair>;
  maxAgeMs?: number;
  maxConfBps?: number;
  idleReconnectMs?: number;
  log?: Logger;
}

interface FeedPrice {
  price: bigint;
  conf: bigint;
  expo: number;
  publishTime: number;
}

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5_000;

export class PythPriceSource implements PriceSource {
  readonly maxAgeMs: number;
  private readonly feeds = new Map<string, FeedPrice>();
  private readonly prices = new Map<string, PricePoint>();
  /** Feed id -> the pairs that read it. */
  private readonly pairsOfFeed = new Map<string, string[]>();
  private readonly listeners = new Set<(pairKey: string, point: PricePoint | undefined) => void>();
  private readonly streamUrl: string;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  /** Completed stream connections (tests use it to see a reconnect). */
  connections = 0;

  constructor(
    readonly name: string,
    private readonly opts: PythOptions,
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 10_000;
    for (const [pairKey, f] of Object.entries(opts.feeds)) {
      for (const id of [f.base, f.quote]) {
        if (id === undefined) continue;
        const list = this.pairsOfFeed.get(id) ?? [];
        list.push(pairKey);
        this.pairsOfFeed.set(id, list);
      }
    }
    const ids = [...this.pairsOfFeed.keys()].map((id) => `ids[]=${id}`).join("&");
    this.streamUrl = `${opts.url.replace(/\/+$/, "")}/v2/updates/price/stream?${ids}&parsed=true&encoding=hex`;
  }

  price(pairKey: string): PricePoint | undefined {
    return this.prices.get(pairKey);
  }

  /** Called whenever a pair's price changes (undefined: it became unusable, e.g. confidence too wide). */
  onUpdate(listener: (pairKey: string, point: PricePoint | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Opens the stream; resolves once the first connection attempt has an answer (never throws). */
  async start(): Promise<void> {
    let first!: () => void;
    const answered = new Promise<void>((r) => {
      first = r;
    });
    this.loop = this.run(first);
    await answered;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort?.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(answered: () => void): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    while (!this.closed) {
      const ac = new AbortController();
      this.abort = ac;
      let idle: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(() => ac.abort(new Error("stream idle")), this.opts.idleReconnectMs ?? 15_000);
      };
      try {
        arm();
        const res = await fetch(this.streamUrl, {
          signal: ac.signal,
          headers: { accept: "text/event-stream" },
        });
        if (!res.ok || !res.body) {
          const text = await res.text().catch(() => "");
          throw new Error(`Hermes answered ${res.status}: ${text.slice(0, 200)}`);
        }
        this.connections++;
        answered();
        backoff = BACKOFF_MIN_MS;
        for await (const ev of readSse(res.body as AsyncIterable<Uint8Array>)) {
          arm();
          this.ingest(ev.data);
        }
        this.opts.log?.info({ source: this.name }, "pyth: stream ended, reconnecting");
      } catch (err) {
        if (!this.closed)
          this.opts.log?.warn({ err, source: this.name }, "pyth: stream failed, reconnecting");
      } finally {
        clearTimeout(idle);
        answered();
      }
      if (this.closed) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, backoff);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /** Applies one event's parsed updates; anything malformed is skipped, never thrown. */
  private ingest(data: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(data);
    } catch {
      this.opts.log?.warn({ source: this.name }, "pyth: event is not JSON");
      return;
    }
    const parsed = (msg as { parsed?: unknown }).parsed;
    if (!Array.isArray(parsed)) return;
    const touched = new Set<string>();
    for (const u of parsed) {
      const feed = readFeed(u);
      if (!feed) continue;
      const pairs = this.pairsOfFeed.get(feed.id);
      if (!pairs) continue;
      const held = this.feeds.get(feed.id);
      if (held && held.publishTime > feed.price.publishTime) continue;
      this.feeds.set(feed.id, feed.price);
      for (const p of pairs) touched.add(p);
    }
    for (const pairKey of touched) this.recompute(pairKey);
  }

  private recompute(pairKey: string): void {
    const spec = this.opts.feeds[pairKey]!;
    const base = this.usable(spec.base);
    const quote = spec.quote === undefined ? undefined : this.usable(spec.quote);
    let point: PricePoint | undefined;
    if (base && (spec.quote === undefined || quote)) {
      const b = base.ratio;
      const mid: Ratio = quote ? { num: b.num * quote.ratio.den, den: b.den * quote.ratio.num } : b;
      const publishTime = quote ? Math.min(base.publishTime, quote.publishTime) : base.publishTime;
      point = { mid, updatedAtMs: publishTime * 1000 };
    }
    if (point) this.prices.set(pairKey, point);
    else this.prices.delete(pairKey);
    for (const l of this.listeners) l(pairKey, point);
  }

  /** A feed's price as an exact ratio, unless missing, non-positive or too uncertain. */
  private usable(id: string): { ratio: Ratio; publishTime: number } | undefined {
    const f = this.feeds.get(id);
    if (!f || f.price <= 0n) return undefined;
    const max = this.opts.maxConfBps;
    if (max !== undefined && f.conf * 10_000n > f.price * BigInt(max)) return undefined;
    const ratio =
      f.expo < 0
        ? { num: f.price, den: 10n ** BigInt(-f.expo) }
        : { num: f.price * 10n ** BigInt(f.expo), den: 1n };
    return { ratio, publishTime: f.publishTime };
  }
}

function readFeed(u: unknown): { id: string; price: FeedPrice } | undefined {
  if (!u || typeof u !== "object") return undefined;
  const { id, price } = u as { id?: unknown; price?: Record<string, unknown> };
  if (typeof id !== "string" || !price || typeof price !== "object") return undefined;
  const { price: p, conf, expo, publish_time } = price;
  if (typeof p !== "string" || !/^-?\d+$/.test(p)) return undefined;
  if (typeof conf !== "string" || !/^\d+$/.test(conf)) return undefined;
  if (typeof expo !== "number" || !Number.isInteger(expo) || Math.abs(expo) > 30) return undefined;
  if (typeof publish_time !== "number" || !Number.isInteger(publish_time)) return undefined;
  return {
    id: id.replace(/^0x/, "").toLowerCase(),
    price: { price: BigInt(p), conf: BigInt(conf), expo, publishTime: publish_time },
  };
}

/**
 * RedisControls: the switches shared by every instance through Redis (pub/sub for speed, a poll every
 * `pollMs` as the guarantee).
 *
 * Redis layout (prefix default "rfq:ctl:"):
 *   <prefix>paused   absent or "0": quoting; any other value pauses every instance. The admin API
 *                    writes {"reason","atMs"} JSON, but `SET rfq:ctl:paused 1` works just as well.
 *   <prefix>pairs    hash "BASE/QUOTE" -> "1" | "0": overrides the pair's configured `enabled`.
 *   <prefix>changed  pub/sub channel: any message makes every instance re-read the two keys now.
 *
 * Redis Cluster: every write is one key plus a PUBLISH (no key), so each MULTI stays in one slot; the
 * two keys are read by two commands, not one transaction (they are independent switches), so they
 * keep their documented names without a common hash tag.
 */
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { coalescing, subscriberOf } from "../subscriber.ts";
import type { Controls } from "./interface.ts";
import { KnownSwitches } from "./switches.ts";

export interface RedisControlsOptions {
  prefix?: string;
  pollMs?: number;
  failClosedAfterMs?: number;
  log?: Logger;
  now?: () => number;
}

/** Shared by every instance through Redis. */
export class RedisControls extends KnownSwitches implements Controls {
  private readonly prefix: string;
  private readonly pollMs: number;
  private readonly failClosedAfterMs: number;
  private readonly now: () => number;
  /** Last successful read; -Infinity until the first, so an instance that never read stays closed. */
  private lastReadMs = Number.NEGATIVE_INFINITY;
  private subscriber: Redis | Cluster | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly reads = coalescing(() => this.readOnce());
  private readFailing = false;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly opts: RedisControlsOptions = {},
  ) {
    super();
    this.prefix = opts.prefix ?? "rfq:ctl:";
    this.pollMs = opts.pollMs ?? 500;
    this.failClosedAfterMs = opts.failClosedAfterMs ?? 3_000;
    this.now = opts.now ?? Date.now;
  }

  private get pausedKey() {
    return `${this.prefix}paused`;
  }
  private get pairsKey() {
    return `${this.prefix}pairs`;
  }
  private get channel() {
    return `${this.prefix}changed`;
  }

  protected override known(): boolean {
    return this.now() - this.lastReadMs <= this.failClosedAfterMs;
  }

  protected override outageDetail(): string {
    const since = Number.isFinite(this.lastReadMs)
      ? `last read ${this.now() - this.lastReadMs} ms ago`
      : "never read since start";
    return `the shared switches (Redis) cannot be read: ${since}; not quoting until they can`;
  }

  async pause(reason: string): Promise<void> {
    const atMs = this.now();
    await this.redis
      .multi()
      .set(this.pausedKey, JSON.stringify({ reason, atMs }))
      .publish(this.channel, "paused")
      .exec();
    this.apply(JSON.stringify({ reason, atMs }), undefined);
  }

  async resume(): Promise<void> {
    await this.redis.multi().del(this.pausedKey).publish(this.channel, "resumed").exec();
    this.apply(null, undefined);
  }

  async setPair(pairKey: string, enabled: boolean | null): Promise<void> {
    const m = this.redis.multi();
    if (enabled === null) m.hdel(this.pairsKey, pairKey);
    else m.hset(this.pairsKey, pairKey, enabled ? "1" : "0");
    await m.publish(this.channel, "pairs").exec();
    await this.read();
  }

  async start(): Promise<void> {
    this.subscriber = subscriberOf(this.redis, "controls-subscriber", this.opts.log);
    this.subscriber.on("message", () => void this.read());
    // A reconnected subscriber may have missed messages: read at once.
    this.subscriber.on("ready", () => void this.read());
    await this.subscriber.subscribe(this.channel);
    await this.read();
    this.timer = setInterval(() => void this.read(), this.pollMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.reads.idle();
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }

  /** Re-reads both keys; overlapping calls coalesce into at most one more read. */
  read(): Promise<void> {
    return this.reads.run();
  }

  private async readOnce(): Promise<void> {
    const started = this.now();
    try {
      // Two independent reads (auto-pipelined into one round trip on a single node): the pause
      // flag and the pair switches are separate facts, so they need no transaction, and their
      // documented key names sit in different cluster slots.
      const [paused, pairs] = await Promise.all([
        this.redis.get(this.pausedKey),
        this.redis.hgetall(this.pairsKey),
      ]);
      this.apply(paused, pairs);
      this.lastReadMs = started;
      if (this.readFailing) this.opts.log?.info("controls: the shared switches are readable again");
      this.readFailing = false;
    } catch (err) {
      // Once per outage: the poll runs every `pollMs`.
      if (!this.readFailing) this.opts.log?.warn({ err }, "controls: cannot read the shared switches");
      this.readFailing = true;
    }
  }

  private apply(pausedValue: string | null, pairs: Record<string, string> | undefined): void {
    const before = this.signature();
    if (pausedValue === null || pausedValue === "" || pausedValue === "0") {
      this.paused = false;
      this.reason = undefined;
      this.atMs = undefined;
    } else {
      this.paused = true;
      const parsed = parseJson(pausedValue);
      this.reason = typeof parsed?.reason === "string" ? parsed.reason : "paused by Redis flag";
      this.atMs = typeof parsed?.atMs === "number" ? parsed.atMs : undefined;
    }
    const wasPaused = before.startsWith("1");
    if (wasPaused !== this.paused) {
      this.opts.log?.warn({ paused: this.paused, reason: this.reason }, "controls: global pause changed");
    }
    if (pairs) {
      this.pairs = new Map(Object.entries(pairs).map(([k, v]) => [k, v === "1" || v === "true"]));
    }
    if (this.signature() !== before) this.changed();
  }

  private signature(): string {
    const pairs = [...this.pairs].sort(([a], [b]) => a.localeCompare(b));
    return `${this.paused ? 1 : 0}|${this.reason ?? ""}|${JSON.stringify(pairs)}`;
  }
}

function parseJson(s: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(s);
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

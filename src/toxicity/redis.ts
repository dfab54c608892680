/**
 * RedisTakerStanding: the taker lists shared by every instance through Redis, read on the quote path
 * from an in-process view (view.ts) that never waits on Redis.
 *
 * Redis layout (prefix default "rfq:tox:"; one hash tag, so every key sits in one cluster slot):
 *   <prefix>{takers}:flags    hash taker -> entry JSON ({reason, source, atMs, untilMs, avgBps, fills})
 *   <prefix>{takers}:deny     hash taker -> entry JSON
 *   <prefix>{takers}:allow    hash taker -> entry JSON
 *   <prefix>{takers}:changed  pub/sub channel: any message makes every instance re-read the lists now
 *
 * How stale an instance can be: a change reaches the others through pub/sub within a round trip
 * (milliseconds); if that message is lost (the subscriber reconnecting), the periodic reload
 * (`toxicity.reloadMs`, 1 s) catches up, so at most `reloadMs` plus one read. Expiry needs no reload:
 * each entry's `untilMs` is judged against the clock on every read. With Redis unreadable the last view
 * is kept (one warning per outage): flags and lists then age only by their own expiry.
 *
 * Writes are one script on one hash (drop the lapsed entries, set or delete one taker, publish), so a
 * list never grows past its live entries and every write stays in one slot.
 */
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { ToxicityConfig } from "../../config/schema.ts";
import { coalescing, subscriberOf } from "../../pricing/subscriber.ts";
import { TAKER_LISTS, type TakerEntry, type TakerList, type TakerStanding } from "./interface.ts";
import { TakerView } from "./view.ts";

/** The keys of the taker lists under `prefix` (all in one slot: the `{takers}` tag). */
export function takerKeys(prefix: string): Record<TakerList | "channel", string> {
  const k = (name: string) => `${prefix}{takers}:${name}`;
  return { flags: k("flags"), deny: k("deny"), allow: k("allow"), channel: k("changed") };
}

// KEYS[1] the list's hash; ARGV: now ms, channel, taker, entry JSON ("" deletes). Returns 1 when the
// taker's field was there before.
const WRITE = `
local all = redis.call('HGETALL', KEYS[1])
local now = tonumber(ARGV[1])
for i = 1, #all, 2 do
  local ok, e = pcall(cjson.decode, all[i + 1])
  if ok and type(e) == 'table' and type(e.untilMs) == 'number' and e.untilMs <= now then
    redis.call('HDEL', KEYS[1], all[i])
  end
end
local had = redis.call('HEXISTS', KEYS[1], ARGV[3])
if ARGV[4] == '' then redis.call('HDEL', KEYS[1], ARGV[3]) else redis.call('HSET', KEYS[1], ARGV[3], ARGV[4]) end
redis.call('PUBLISH', ARGV[2], 'changed')
return had
`;

export interface RedisTakerStandingOptions {
  prefix: string;
  reloadMs: number;
  log?: Logger;
  now?: () => number;
}

export class RedisTakerStanding extends TakerView implements TakerStanding {
  private readonly keys: Record<TakerList | "channel", string>;
  private readonly now: () => number;
  private subscriber: Redis | Cluster | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly reads = coalescing(() => this.readOnce());
  private failing = false;

  constructor(
    private readonly redis: Redis | Cluster,
    config: Pick<ToxicityConfig, "deny" | "allow">,
    private readonly opts: RedisTakerStandingOptions,
  ) {
    super(config);
    this.keys = takerKeys(opts.prefix);
    this.now = opts.now ?? Date.now;
  }

  async put(list: TakerList, entry: TakerEntry): Promise<void> {
    await this.write(list, entry.taker, JSON.stringify(entry));
    this.lists[list].set(entry.taker, entry);
  }

  async remove(list: TakerList, taker: string): Promise<boolean> {
    const had = await this.write(list, taker, "");
    this.lists[list].delete(taker);
    return had === 1;
  }

  private async write(list: TakerList, taker: string, value: string): Promise<number> {
    return (await this.redis.eval(
      WRITE,
      1,
      this.keys[list],
      String(this.now()),
      this.keys.channel,
      taker,
      value,
    )) as number;
  }

  async start(): Promise<void> {
    this.subscriber = subscriberOf(this.redis, "takers-subscriber", this.opts.log);
    this.subscriber.on("message", () => void this.reload());
    // A reconnected subscriber may have missed messages: read at once.
    this.subscriber.on("ready", () => void this.reload());
    await this.subscriber.subscribe(this.keys.channel);
    await this.reload();
    this.timer = setInterval(() => void this.reload(), this.opts.reloadMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.reads.idle();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  /** Re-reads the three lists in one transaction (one slot); overlapping calls coalesce. */
  reload(): Promise<void> {
    return this.reads.run();
  }

  private async readOnce(): Promise<void> {
    try {
      const m = this.redis.multi();
      for (const l of TAKER_LISTS) m.hgetall(this.keys[l]);
      const replies = (await m.exec()) ?? [];
      const next = {} as Record<TakerList, Map<string, TakerEntry>>;
      TAKER_LISTS.forEach((l, i) => {
        const [err, value] = replies[i] ?? [new Error("no reply"), null];
        if (err) throw err;
        next[l] = parseList(value as Record<string, string>);
      });
      this.lists = next;
      if (this.failing) this.opts.log?.info("toxicity: the shared taker lists are readable again");
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.opts.log?.warn({ err }, "toxicity: cannot read the shared taker lists; keeping the last view");
      }
      this.failing = true;
    }
  }
}

function parseList(raw: Record<string, string>): Map<string, TakerEntry> {
  const out = new Map<string, TakerEntry>();
  for (const [taker, json] of Object.entries(raw)) {
    try {
      const e = JSON.parse(json) as Partial<TakerEntry>;
      if (typeof e.atMs !== "number") continue;
      out.set(taker, {
        taker,
        reason: typeof e.reason === "string" ? e.reason : "",
        source: e.source === "markouts" ? "markouts" : "admin",
        atMs: e.atMs,
        ...(typeof e.untilMs === "number" ? { untilMs: e.untilMs } : {}),
        ...(typeof e.avgBps === "number" ? { avgBps: e.avgBps } : {}),
        ...(typeof e.fills === "number" ? { fills: e.fills } : {}),
      });
    } catch {
      // A hand-written value that is not an entry: ignored, as if absent.
    }
  }
  return out;
}

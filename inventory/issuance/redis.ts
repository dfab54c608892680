/**
 * The IssuanceUsage shared by every instance (production): Redis, changed only by the Lua scripts
 * below, so two instances racing for the last units of a daily cap cannot both get them. Every key
 * carries one hash tag, so the scripts run unchanged on Redis Cluster:
 *
 *   <prefix>{issuance}:res        hash quoteId -> "mint direction day amount" (open reservations)
 *   <prefix>{issuance}:day:<day>  hash "mint direction" -> units counted that UTC day (kept 3 days)
 *
 * Amounts are u64 decimal strings, added and compared as strings (../reservations/redis.ts, LUA_DECIMAL).
 */
import type { Cluster, Redis } from "ioredis";
import { LUA_DECIMAL } from "../reservations/redis.ts";
import type {
  IssuanceDirection,
  IssuanceReservation,
  IssuanceReserveResult,
  IssuanceUsage,
} from "./interface.ts";
import { utcDay } from "./interface.ts";
import { capExceeded } from "./memory.ts";

/** KEYS: res, day hash. ARGV: quoteId, field, amount, cap, record, ttl seconds. -> {1, used} or {0, used}. */
const RESERVE = `${LUA_DECIMAL}
local rec = redis.call("HGET", KEYS[1], ARGV[1])
local used = redis.call("HGET", KEYS[2], ARGV[2]) or "0"
if rec then return {1, used} end
local nxt = add(used, ARGV[3])
if cmp(nxt, ARGV[4]) > 0 then return {0, used} end
redis.call("HSET", KEYS[2], ARGV[2], nxt)
redis.call("EXPIRE", KEYS[2], tonumber(ARGV[6]))
redis.call("HSET", KEYS[1], ARGV[1], ARGV[5])
return {1, nxt}
`;

/** KEYS: res, day hash. ARGV: quoteId, the record read, field, amount. -> 1 released, 0 record changed. */
const RELEASE = `${LUA_DECIMAL}
if redis.call("HGET", KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call("HDEL", KEYS[1], ARGV[1])
local used = redis.call("HGET", KEYS[2], ARGV[3]) or "0"
local left = sub(used, ARGV[4])
if left == "0" then redis.call("HDEL", KEYS[2], ARGV[3]) else redis.call("HSET", KEYS[2], ARGV[3], left) end
return 1
`;

const DAY_TTL_SECONDS = 3 * 86_400;

interface Scripted {
  issuanceReserve(res: string, day: string, ...argv: string[]): Promise<[number, string]>;
  issuanceRelease(res: string, day: string, ...argv: string[]): Promise<number>;
}

/** The book's keys under `prefix` (`<redisPrefix>iss:`), one hash tag for all. */
export function issuanceKeys(prefix: string): { res: string; day: (day: string) => string } {
  return { res: `${prefix}{issuance}:res`, day: (day) => `${prefix}{issuance}:day:${day}` };
}

const field = (mint: string, direction: IssuanceDirection) => `${mint} ${direction}`;

export class RedisIssuanceUsage implements IssuanceUsage {
  private readonly keys: ReturnType<typeof issuanceKeys>;
  private readonly redis: Redis & Scripted;
  /** The last seen day totals, by day then field (only today and yesterday are kept). */
  private readonly seen = new Map<string, Map<string, bigint>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    redis: Redis | Cluster,
    prefix: string,
    private readonly opts: { syncMs?: number; now?: () => number } = {},
  ) {
    this.keys = issuanceKeys(prefix);
    if (!("issuanceReserve" in redis)) {
      redis.defineCommand("issuanceReserve", { numberOfKeys: 2, lua: RESERVE });
      redis.defineCommand("issuanceRelease", { numberOfKeys: 2, lua: RELEASE });
    }
    this.redis = redis as Redis & Scripted;
  }

  used(mint: string, direction: IssuanceDirection, day: string): bigint {
    return this.seen.get(day)?.get(field(mint, direction)) ?? 0n;
  }

  async reserve(r: IssuanceReservation): Promise<IssuanceReserveResult> {
    const f = field(r.mint, r.direction);
    const record = `${r.mint} ${r.direction} ${r.day} ${r.amount}`;
    const [ok, used] = await this.redis.issuanceReserve(
      this.keys.res,
      this.keys.day(r.day),
      r.quoteId,
      f,
      r.amount.toString(),
      r.dailyCap.toString(),
      record,
      String(DAY_TTL_SECONDS),
    );
    this.note(r.day, f, BigInt(used));
    return ok === 1 ? { ok: true } : capExceeded(r, BigInt(used));
  }

  async release(quoteId: string): Promise<void> {
    // Read, then release only if the record is still the one read (a concurrent release or commit wins).
    for (let attempt = 0; attempt < 3; attempt++) {
      const record = await this.redis.hget(this.keys.res, quoteId);
      if (!record) return;
      const [mint, direction, day, amount] = record.split(" ") as [string, IssuanceDirection, string, string];
      const done = await this.redis.issuanceRelease(
        this.keys.res,
        this.keys.day(day),
        quoteId,
        record,
        field(mint, direction),
        amount,
      );
      if (done === 1) {
        const f = field(mint, direction);
        const was = this.seen.get(day)?.get(f);
        if (was !== undefined) this.note(day, f, was > BigInt(amount) ? was - BigInt(amount) : 0n, true);
        return;
      }
    }
  }

  async commit(quoteId: string): Promise<void> {
    await this.redis.hdel(this.keys.res, quoteId);
  }

  /** Re-reads today's totals now (the quote path's view). */
  async sync(): Promise<void> {
    const day = utcDay((this.opts.now ?? Date.now)());
    const all = await this.redis.hgetall(this.keys.day(day));
    const totals = new Map<string, bigint>();
    for (const [f, v] of Object.entries(all)) totals.set(f, BigInt(v));
    this.seen.set(day, totals);
    for (const d of this.seen.keys()) if (d < day && this.seen.size > 2) this.seen.delete(d);
  }

  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => {
      this.sync().catch(() => {});
    }, this.opts.syncMs ?? 250);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private note(day: string, f: string, value: bigint, force = false): void {
    let m = this.seen.get(day);
    if (!m) {
      m = new Map();
      this.seen.set(day, m);
    }
    if (force || value > (m.get(f) ?? 0n)) m.set(f, value);
  }
}

/**
 * The reservation state shared by every instance: Redis, changed only by the Lua scripts below, so a reservation
 * is one atomic step however many instances race for the last units. Every key carries the maker as
 * its hash tag, so the scripts run unchanged on Redis Cluster:
 *
 *   <prefix>{<maker>}:bal   hash mint -> balance (smallest units)
 *   <prefix>{<maker>}:meta  hash at (ms the stored read started), lamports
 *   <prefix>{<maker>}:res   hash mint -> units reserved (open + committed-unsettled)
 *   <prefix>{<maker>}:inc   hash mint -> units incoming (same reservations' input legs)
 *   <prefix>{<maker>}:rec   hash quoteId -> "outMint outAmount inMint inAmount expiresAtMs state"
 *   <prefix>{<maker>}:exp   zset quoteId by expiresAtMs (open reservations)
 *   <prefix>{<maker>}:cmt   zset quoteId by settleAtMs (committed, waiting for a later balance read)
 *
 * Amounts are u64 and Lua numbers are doubles (exact only to 2^53), so the scripts add, subtract and
 * compare amounts as decimal strings.
 */
import type { Cluster, Redis } from "ioredis";
import type { Reservation } from "../interface.ts";
import type {
  CommitResult,
  Reservations,
  ReservationsState,
  ReserveOutcome,
  ReserveRequest,
  Totals,
} from "./interface.ts";

/** u64 arithmetic on decimal strings for Lua (whose numbers are exact only to 2^53): norm, cmp, add, sub. */
export const LUA_DECIMAL = `
local function norm(a)
  a = string.gsub(a, "^0+", "")
  if a == "" then return "0" end
  return a
end
local function cmp(a, b)
  a = norm(a); b = norm(b)
  if #a ~= #b then if #a < #b then return -1 else return 1 end end
  if a == b then return 0 end
  if a < b then return -1 else return 1 end
end
local function add(a, b)
  local r, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry
    if i > 0 then d = d + string.byte(a, i) - 48; i = i - 1 end
    if j > 0 then d = d + string.byte(b, j) - 48; j = j - 1 end
    r[#r + 1] = string.char(48 + d % 10)
    carry = math.floor(d / 10)
  end
  return norm(string.reverse(table.concat(r)))
end
local function sub(a, b)
  if cmp(a, b) <= 0 then return "0" end
  local r, borrow, i, j = {}, 0, #a, #b
  while i > 0 do
    local d = string.byte(a, i) - 48 - borrow
    if j > 0 then d = d - (string.byte(b, j) - 48); j = j - 1 end
    if d < 0 then d = d + 10; borrow = 1 else borrow = 0 end
    r[#r + 1] = string.char(48 + d)
    i = i - 1
  end
  return norm(string.reverse(table.concat(r)))
end
`;

const PRELUDE = `
local K_BAL, K_META, K_RES, K_INC, K_REC, K_EXP, K_CMT = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
${LUA_DECIMAL}
local function get(key, field)
  return redis.call("HGET", key, field) or "0"
end
local function put(key, field, value)
  if value == "0" then redis.call("HDEL", key, field) else redis.call("HSET", key, field, value) end
  return value
end
local function split(rec)
  local f = {}
  for w in string.gmatch(rec, "%S+") do f[#f + 1] = w end
  return f
end
-- Removes a reservation's amounts from the totals and forgets it; returns the touched totals.
local function drop(qid, rec)
  local f = split(rec)
  local out = {f[1], put(K_RES, f[1], sub(get(K_RES, f[1]), f[2]))}
  local inc = {}
  if f[3] ~= "-" then inc = {f[3], put(K_INC, f[3], sub(get(K_INC, f[3]), f[4]))} end
  redis.call("HDEL", K_REC, qid)
  return out, inc
end
local function sweep(now)
  local ids = redis.call("ZRANGEBYSCORE", K_EXP, "-inf", now, "LIMIT", 0, 256)
  for _, id in ipairs(ids) do
    local rec = redis.call("HGET", K_REC, id)
    if rec then drop(id, rec) end
    redis.call("ZREM", K_EXP, id)
  end
end
`;

// ARGV: quoteId outMint outAmount inMint("-") inAmount expiresAtMs nowMs bufferOut floorOut("") ceilingIn("")
const RESERVE = `${PRELUDE}
local qid, outMint, outAmt, inMint, inAmt = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local expiresAt, now, buffer, floorOut, ceilingIn = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
sweep(now)
if redis.call("HEXISTS", K_REC, qid) == 1 then return {"exists"} end
local bal = get(K_BAL, outMint)
local res = get(K_RES, outMint)
local used = add(res, outAmt)
if cmp(bal, add(used, buffer)) < 0 then
  return {"insufficient", sub(bal, add(res, buffer))}
end
if floorOut ~= "" and cmp(bal, add(used, floorOut)) < 0 then return {"exposure", "out"} end
if inMint ~= "-" and ceilingIn ~= "" then
  local held = add(add(get(K_BAL, inMint), get(K_INC, inMint)), inAmt)
  if cmp(held, ceilingIn) > 0 then return {"exposure", "in"} end
end
redis.call("HSET", K_REC, qid, table.concat({outMint, outAmt, inMint, inAmt, expiresAt, "open"}, " "))
redis.call("ZADD", K_EXP, expiresAt, qid)
local r = {"reserved", outMint, put(K_RES, outMint, used)}
if inMint ~= "-" then
  r[4] = inMint
  r[5] = put(K_INC, inMint, add(get(K_INC, inMint), inAmt))
end
return r
`;

// ARGV: quoteId
const RELEASE = `${PRELUDE}
local rec = redis.call("HGET", K_REC, ARGV[1])
if not rec then return {} end
local f = split(rec)
if f[6] ~= "open" then return {} end
redis.call("ZREM", K_EXP, ARGV[1])
local out, inc = drop(ARGV[1], rec)
return {out[1], out[2], inc[1] or "", inc[2] or ""}
`;

// ARGV: quoteId settleAtMs
const COMMIT = `${PRELUDE}
local rec = redis.call("HGET", K_REC, ARGV[1])
if not rec then return "missing" end
local f = split(rec)
if f[6] ~= "open" then return "already" end
f[6] = "committed"
redis.call("HSET", K_REC, ARGV[1], table.concat(f, " "))
redis.call("ZREM", K_EXP, ARGV[1])
redis.call("ZADD", K_CMT, ARGV[2], ARGV[1])
return "committed"
`;

// ARGV: readAtMs lamports mint1 amount1 mint2 amount2 ...
const SET_BALANCES = `${PRELUDE}
local at = redis.call("HGET", K_META, "at")
if at and tonumber(at) > tonumber(ARGV[1]) then return 0 end
redis.call("HSET", K_META, "at", ARGV[1], "lamports", ARGV[2])
for i = 3, #ARGV, 2 do redis.call("HSET", K_BAL, ARGV[i], ARGV[i + 1]) end
local ids = redis.call("ZRANGEBYSCORE", K_CMT, "-inf", ARGV[1])
for _, id in ipairs(ids) do
  local rec = redis.call("HGET", K_REC, id)
  if rec then drop(id, rec) end
  redis.call("ZREM", K_CMT, id)
end
return 1
`;

// ARGV: nowMs
const STATE = `${PRELUDE}
sweep(ARGV[1])
return {
  redis.call("HMGET", K_META, "at", "lamports"),
  redis.call("HGETALL", K_BAL),
  redis.call("HGETALL", K_RES),
  redis.call("HGETALL", K_INC),
}
`;

/** One maker's reservation keys, in the scripts' KEYS order; all under the maker's hash tag (one slot). */
export function reservationKeys(prefix: string, maker: string): string[] {
  return ["bal", "meta", "res", "inc", "rec", "exp", "cmt"].map((name) => `${prefix}{${maker}}:${name}`);
}

type Reply = string | number | null | Reply[];

interface Scripted {
  invReserve(...args: (string | number)[]): Promise<Reply>;
  invRelease(...args: (string | number)[]): Promise<Reply>;
  invCommit(...args: (string | number)[]): Promise<Reply>;
  invSetBalances(...args: (string | number)[]): Promise<Reply>;
  invState(...args: (string | number)[]): Promise<Reply>;
}

export class RedisReservations implements Reservations {
  private readonly keys: string[];
  private readonly r: Redis & Scripted;

  /** `maker` (base58) is the hash tag: one maker's keys share one slot. */
  constructor(redis: Redis | Cluster, maker: string, prefix: string) {
    this.keys = reservationKeys(prefix, maker);
    const scripts: [keyof Scripted, string][] = [
      ["invReserve", RESERVE],
      ["invRelease", RELEASE],
      ["invCommit", COMMIT],
      ["invSetBalances", SET_BALANCES],
      ["invState", STATE],
    ];
    // defineCommand sends EVALSHA and falls back to EVAL once per connection: scripts stay cached.
    for (const [name, lua] of scripts) {
      // Stryker disable next-line ConditionalExpression: defining a command again with the same script changes nothing
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 7, lua });
    }
    this.r = redis as Redis & Scripted;
  }

  async reserve(q: ReserveRequest): Promise<ReserveOutcome> {
    const reply = (await this.r.invReserve(
      ...this.keys,
      q.quoteId,
      q.outMint,
      q.outAmount.toString(),
      q.inMint ?? "-",
      (q.inAmount ?? 0n).toString(),
      q.expiresAtMs,
      q.nowMs,
      q.bufferOut.toString(),
      q.floorOut !== undefined && q.floorOut > 0n ? q.floorOut.toString() : "",
      q.ceilingIn !== undefined ? (q.ceilingIn > 0n ? q.ceilingIn : 0n).toString() : "",
    )) as string[];
    switch (reply[0]) {
      case "exists":
        return { kind: "exists" };
      case "insufficient":
        return { kind: "insufficient", available: BigInt(reply[1]!) };
      case "exposure":
        return { kind: "exposure", leg: reply[1] === "in" ? "in" : "out" };
      default: {
        const totals: Totals = { reserved: new Map([[reply[1]!, BigInt(reply[2]!)]]), incoming: new Map() };
        if (reply[3]) totals.incoming.set(reply[3], BigInt(reply[4]!));
        return { kind: "reserved", totals };
      }
    }
  }

  async release(quoteId: string): Promise<Totals | undefined> {
    const reply = (await this.r.invRelease(...this.keys, quoteId)) as string[];
    if (!reply.length) return undefined;
    const totals: Totals = { reserved: new Map([[reply[0]!, BigInt(reply[1]!)]]), incoming: new Map() };
    if (reply[2]) totals.incoming.set(reply[2], BigInt(reply[3]!));
    return totals;
  }

  async commit(quoteId: string, settleAtMs: number): Promise<CommitResult> {
    return (await this.r.invCommit(...this.keys, quoteId, settleAtMs)) as CommitResult;
  }

  async setBalances(readAtMs: number, lamports: bigint, balances: ReadonlyMap<string, bigint>) {
    const flat: string[] = [];
    for (const [mint, amount] of balances) flat.push(mint, amount.toString());
    return (await this.r.invSetBalances(...this.keys, readAtMs, lamports.toString(), ...flat)) === 1;
  }

  async state(nowMs: number): Promise<ReservationsState> {
    const [meta, bal, res, inc] = (await this.r.invState(...this.keys, nowMs)) as [
      (string | null)[],
      string[],
      string[],
      string[],
    ];
    return {
      balancesAtMs: meta[0] ? Number(meta[0]) : undefined,
      lamports: meta[1] ? BigInt(meta[1]) : undefined,
      balances: pairs(bal),
      reserved: pairs(res),
      incoming: pairs(inc),
    };
  }

  async list() {
    const raw = await this.r.hgetall(this.keys[4]!);
    return Object.entries(raw).map(([quoteId, rec]) => {
      const [mint, amount, inMint, inAmount, expiresAtMs, state] = rec.split(" ");
      return {
        quoteId,
        mint: mint!,
        amount: BigInt(amount!),
        expiresAtMs: Number(expiresAtMs),
        ...(inMint !== "-" ? { inputMint: inMint!, inputAmount: BigInt(inAmount!) } : {}),
        state: state === "committed" ? ("committed" as const) : ("open" as const),
      } satisfies Reservation & { state: "open" | "committed" };
    });
  }
}

/** HGETALL's flat reply (field, value, field, value...) as a map. */
function pairs(flat: string[]): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (let i = 0; i < flat.length; i += 2) m.set(flat[i]!, BigInt(flat[i + 1]!));
  return m;
}

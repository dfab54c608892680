/**
 * The signer's own limits on what the maker pays out, by token: at most `perFill` in one fill, `perMinute`
 * in one clock minute and `perDay` in one UTC day (fixed windows), counted in Redis so every signer
 * instance shares them and a restart forgets nothing. What counts is the quote's amountOut in its
 * output token: everything that leaves the maker's inventory for that fill (the operator's fee part
 * included).
 *
 * The limits file (SIGNER_LIMITS) gives whole-token decimal amounts by symbol; "*" applies to every
 * configured token without its own entry:
 *   { "tokens": { "USDC": { "perFill": "50000", "perMinute": "200000", "perDay": "2000000" },
 *                 "*":    { "perFill": "1000",  "perMinute": "5000",   "perDay": "50000" } } }
 * A fill whose token has no limit is refused (SIGNER_NO_LIMIT): the signer signs nothing it cannot bound.
 *
 * One Lua script takes the replay record (SET NX on the message hash) and both windows together, so
 * a refused fill leaves no trace: either everything is recorded or nothing is.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseDecimal } from "../../../amounts/decimal.ts";
import type { TokenConfig } from "../../../config/schema.ts";
import type { RedisClient } from "../../redis/client.ts";

export interface TokenLimits {
  perFill: bigint;
  perMinute: bigint;
  perDay: bigint;
}

/** Redis counts in 64-bit integers and Lua compares in doubles: limits stay exact below 2^52. */
const MAX_LIMIT = 2n ** 52n;

const amountSchema = z.string().regex(/^\d+(\.\d+)?$/, "a non-negative decimal amount in whole tokens");
const limitsFileSchema = z.strictObject({
  tokens: z.record(
    z.string().min(1),
    z.strictObject({ perFill: amountSchema, perMinute: amountSchema, perDay: amountSchema }),
  ),
});

/** Limits in smallest units by mint; `undefined` for a token without any. */
export type LimitTable = ReadonlyMap<string, TokenLimits>;

/** Parses the limits file against the configured tokens; throws naming the file and the entry. */
export function parseLimits(raw: unknown, tokens: readonly TokenConfig[], where: string): LimitTable {
  const parsed = limitsFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `SIGNER_LIMITS: ${where}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  const bySymbol = new Map(tokens.map((t) => [t.symbol, t]));
  for (const symbol of Object.keys(parsed.data.tokens)) {
    if (symbol !== "*" && !bySymbol.has(symbol))
      throw new Error(`SIGNER_LIMITS: ${where}: tokens.${symbol}: not a configured token symbol`);
  }
  const out = new Map<string, TokenLimits>();
  for (const t of tokens) {
    const entry = parsed.data.tokens[t.symbol] ?? parsed.data.tokens["*"];
    if (!entry) continue;
    const units = (key: keyof typeof entry) => {
      const r = parseDecimal(entry[key]);
      // Whole tokens to smallest units, rounded down: the limit never exceeds what was written.
      const v = (r.num * 10n ** BigInt(t.decimals)) / r.den;
      if (v > MAX_LIMIT)
        throw new Error(`SIGNER_LIMITS: ${where}: tokens.${t.symbol}.${key}: at most 2^52 smallest units`);
      return v;
    };
    const limits = { perFill: units("perFill"), perMinute: units("perMinute"), perDay: units("perDay") };
    out.set(t.mint, limits);
  }
  return out;
}

export function loadLimits(path: string, tokens: readonly TokenConfig[]): LimitTable {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`SIGNER_LIMITS: cannot read ${path}: ${(e as Error).message}`);
  }
  return parseLimits(raw, tokens, path);
}

/**
 * KEYS: signed record, minute counter, day counter. ARGV: quoteId, amount, minute limit, day limit,
 * record TTL ms, minute TTL ms, day TTL ms. Returns 0 = recorded, 1 = already signed, 2 = the minute
 * would cross its limit, 3 = the day would.
 */
const RECORD_AND_SPEND = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
local amount = tonumber(ARGV[2])
local minute = tonumber(redis.call('GET', KEYS[2]) or '0')
if minute + amount > tonumber(ARGV[3]) then return 2 end
local day = tonumber(redis.call('GET', KEYS[3]) or '0')
if day + amount > tonumber(ARGV[4]) then return 3 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[5])
redis.call('INCRBY', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
redis.call('INCRBY', KEYS[3], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[7])
return 0
`;

export type SpendResult = "recorded" | "alreadySigned" | "perMinute" | "perDay";

interface Scripted {
  rfqSignerRecordAndSpend(
    record: string,
    minute: string,
    day: string,
    quoteId: string,
    amount: string,
    minuteLimit: string,
    dayLimit: string,
    recordTtlMs: number,
    minuteTtlMs: number,
    dayTtlMs: number,
  ): Promise<number>;
}

/**
 * The three keys one signature's script touches: its replay record and the token's minute and day
 * windows. One `{signer}` hash tag, so one cluster slot (test/redis/slots.test.ts).
 */
export function signerKeys(
  prefix: string,
  messageHash: string,
  mint: string,
  nowMs: number,
): { record: string; minute: string; day: string } {
  const base = `${prefix}{signer}:`;
  return {
    record: `${base}signed:${messageHash}`,
    minute: `${base}spent:${mint}:m:${Math.floor(nowMs / 60_000)}`,
    day: `${base}spent:${mint}:d:${Math.floor(nowMs / 86_400_000)}`,
  };
}

/** How long the signer remembers a signed message: far past any blockhash's life (a day). */
export const SIGNED_RECORD_TTL_MS = 24 * 60 * 60_000;

/**
 * The signer's durable record: which messages it signed and what each token's windows have spent.
 * Keys share the `{signer}` hash tag so the one script runs unchanged on Redis Cluster:
 *   <prefix>{signer}:signed:<messageHash>      the quoteId it was signed for (SET NX)
 *   <prefix>{signer}:spent:<mint>:m:<minute>   smallest units paid out in that minute
 *   <prefix>{signer}:spent:<mint>:d:<day>      ... in that UTC day
 */
export class SignerLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    if (!("rfqSignerRecordAndSpend" in redis))
      redis.defineCommand("rfqSignerRecordAndSpend", { numberOfKeys: 3, lua: RECORD_AND_SPEND });
  }

  async recordAndSpend(input: {
    messageHash: string;
    quoteId: string;
    mint: string;
    amount: bigint;
    limits: TokenLimits;
    nowMs: number;
  }): Promise<SpendResult> {
    const keys = signerKeys(this.prefix, input.messageHash, input.mint, input.nowMs);
    const r = await (this.redis as unknown as Scripted).rfqSignerRecordAndSpend(
      keys.record,
      keys.minute,
      keys.day,
      input.quoteId,
      input.amount.toString(),
      input.limits.perMinute.toString(),
      input.limits.perDay.toString(),
      SIGNED_RECORD_TTL_MS,
      120_000,
      2 * 86_400_000,
    );
    return (["recorded", "alreadySigned", "perMinute", "perDay"] as const)[r] ?? "alreadySigned";
  }
}

/**
 * The signer's own policy file (SIGNER_LIMITS) and its own record in Redis. Nothing here comes from
 * anything the webhook writes: the file is the signer's, and its Redis keys are only ever compared
 * with what the signer itself computed (a webhook holding the same Redis credentials can delete or
 * inflate them, which only makes the signer refuse more: see docs/signer.md).
 *
 * Per token (whole-token decimal amounts by symbol; "*" applies to every configured token without its
 * own entry): at most `perFill` paid out in one fill, `perMinute` in one clock minute and `perDay` in
 * one UTC day (fixed windows), and at most `lossPerDay` given away in one UTC day against the signer's
 * own price (what a fill pays out beyond the fair value of what it takes in, in the paid-out token).
 * What counts as paid out is the quote's amountOut in its output token: everything that leaves the
 * maker's inventory for that fill (the operator's fee part included).
 *
 * Per pair ("BASE/QUOTE" as the webhook configures it): the signer's own price source (`priceSources`,
 * the same kinds and settings the webhook's `priceSources` take) and `bandBps`, how much worse than
 * that source's mid a fill may be for the maker. A fill of a token or pair without an entry is
 * refused (SIGNER_NO_LIMIT, SIGNER_NO_PRICE_BAND): the signer signs nothing it cannot bound.
 *   { "tokens": { "USDC": { "perFill": "50000", "perMinute": "200000", "perDay": "2000000", "lossPerDay": "500" } },
 *     "priceSources": { "hermes": { "kind": "pyth", "feeds": { ... } } },
 *     "pairs": { "SOL/USDC": { "priceSource": "hermes", "bandBps": 50 } } }
 *
 * One Lua script takes the replay records (SET NX on the message hash; one landable message per quote)
 * and every window together, so a refused fill leaves no trace: either everything is recorded or
 * nothing is.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseDecimal } from "../../../amounts/decimal.ts";
import { type PriceSourceConfig, priceSourceSchema, type TokenConfig } from "../../../config/schema.ts";
import type { RedisClient } from "../../redis/client.ts";

export interface TokenLimits {
  perFill: bigint;
  perMinute: bigint;
  perDay: bigint;
  lossPerDay: bigint;
}

/** Redis counts in 64-bit integers and Lua compares in doubles: limits stay exact below 2^52. */
const MAX_LIMIT = 2n ** 52n;

const amountSchema = z.string().regex(/^\d+(\.\d+)?$/, "a non-negative decimal amount in whole tokens");
export const limitsFileSchema = z.strictObject({
  /** Limits by token symbol; `"*"` for every other configured token. A token without any is refused. */
  tokens: z.record(
    z.string().min(1),
    z.strictObject({
      /** The most one fill may pay out of the token, whole tokens. */
      perFill: amountSchema,
      /** The most paid out per clock minute. */
      perMinute: amountSchema,
      /** The most paid out per UTC day. */
      perDay: amountSchema,
      /** The most given away beyond the signer's own price per UTC day (rounded against the maker). */
      lossPerDay: amountSchema,
    }),
  ),
  /** The signer's own price sources, the same kinds and settings as the webhook's. */
  priceSources: z.record(z.string().min(1), priceSourceSchema).default({}),
  /** Bands by pair ("BASE/QUOTE"): how much worse than its own mid the signer lets the maker trade. */
  pairs: z
    .record(
      z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'a pair "BASE/QUOTE"'),
      z.strictObject({
        /** The signer's price source for the pair (a name in its `priceSources`). */
        priceSource: z.string().min(1),
        /** How far, bps, the price may be worse for the maker than the signer's mid. */
        bandBps: z.number().int().min(0).max(10_000),
      }),
    )
    .default({}),
});

/** Limits in smallest units by mint; `undefined` for a token without any. */
export type LimitTable = ReadonlyMap<string, TokenLimits>;

/** One pair's band, with its tokens resolved. */
export interface PairBand {
  /** "BASE/QUOTE". */
  pair: string;
  base: TokenConfig;
  quote: TokenConfig;
  priceSource: string;
  bandBps: number;
}

export interface SignerPolicyFile {
  limits: LimitTable;
  /** By "BASE/QUOTE". */
  bands: ReadonlyMap<string, PairBand>;
  priceSources: Readonly<Record<string, PriceSourceConfig>>;
}

/** Parses the policy file against the configured tokens; throws naming the file and the entry. */
export function parseLimits(raw: unknown, tokens: readonly TokenConfig[], where: string): SignerPolicyFile {
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
    out.set(t.mint, {
      perFill: units("perFill"),
      perMinute: units("perMinute"),
      perDay: units("perDay"),
      lossPerDay: units("lossPerDay"),
    });
  }
  const bands = new Map<string, PairBand>();
  for (const [pair, band] of Object.entries(parsed.data.pairs)) {
    const [b, q] = pair.split("/") as [string, string];
    const base = bySymbol.get(b);
    const quote = bySymbol.get(q);
    if (!base || !quote)
      throw new Error(`SIGNER_LIMITS: ${where}: pairs.${pair}: not a pair of configured token symbols`);
    const source = parsed.data.priceSources[band.priceSource];
    if (!source)
      throw new Error(
        `SIGNER_LIMITS: ${where}: pairs.${pair}.priceSource: ${band.priceSource} is not in the file's priceSources`,
      );
    if (source.kind === "pyth" && !source.feeds[pair])
      throw new Error(`SIGNER_LIMITS: ${where}: priceSources.${band.priceSource}.feeds: no feed for ${pair}`);
    if (source.kind === "static" && !source.prices[pair])
      throw new Error(
        `SIGNER_LIMITS: ${where}: priceSources.${band.priceSource}.prices: no price for ${pair}`,
      );
    bands.set(pair, { pair, base, quote, priceSource: band.priceSource, bandBps: band.bandBps });
  }
  return { limits: out, bands, priceSources: parsed.data.priceSources };
}

export function loadLimits(path: string, tokens: readonly TokenConfig[]): SignerPolicyFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`SIGNER_LIMITS: cannot read ${path}: ${(e as Error).message}`);
  }
  return parseLimits(raw, tokens, path);
}

/**
 * KEYS: message record, quote record, minute counter, day counter, day loss counter.
 * ARGV: quoteId, amount, minute limit, day limit, record TTL ms, minute TTL ms, day TTL ms,
 *       quote record value, the quote record it may replace ('' = none), loss, day loss limit.
 * Returns 0 = recorded, 1 = this message was signed before, 2 = the minute would cross its limit,
 * 3 = the day would, 4 = the quote was signed for another message (not the one it may replace),
 * 5 = the day's loss would cross its limit.
 */
const RECORD_AND_SPEND = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
local prior = redis.call('GET', KEYS[2])
if prior and prior ~= ARGV[9] then return 4 end
local amount = tonumber(ARGV[2])
local minute = tonumber(redis.call('GET', KEYS[3]) or '0')
if minute + amount > tonumber(ARGV[3]) then return 2 end
local day = tonumber(redis.call('GET', KEYS[4]) or '0')
if day + amount > tonumber(ARGV[4]) then return 3 end
local loss = tonumber(ARGV[10])
local lost = tonumber(redis.call('GET', KEYS[5]) or '0')
if loss > 0 and lost + loss > tonumber(ARGV[11]) then return 5 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[5])
redis.call('SET', KEYS[2], ARGV[8], 'PX', ARGV[5])
redis.call('INCRBY', KEYS[3], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[6])
redis.call('INCRBY', KEYS[4], ARGV[2])
redis.call('PEXPIRE', KEYS[4], ARGV[7])
if loss > 0 then
  redis.call('INCRBY', KEYS[5], ARGV[10])
  redis.call('PEXPIRE', KEYS[5], ARGV[7])
end
return 0
`;

export type SpendResult =
  | "recorded"
  | "alreadySigned"
  | "perMinute"
  | "perDay"
  | "quoteSignedForAnother"
  | "lossPerDay";

interface Scripted {
  rfqSignerRecordAndSpend(...args: (string | number)[]): Promise<number>;
}

/**
 * The keys one signature's script touches: its replay records (by message and by quote) and the
 * token's minute, day and day-loss windows. One `{signer}` hash tag, so one cluster slot
 * (test/redis/slots.test.ts).
 */
export function signerKeys(
  prefix: string,
  messageHash: string,
  mint: string,
  nowMs: number,
  quoteId = "",
): { record: string; quote: string; minute: string; day: string; loss: string } {
  const base = `${prefix}{signer}:`;
  const day = Math.floor(nowMs / 86_400_000);
  return {
    record: `${base}signed:${messageHash}`,
    quote: `${base}quote:${quoteId}`,
    minute: `${base}spent:${mint}:m:${Math.floor(nowMs / 60_000)}`,
    day: `${base}spent:${mint}:d:${day}`,
    loss: `${base}lost:${mint}:d:${day}`,
  };
}

/** How long the signer remembers a signed message and quote: far past any blockhash's life (a day). */
export const SIGNED_RECORD_TTL_MS = 24 * 60 * 60_000;

/** What the quote record holds: the message signed for it and that message's recent blockhash. */
export interface QuoteRecord {
  messageHash: string;
  blockhash: string;
}
const quoteRecordText = (r: QuoteRecord) => `${r.messageHash} ${r.blockhash}`;

/**
 * The signer's durable record: which messages and quotes it signed, and what each token's windows
 * have spent and lost. Keys share the `{signer}` hash tag so the one script runs unchanged on Redis
 * Cluster:
 *   <prefix>{signer}:signed:<messageHash>      the quoteId it was signed for (SET NX)
 *   <prefix>{signer}:quote:<quoteId>           "<messageHash> <blockhash>" of the one message signed for it
 *   <prefix>{signer}:spent:<mint>:m:<minute>   smallest units paid out in that minute
 *   <prefix>{signer}:spent:<mint>:d:<day>      ... in that UTC day
 *   <prefix>{signer}:lost:<mint>:d:<day>       smallest units given away beyond the signer's price that day
 */
export class SignerLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    // Stryker disable next-line ConditionalExpression,StringLiteral: defining the command again on a client that has it changes nothing
    if (!("rfqSignerRecordAndSpend" in redis))
      redis.defineCommand("rfqSignerRecordAndSpend", { numberOfKeys: 5, lua: RECORD_AND_SPEND });
  }

  /** The message already signed for this quote, if any. */
  async quoteRecord(quoteId: string): Promise<QuoteRecord | undefined> {
    // Stryker disable next-line StringLiteral: the quote key is the prefix and quoteId only (the message and mint name other keys)
    const raw = await this.redis.get(signerKeys(this.prefix, "", "", 0, quoteId).quote);
    if (!raw) return undefined;
    // Stryker disable next-line StringLiteral: split of a non-empty string has a first element, so only blockhash's default is reachable (tested)
    const [messageHash = "", blockhash = ""] = raw.split(" ");
    return { messageHash, blockhash };
  }

  async recordAndSpend(input: {
    messageHash: string;
    quoteId: string;
    blockhash: string;
    /** The quote's earlier record this signature may replace (its message can no longer land). */
    replaces?: QuoteRecord;
    mint: string;
    amount: bigint;
    /** What the fill gives away beyond the signer's price, in `mint` units (0 when none). */
    loss: bigint;
    limits: TokenLimits;
    nowMs: number;
  }): Promise<SpendResult> {
    const keys = signerKeys(this.prefix, input.messageHash, input.mint, input.nowMs, input.quoteId);
    const r = await (this.redis as unknown as Scripted).rfqSignerRecordAndSpend(
      keys.record,
      keys.quote,
      keys.minute,
      keys.day,
      keys.loss,
      input.quoteId,
      input.amount.toString(),
      input.limits.perMinute.toString(),
      input.limits.perDay.toString(),
      SIGNED_RECORD_TTL_MS,
      120_000,
      2 * 86_400_000,
      quoteRecordText({ messageHash: input.messageHash, blockhash: input.blockhash }),
      input.replaces ? quoteRecordText(input.replaces) : "",
      input.loss.toString(),
      input.limits.lossPerDay.toString(),
    );
    return (
      (["recorded", "alreadySigned", "perMinute", "perDay", "quoteSignedForAnother", "lossPerDay"] as const)[
        r
      ] ?? "alreadySigned"
    );
  }
}

/**
 * KEYS: the quote's companion record, the mint's issued-today counter. ARGV: amount, daily cap,
 * record TTL ms, day TTL ms. Returns 0 = recorded, 1 = a companion was made for this quote before,
 * 2 = the day's cap would be crossed.
 */
const RECORD_ISSUANCE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
local issued = tonumber(redis.call('GET', KEYS[2]) or '0')
if issued + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('INCRBY', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 0
`;

/**
 * The signer's own issuance record (the issuer key's caps, kept where the webhook's issuance usage is
 * not trusted): one companion per quote, and what was minted per mint and UTC day.
 *   <prefix>{signer}:companion:<quoteId>       the amount minted for that quote's fill
 *   <prefix>{signer}:issued:<mint>:d:<day>     smallest units minted that UTC day
 */
export class SignerIssuanceLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {
    // Stryker disable next-line ConditionalExpression,StringLiteral: defining the command again on a client that has it changes nothing
    if (!("rfqSignerRecordIssuance" in redis))
      redis.defineCommand("rfqSignerRecordIssuance", { numberOfKeys: 2, lua: RECORD_ISSUANCE });
  }

  async record(input: {
    quoteId: string;
    mint: string;
    amount: bigint;
    dailyCap: bigint;
    nowMs: number;
  }): Promise<"recorded" | "alreadyMade" | "dailyCap"> {
    const base = `${this.prefix}{signer}:`;
    const r = await (
      this.redis as unknown as { rfqSignerRecordIssuance(...a: (string | number)[]): Promise<number> }
    ).rfqSignerRecordIssuance(
      `${base}companion:${input.quoteId}`,
      `${base}issued:${input.mint}:d:${Math.floor(input.nowMs / 86_400_000)}`,
      input.amount.toString(),
      input.dailyCap.toString(),
      SIGNED_RECORD_TTL_MS,
      2 * 86_400_000,
    );
    return (["recorded", "alreadyMade", "dailyCap"] as const)[r] ?? "alreadyMade";
  }
}

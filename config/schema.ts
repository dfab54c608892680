/**
 * The one configuration schema. `loadConfig` (config/load.ts) parses a JSON file plus environment
 * variables through it once at boot; any failure stops the process with the offending key named.
 *
 * Amounts are strings of integers in the token's smallest units (u64), prices are decimal strings:
 * neither ever passes through a float on the way to a signed amount. Sizes may be written in tokens in
 * the file ("500 SOL"); config/token-amounts.ts converts them, exactly, before this schema reads them.
 */
import bs58 from "bs58";
import { z } from "zod";
import { U64_MAX } from "../amounts/u64.ts";
import { strictObject } from "./strict.ts";

export { U64_MAX };

/** A 32-byte key in base58: what bs58 decodes to exactly 32 bytes. */
export function isBase58Pubkey(s: string): boolean {
  if (s.length < 32 || s.length > 44) return false;
  return bs58.decodeUnsafe(s)?.length === 32;
}

export const base58Pubkey = z.string().refine(isBase58Pubkey, { message: "must be a base58 public key" });

/**
 * A u64 amount in smallest units as a string of digits. One check, in order, so BigInt() only ever
 * sees digits (a refine after a failed regex would still run). The wire contract's positive amounts
 * use the same check with `positive` set.
 */
export function u64Digits(opts: { positive?: boolean; digitsMessage: string }) {
  return z.string({ error: "must be a string of digits" }).check((ctx) => {
    const s = ctx.value;
    if (!/^\d+$/.test(s)) {
      ctx.issues.push({ code: "custom", input: s, message: opts.digitsMessage });
    } else if (s.length > 20 || BigInt(s) > U64_MAX) {
      ctx.issues.push({ code: "custom", input: s, message: "must fit in u64" });
    } else if (opts.positive && BigInt(s) === 0n) {
      ctx.issues.push({ code: "custom", input: s, message: "must be greater than zero" });
    }
  });
}

export const u64String = u64Digits({ digitsMessage: "must be a non-negative integer in smallest units" });

export const decimalString = z.string().regex(/^\d+(\.\d+)?$/, "must be a positive decimal number");

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

export const tokenSchema = strictObject({
  /** The token's mint address. */
  mint: base58Pubkey,
  /** The name pairs, limits and logs use for the token. */
  symbol: z.string().min(1).max(16),
  /** The mint's decimals (checked against the chain by npm run doctor). */
  decimals: z.number().int().min(0).max(18),
  /** SPL Token or Token-2022: the program that owns the mint. */
  tokenProgram: z.enum([TOKEN_PROGRAM, TOKEN_2022_PROGRAM]).default(TOKEN_PROGRAM),
  /** Advertised on /permissioned-tokens instead of /tokens (minted or burned just in time). */
  permissioned: z.boolean().default(false),
  /** Stablecoins: stable-to-stable swaps carry no operator fee. */
  stable: z.boolean().default(false),
  /** Inventory below this (smallest units) stops the token being advertised (inventory issue). */
  minInventory: u64String.default("0"),
  /** Units never promised: a quote's output must fit in balance - reserved - safetyBuffer. */
  safetyBuffer: u64String.default("0"),
  /**
   * The balance (smallest units) the maker aims to hold. Net position = balance - target; skew and
   * exposure limits measure from here. Unset: no skew, no exposure limit for this token.
   */
  targetInventory: u64String.optional(),
  /** Largest |net position| in USD a trade may leave; trades moving beyond it are declined. */
  maxExposureUsd: decimalString.optional(),
});
export type TokenConfig = z.infer<typeof tokenSchema>;

/**
 * A spread level: the base above the previous level's bound, up to `upToBase` (base smallest units),
 * trades at `spreadBps` from mid; a size sweeps the levels one by one (pricing/README.md).
 */
export const levelSchema = strictObject({
  /** The level's bound (base smallest units): the base above the previous level's, up to this, gets this spread. */
  upToBase: u64String,
  /** Distance from mid, bps, of this level's price (taker side: worse by this much). */
  spreadBps: z.number().int().min(0).max(5000),
});
type Level = z.infer<typeof levelSchema>;

/**
 * Inventory skew for a pair: the base token's net position (balance - targetInventory) moves both
 * sides of the price by up to `maxBps`, reached when the position is `fullAtBase` units off target.
 * Long base: cheaper ask and lower bid, so takers buy it back down; short: the opposite.
 */
export const skewSchema = strictObject({
  /** The most the skew moves the price, bps. */
  maxBps: z.number().int().min(0).max(1000),
  /** The net position (base smallest units) at which the skew reaches maxBps. */
  fullAtBase: u64String.refine((s) => BigInt(s) > 0n, "must be greater than zero"),
});

function checkLevels(levels: Level[], path: string, maxBase: string, ctx: z.RefinementCtx): void {
  let prev = 0n;
  levels.forEach((l, i) => {
    const up = BigInt(l.upToBase);
    if (up <= prev) {
      ctx.addIssue({ code: "custom", path: [path, i, "upToBase"], message: "levels must ascend" });
    }
    prev = up;
  });
  if (prev < BigInt(maxBase)) {
    ctx.addIssue({ code: "custom", path: [path], message: "the last level must reach maxBase" });
  }
}

/**
 * What a fill whose compute-unit price a wallet raised above the quoted `prioritizationFeeToUse` may
 * cost the maker in all (limit x price + signature fees): at most `maxLamports`, and at most
 * `maxNotionalBps` of the quote's notional in lamports (its SOL leg; a pair without a SOL leg has the
 * lamports cap alone). Above either, the fill is refused `RAISED_FEE_CAP_EXCEEDED`.
 */
export const raisedFeeCapSchema = strictObject({
  /** The most lamports such a fill may cost the maker in all. */
  maxLamports: u64String,
  /** The most, in bps of the quote's SOL leg, such a fill may cost the maker. */
  maxNotionalBps: z.number().int().min(0).max(10_000),
});
export type RaisedFeeCapConfig = z.infer<typeof raisedFeeCapSchema>;

export const pairSchema = strictObject({
  /** Symbols from `tokens`. The price is quote units per one base unit (human units). */
  base: z.string(),
  /** Symbol of the quote token (from `tokens`). */
  quote: z.string(),
  /** Off: the pair is not quoted (the admin API's per-pair switch overrides it at run time). */
  enabled: z.boolean().default(true),
  /**
   * A pair the maker can run without: while it cannot be quoted at all (a token not advertised, a
   * stale or missing price) /ready stays 200 in production; otherwise it answers 503. Either way the
   * condition is logged and listed on /ready.
   */
  optional: z.boolean().default(false),
  /** Smallest and largest base-side size quoted, in base smallest units. */
  minBase: u64String,
  /** The largest base-side size quoted, base smallest units. */
  maxBase: u64String,
  /** Ascending by `upToBase`; the last level must reach `maxBase`. */
  levels: z.array(levelSchema).min(1),
  /** Name of a price source in `priceSources`; defaults to "static". */
  priceSource: z.string().default("static"),
  /** Levels for the maker's bid (taker sells base); default `levels`. */
  bidLevels: z.array(levelSchema).min(1).optional(),
  /** Levels for the maker's ask (taker buys base); default `levels`. */
  askLevels: z.array(levelSchema).min(1).optional(),
  /** Largest quote notional in USD (valued through the quote token's USD price). Unset: no cap. */
  maxNotionalUsd: decimalString.optional(),
  skew: skewSchema.optional(),
  /** This pair's cap on a raised compute-unit price; unset: `limits.raisedFeeCap`. */
  raisedFeeCap: raisedFeeCapSchema.optional(),
}).superRefine((p, ctx) => {
  if (BigInt(p.minBase) > BigInt(p.maxBase)) {
    ctx.addIssue({ code: "custom", path: ["minBase"], message: "must not exceed maxBase" });
  }
  checkLevels(p.levels, "levels", p.maxBase, ctx);
  if (p.bidLevels) checkLevels(p.bidLevels, "bidLevels", p.maxBase, ctx);
  if (p.askLevels) checkLevels(p.askLevels, "askLevels", p.maxBase, ctx);
});
export type PairConfig = z.infer<typeof pairSchema>;

export const staticPriceSourceSchema = strictObject({
  /**
   * Fixed mids from the configuration (the paper setup's; production refuses them unless
   * ALLOW_STATIC_PRICES).
   */
  kind: z.literal("static"),
  /** Mid prices keyed "BASE/QUOTE", e.g. {"SOL/USDC": "180.25"}. */
  prices: z.record(z.string(), decimalString),
});

/**
 * Prices the maker's own pricing engine writes to Redis (see pricing/redis.ts for the payload): every
 * instance holds them in memory, updated by pub/sub and re-read every `pollMs` in case a message was
 * lost. Staleness is measured from the writer's timestamp.
 */
export const redisPriceSourceSchema = strictObject({
  kind: z.literal("redis"),
  /** Prefix of the price keys (`<keyPrefix><PAIR>`) the pricing engine writes. */
  keyPrefix: z.string().min(1).default("rfq:price:"),
  /** Pub/sub channel the pricing engine announces new prices on. */
  channel: z.string().min(1).default("rfq:prices"),
  /** A price older than this (by the writer's timestamp) stops the pair quoting. */
  maxAgeMs: z.number().int().min(100).default(5_000),
  /** How often every price key is re-read in case a message was lost. */
  pollMs: z.number().int().min(50).max(1_000).default(500),
});

/** A Pyth price feed id: 32 bytes hex, with or without 0x. */
export const pythFeedId = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, "must be a 32-byte hex Pyth feed id")
  .transform((s) => s.replace(/^0x/, "").toLowerCase());

/**
 * Pyth prices from a Hermes server's SSE stream (/v2/updates/price/stream). Each pair is one feed
 * (`base`, e.g. SOL/USD for SOL/USDC) or the ratio of two (`base` / `quote`, e.g. JUP/USD / SOL/USD).
 */
export const pythPriceSourceSchema = strictObject({
  kind: z.literal("pyth"),
  /** Hermes base URL (any path prefix, such as a provider's token, is kept). */
  url: z.url({ protocol: /^https?$/ }).default("https://hermes.pyth.network"),
  /** A price older than this (by Pyth's publish time) stops the pair quoting. */
  maxAgeMs: z.number().int().min(500).default(10_000),
  /** Refuse a price whose confidence interval is wider than this (bps of the price). */
  maxConfBps: z.number().int().min(1).max(10_000).optional(),
  /** Reconnect when the stream has been silent this long. */
  idleReconnectMs: z.number().int().min(1_000).default(15_000),
  /** Feeds by pair ("BASE/QUOTE"): `base`, and `quote` when the price is their ratio. */
  feeds: z.record(z.string(), strictObject({ base: pythFeedId, quote: pythFeedId.optional() })),
});

export const priceSourceSchema = z.discriminatedUnion("kind", [
  staticPriceSourceSchema,
  redisPriceSourceSchema,
  pythPriceSourceSchema,
]);
export type PriceSourceConfig = z.infer<typeof priceSourceSchema>;

/** Maker inventory: balances read from the chain, reservations shared through Redis when configured. */
export const inventorySchema = strictObject({
  /** How often balances are re-read from the chain. */
  refreshMs: z.number().int().min(1_000).default(15_000),
  /** How often each instance re-reads the shared reservation totals (Redis) into memory. */
  syncMs: z.number().int().min(50).max(1_000).default(250),
  /** Native SOL the maker keeps for fees and rent; below it no quote is given. */
  minSolLamports: u64String.default("10000000"),
  /** Balances older than this (refresh failing) stop quoting. */
  maxBalanceAgeMs: z.number().int().min(5_000).default(120_000),
  /**
   * A committed fill keeps its units reserved until a balance read that started this long after the
   * confirmation, so a read racing the confirmation cannot make the units count twice.
   */
  settleMarginMs: z.number().int().min(0).default(2_000),
});

/** The global pause (kill switch) and per-pair switches, shared through Redis when configured. */
export const controlsSchema = strictObject({
  /** Every instance re-reads the switches this often (pub/sub makes it faster). */
  pollMs: z.number().int().min(50).max(1_000).default(500),
  /** With Redis unreadable this long, an instance cannot know it is paused: it stops quoting. */
  failClosedAfterMs: z.number().int().min(500).default(3_000),
});

/**
 * Toxic-flow controls (src/toxicity/): takers whose fills lose the maker money after the fact. All off
 * unless `enabled`; with it off the quote and swap paths never consult a taker's standing.
 */
export const toxicitySchema = strictObject({
  /** The master switch: flagging, widening or refusing, and the deny and allow lists. */
  enabled: z.boolean().default(false),
  /** A taker is judged only once it has at least this many 60 s markouts (its last N fills). */
  minFills: z.number().int().min(1).max(1_000).default(20),
  /**
   * Flagged when the average 60 s markout of its last `minFills` fills (bps, maker's side, positive in
   * the maker's favour) is below this, e.g. -10: on average the price moved 10 bps against the maker.
   */
  flagBelowBps: z.number().min(-10_000).max(10_000).default(-10),
  /** How long a flag raised by the markouts lasts (ms); the admin API sets its own. */
  flagTtlMs: z
    .number()
    .int()
    .min(1_000)
    .max(90 * 86_400_000)
    .default(86_400_000),
  /** What a flagged taker's quote gets: `widen` (the spread plus `widenBps`) or `refuse` (404 TAKER_FLAGGED). */
  action: z.enum(["widen", "refuse"]).default("widen"),
  /** Added to the pair's spread for a flagged taker (each side moves this far further from mid). */
  widenBps: z.number().int().min(1).max(5_000).default(25),
  /** Always refused (404 TAKER_DENIED), whatever its markouts; merged with the admin API's list. */
  deny: z.array(base58Pubkey).default([]),
  /** Never flagged, widened or refused (the deny list included); merged with the admin API's list. */
  allow: z.array(base58Pubkey).default([]),
  /** Every instance re-reads the shared flags and lists this often (pub/sub makes a change faster). */
  reloadMs: z.number().int().min(100).max(60_000).default(1_000),
});
export type ToxicityConfig = z.infer<typeof toxicitySchema>;

export const limitsSchema = strictObject({
  /** Largest accepted request body, bytes. A fill transaction is at most 1232 bytes (base64 ~1.7 KB). */
  maxBodyBytes: z.number().int().min(1024).max(1_048_576).default(16_384),
  /** Quote lifetime: the operator's 55 s (35 s for the user, 20 s for the maker). */
  quoteTtlMs: z.number().int().min(1_000).max(600_000).default(55_000),
  /** Quote path: answer 404 when less than this much of the operator's budget remains. */
  minQuoteBudgetMs: z.number().int().min(0).max(250).default(15),
  /**
   * Quote path, past capacity (src/http/shed.ts): a quote that has already waited more than this
   * share of its budget since the operator sent it (x-request-start; 0.6: 150 ms of 250) gets a fast
   * 404 `OVERLOADED` instead of being priced, so that the queue stays short and the quotes that are
   * priced come within the budget. Halved while the queue is standing (src/http/shed.ts,
   * StandingQueue). 0 turns it off.
   */
  shedAfterQueuedShare: z.number().min(0).max(1).default(0.6),
  /** Compute-unit price we answer when the operator suggests none (micro-lamports per CU). */
  defaultComputeUnitPriceMicroLamports: z.number().int().min(0).default(10_000),
  /** Cap on the compute-unit price we agree to pay as fee payer (micro-lamports per CU). */
  maxComputeUnitPriceMicroLamports: z.number().int().min(0).default(1_000_000),
  /** The most lamports the maker pays for one fill: compute limit x price + signature fees. */
  maxFeeLamports: u64String.default("2000000"),
  /**
   * Wallets raise the compute-unit price after the quote: such a fill is accepted while the maker's
   * whole fee stays within this cap (pairs override it with their own `raisedFeeCap`).
   */
  raisedFeeCap: raisedFeeCapSchema.default({ maxLamports: "100000", maxNotionalBps: 10 }),
  /**
   * How long an unclaimed quote stays in the store after its expiry (ms). A /swap needs the quote
   * only until the quote expires (later fills are refused as expired); this margin lets a /swap that
   * arrives just after expiry, or from an instance whose clock runs behind, get the precise "expired"
   * answer instead of "unknown quote". A claimed quote is kept as long as its claim, so a retried
   * /swap always gets its first answer. Redis memory grows with rate x (quoteTtlMs + this): see
   * docs/deployment.md, "Redis memory".
   */
  quoteRetainAfterExpiryMs: z.number().int().min(0).max(3_600_000).default(30_000),
  /** Bound on the in-memory quote store. */
  memoryStoreMaxQuotes: z.number().int().min(100).default(200_000),
  /**
   * Simulate every co-signed fill (signatures verified, blockhash checked) before sending it; a fill
   * whose simulation fails is not sent, its quote and reservation are released, and the answer names
   * the simulated error. On by default (production included); off only to measure or debug.
   */
  preflightSimulation: z.boolean().default(true),
  /**
   * Blocks a fill's recent blockhash must still be accepted for when we sign (mainnet: 150 in all, one
   * per ~400 ms): a blockhash closer to expiry would expire before the fill could land.
   */
  minBlockhashBlocksLeft: z.number().int().min(0).max(150).default(20),
  /** How often the background cache of recent blockhashes polls the chain, ms. */
  blockhashPollMs: z.number().int().min(100).max(10_000).default(1_000),
});

/**
 * One token's rebalancing target (npm run rebalance): when the maker's free balance (balance minus
 * reservations) leaves `target +/- band`, the rebalancer trades it back toward `target` against the
 * `against` token through the operator's swap API, one trade of at most `maxTrade` per pass.
 */
export const rebalanceTargetSchema = strictObject({
  /** The free balance aimed at, smallest units. */
  target: u64String,
  /** How far from `target` (either way, smallest units) the balance may drift before a trade. */
  band: u64String,
  /** The largest single trade, in this token's smallest units (bought or sold). */
  maxTrade: u64String.refine((s) => BigInt(s) > 0n, "must be greater than zero"),
  /** The token paid when buying this one and received when selling it (a symbol of `tokens`). */
  against: z.string().min(1),
  /**
   * The worst price accepted: what the order delivers, valued at the maker's own mids, may be at most
   * this many bps below what it costs (fees included, since the order's amounts include them).
   */
  maxSlippageBps: z.number().int().min(0).max(5_000),
  /** No new trade of this token for this long after the last one (ms). */
  cooldownMs: z.number().int().min(0).default(60_000),
  /** The most USD (at the maker's mids) this token's trades may move per UTC day. */
  dailyNotionalUsd: decimalString,
});
export type RebalanceTarget = z.infer<typeof rebalanceTargetSchema>;

export const ROUTER_NAMES = ["router_1", "router_2", "router_3", "router_4"] as const;

export const rebalanceSchema = strictObject({
  /** Targets by token symbol; a token without one is never traded. */
  targets: z.record(z.string(), rebalanceTargetSchema).default({}),
  /** Routers the rebalancer's orders exclude (`excludeRouters`); none by default. */
  excludeRouters: z.array(z.enum(ROUTER_NAMES)).default([]),
  /**
   * The aggregator routers' swap programs, by router: an order from router_1, router_3 or router_4 is
   * signed only when its transaction calls one of them and nothing but them, the compute budget and
   * ATA creation. router_2 (the RFQ router) always needs the order-engine fill and is not listed.
   * None by default: orders from the other routers are refused.
   */
  swapPrograms: strictObject({
    router_1: z.array(strictObject({ name: z.string().min(1), programId: base58Pubkey })).optional(),
    router_3: z.array(strictObject({ name: z.string().min(1), programId: base58Pubkey })).optional(),
    router_4: z.array(strictObject({ name: z.string().min(1), programId: base58Pubkey })).optional(),
  }).default({}),
  /**
   * The most lamports a rebalancing transaction may take from the maker (the network fees and rent the
   * order declares, never more than it declares; a gasless order declares none).
   */
  maxFeeLamports: u64String.default("5000000"),
  /** Pause between passes of `npm run rebalance -- --loop` (ms). */
  intervalMs: z.number().int().min(1_000).default(30_000),
  /** How long one order request to the operator may take. */
  orderTimeoutMs: z.number().int().min(100).max(60_000).default(5_000),
  /** The operator answers an execute once the transaction landed or failed: allow a blockhash's life. */
  executeTimeoutMs: z.number().int().min(1_000).max(300_000).default(90_000),
});
export type RebalanceConfig = z.infer<typeof rebalanceSchema>;

/**
 * Who may hold a permissioned token. `allowlist`: the wallets that may buy or sell it (a quote naming
 * any other taker is a 404 `HOLDER_NOT_ALLOWED`, and its /swap is refused with that code). Unset: any
 * wallet (for a token whose holder rules are enforced elsewhere, e.g. by the mint's own extensions).
 */
export const holderRulesSchema = strictObject({
  /** The wallets that may buy or sell the token; unset: any wallet. */
  allowlist: z.array(base58Pubkey).min(1).optional(),
});

/**
 * Issuance policy of one permissioned token (keyed by its symbol in `issuance`): the maker is its
 * issuer and mints what a taker buys just before the fill, and burns what a taker sells just after it,
 * in one bundle with the fill (src/issuance/companion.ts). What the maker can deliver of it is the issuance
 * left under the caps, not held inventory.
 */
export const issuanceSchema = strictObject({
  /**
   * The mint authority's public key: the issuer key (ISSUER_KEYPAIR; the paper setup generates
   * `DATA_DIR/issuer-keypair.json`) or the maker key itself. Unset: the issuer key, whichever it is.
   * Checked at start against the key actually held.
   */
  mintAuthority: base58Pubkey.optional(),
  /** Mint what the taker buys just before the fill (else: a buy is refused, `ISSUANCE_DISABLED`). */
  mintOnBuy: z.boolean().default(true),
  /** Burn what the taker sells just after the fill (else: a sell is refused, `ISSUANCE_DISABLED`). */
  burnOnSell: z.boolean().default(true),
  /** The most one fill may mint or burn, smallest units. */
  maxPerFill: u64String.refine((s) => BigInt(s) > 0n, "must be greater than zero"),
  /** The most that may be minted, and separately burned, per UTC day across every instance, smallest units. */
  maxPerDay: u64String.refine((s) => BigInt(s) > 0n, "must be greater than zero"),
  /**
   * The price source backing the token (a name in `priceSources`, e.g. a NAV feed in Redis): every
   * pair that trades the token must price from it.
   */
  priceSource: z.string().min(1),
  holders: holderRulesSchema.default({}),
  /** Lamports the maker's companion transaction tips to one of the bundle engine's tip accounts. */
  tipLamports: u64String.default("10000"),
});
export type IssuanceConfig = z.infer<typeof issuanceSchema>;

/** The RFQ v2 level stream (src/rfq-v2/): which pairs, and how their levels are sent. */
export const rfqV2Schema = strictObject({
  /** Pair keys ("SOL/USDC") whose levels are streamed when RFQ_V2_URL is set. */
  pairs: z.array(z.string().regex(/^[^/]+\/[^/]+$/, 'must be a pair key like "SOL/USDC"')).default([]),
  /**
   * How long a level set is valid, seconds (the operator's minimum is 10). Also the longest the
   * operator keeps routing takers to levels the maker has withdrawn (pause, pair switch, stale price,
   * empty inventory): there is no withdraw message, so a withdrawn set lives there until it expires.
   */
  quoteExpirySeconds: z.number().int().min(10).max(3_600).default(10),
  /** A pair's levels are re-sent at least this often (and at once when they change), seconds. */
  refreshSeconds: z.number().int().min(1).max(3_600).default(5),
  /**
   * Base atoms per lot, per pair key: the price step of the pair's levels on both channels (/quote and the
   * stream); unset: the smallest power of ten whose price step is at most 1 bps.
   */
  lotSizeBase: z.record(z.string(), u64String).default({}),
  /** The cluster named in every level set. */
  cluster: z.enum(["mainnet", "devnet"]).default("mainnet"),
}).refine((v) => v.refreshSeconds < v.quoteExpirySeconds, {
  path: ["refreshSeconds"],
  message: "must be shorter than quoteExpirySeconds, so levels are refreshed before they expire",
});
export type RfqV2Config = z.infer<typeof rfqV2Schema>;

export const fileConfigSchema = strictObject({
  /** Path prefix the operator calls, e.g. "/jupiter/rfq". Empty string for none. */
  basePath: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, "must be empty or like /jupiter/rfq (no trailing slash)")
    .default(""),
  /** The tokens the maker trades. */
  tokens: z.array(tokenSchema).min(1),
  /** The pairs quoted, each with its sizes, spread levels and price source. */
  pairs: z.array(pairSchema).min(1),
  /** The price sources by name, each of one kind (static, redis, pyth); pairs name theirs. */
  priceSources: z.record(z.string(), priceSourceSchema),
  /** Request, quote, fee and blockhash limits. */
  limits: limitsSchema.default(limitsSchema.parse({})),
  /**
   * Key prefix for everything this service keeps in Redis (config/load.ts `redisKeys`): quotes and
   * claims, the fill journal, inventory reservations, the switches, the advertised lists. The maker's
   * price engine's keys are its own (`priceSources.*.keyPrefix`).
   */
  redisPrefix: z.string().min(1).default("rfq:"),
  /** Maker inventory: balances, reservations, SOL floor. */
  inventory: inventorySchema.default(inventorySchema.parse({})),
  /** The kill switch and per-pair switches. */
  controls: controlsSchema.default(controlsSchema.parse({})),
  /** Rebalancing targets and the checks on the operator's orders (npm run rebalance). */
  rebalance: rebalanceSchema.default(rebalanceSchema.parse({})),
  /** Toxic-flow controls, off by default. */
  toxicity: toxicitySchema.default(toxicitySchema.parse({})),
  /** Issuance policies of permissioned tokens, by symbol (see `issuanceSchema`). */
  issuance: z.record(z.string(), issuanceSchema).default({}),
  rfqV2: rfqV2Schema.default(rfqV2Schema.parse({})),
}).superRefine((f, ctx) => {
  // Cross-field rules of the pricing and inventory features; config/load.ts checks the rest.
  const allowed = new Set(f.toxicity.allow);
  f.toxicity.deny.forEach((taker, i) => {
    if (allowed.has(taker)) {
      ctx.addIssue({
        code: "custom",
        path: ["toxicity", "deny", i],
        message: `${taker} is also in toxicity.allow: a taker is on one list or the other`,
      });
    }
  });
  const pairKeys = new Set(f.pairs.map((p) => `${p.base}/${p.quote}`));
  f.rfqV2.pairs.forEach((k, i) => {
    if (!pairKeys.has(k))
      ctx.addIssue({ code: "custom", path: ["rfqV2", "pairs", i], message: `${k} is not a configured pair` });
  });
  for (const k of Object.keys(f.rfqV2.lotSizeBase)) {
    if (!f.rfqV2.pairs.includes(k))
      ctx.addIssue({
        code: "custom",
        path: ["rfqV2", "lotSizeBase", k],
        message: `${k} is not in rfqV2.pairs`,
      });
  }
  const bySymbol = new Map(f.tokens.map((t) => [t.symbol, t]));
  f.pairs.forEach((p, i) => {
    const key = `${p.base}/${p.quote}`;
    const source = f.priceSources[p.priceSource];
    if (source?.kind === "pyth" && !source.feeds[key]) {
      ctx.addIssue({
        code: "custom",
        path: ["priceSources", p.priceSource, "feeds"],
        message: `no feed for ${key}`,
      });
    }
    if (p.skew && bySymbol.get(p.base) && bySymbol.get(p.base)!.targetInventory === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["pairs", i, "skew"],
        message: `needs tokens[${p.base}].targetInventory (skew measures from the target)`,
      });
    }
  });
  for (const [symbol, t] of Object.entries(f.rebalance.targets)) {
    const path = ["rebalance", "targets", symbol];
    if (!bySymbol.has(symbol)) {
      ctx.addIssue({ code: "custom", path, message: `unknown token symbol ${symbol}` });
    }
    if (!bySymbol.has(t.against)) {
      ctx.addIssue({
        code: "custom",
        path: [...path, "against"],
        message: `unknown token symbol ${t.against}`,
      });
    } else if (t.against === symbol) {
      ctx.addIssue({
        code: "custom",
        path: [...path, "against"],
        message: "must differ from the token itself",
      });
    }
    if (BigInt(t.band) > BigInt(t.target)) {
      ctx.addIssue({ code: "custom", path: [...path, "band"], message: "must not exceed target" });
    }
  }
  checkIssuance(f, ctx);
  f.tokens.forEach((t, i) => {
    if (t.maxExposureUsd !== undefined && t.targetInventory === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["tokens", i, "maxExposureUsd"],
        message: "needs targetInventory (exposure is measured from the target)",
      });
    }
  });
});
export type FileConfig = z.infer<typeof fileConfigSchema>;

/** Cross-field rules of `issuance`: a permissioned token of ours, priced from its own source. */
function checkIssuance(
  f: {
    tokens: TokenConfig[];
    pairs: PairConfig[];
    priceSources: Record<string, unknown>;
    issuance: Record<string, IssuanceConfig>;
  },
  ctx: z.RefinementCtx,
): void {
  for (const [symbol, policy] of Object.entries(f.issuance)) {
    const path = ["issuance", symbol];
    const token = f.tokens.find((t) => t.symbol === symbol);
    if (!token) {
      ctx.addIssue({ code: "custom", path, message: `unknown token symbol ${symbol}` });
      continue;
    }
    if (!token.permissioned) {
      ctx.addIssue({
        code: "custom",
        path,
        message: `tokens[${symbol}].permissioned must be true (only a permissioned token is minted or burned just in time)`,
      });
    }
    if (BigInt(policy.maxPerFill) > BigInt(policy.maxPerDay)) {
      ctx.addIssue({ code: "custom", path: [...path, "maxPerFill"], message: "must not exceed maxPerDay" });
    }
    if (!(policy.priceSource in f.priceSources)) {
      ctx.addIssue({
        code: "custom",
        path: [...path, "priceSource"],
        message: `unknown price source ${policy.priceSource}`,
      });
    }
    f.pairs.forEach((p, i) => {
      if ((p.base === symbol || p.quote === symbol) && p.priceSource !== policy.priceSource) {
        ctx.addIssue({
          code: "custom",
          path: ["pairs", i, "priceSource"],
          message: `must be ${policy.priceSource}, the source backing ${symbol}'s issuance`,
        });
      }
      if (p.base === symbol && p.quote === symbol) return;
      const other = p.base === symbol ? p.quote : p.quote === symbol ? p.base : undefined;
      if (other && f.issuance[other]) {
        ctx.addIssue({
          code: "custom",
          path: ["pairs", i],
          message: "a pair of two issued tokens is not supported (one companion transaction per fill)",
        });
      }
    });
  }
}

const boolFlag = z
  .enum(["0", "1", "true", "false", ""])
  .default("")
  .transform((v) => v === "1" || v === "true");

/**
 * What is wrong with a `unix:` REDIS_URL, or undefined: it names an absolute socket path and no host,
 * and its only option is the database (`?db=N`).
 */
export function unixSocketProblem(url: string): string | undefined {
  const u = new URL(url);
  const shape = "unix:///path/to/redis.sock[?db=N]";
  if (u.host !== "") return `a unix socket URL names no host (${shape})`;
  if (!u.pathname.startsWith("/") || u.pathname === "/") return `no socket path (${shape})`;
  for (const [key, value] of u.searchParams) {
    if (key !== "db") return `unknown option ${key} (${shape})`;
    if (!/^\d+$/.test(value)) return `db must be a database number, not ${JSON.stringify(value)}`;
  }
  return undefined;
}

const optionalNonEmpty = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

/** Environment variables: the names operators' tooling relies on. */
export const envSchema = z.object({
  /** The operator's listener (operator routes, /health, /ready). */
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  /** The address the operator's listener binds. */
  HOST: z.string().min(1).default("0.0.0.0"),
  /**
   * PORT's accept queue (listen(2)'s backlog; Linux caps it at net.core.somaxconn, and the webhook
   * warns when it does). Past capacity the operator opens a connection per quote it has in flight, in
   * bursts; a full queue drops their SYNs, and each such quote then waits for TCP's retransmit (1 s,
   * then 3 s): a timeout instead of the fast 404 the shedding gives once the request is read.
   * Node's own default is 511.
   */
  LISTEN_BACKLOG: z.coerce.number().int().min(1).max(65_535).default(4_096),
  /**
   * Path of the JSON configuration file; unset: config/default.json of the checkout (also for the compiled
   * build: an edit needs no rebuild).
   */
  CONFIG: optionalNonEmpty,
  /**
   * Redis for the quote store, reservations and switches; unset (and no other topology): in memory. A
   * single node: `redis://` or `rediss://` (TLS), or `unix:///path/to/redis.sock[?db=N]` for a Redis on
   * the same host (no TCP stack: less CPU per command on both sides; docs/deployment.md, "Redis topologies").
   */
  REDIS_URL: optionalNonEmpty.pipe(
    z
      .url({
        protocol: /^(rediss?|unix)$/,
        error: (issue) =>
          typeof issue.input === "string" && !/^[a-z][a-z0-9+.-]*:\/\//i.test(issue.input)
            ? `${issue.input}: no scheme: write redis://${issue.input} (rediss:// for TLS, unix:///path/to/redis.sock for a socket)`
            : "redis://, rediss:// or unix:///path/to/redis.sock",
      })
      .superRefine((url, ctx) => {
        const problem = url.startsWith("unix:") ? unixSocketProblem(url) : undefined;
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
  ),
  /**
   * Redis topology (src/redis/client.ts builds the one client from these; set at most one of
   * REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS). Cluster: comma-separated seed nodes
   * (`host:port`, or `redis://` / `rediss://` URLs). Sentinel: comma-separated sentinels `host:port`
   * plus the master's name.
   */
  REDIS_CLUSTER_NODES: optionalNonEmpty,
  /** Instead of REDIS_URL: the sentinels, `host:port,...` (with REDIS_SENTINEL_MASTER). */
  REDIS_SENTINELS: optionalNonEmpty,
  /** The name of the master the sentinels watch. */
  REDIS_SENTINEL_MASTER: optionalNonEmpty,
  /**
   * Credentials for cluster and Sentinel data nodes, and for a single node on a unix socket (a single
   * node over TCP takes them in REDIS_URL).
   */
  REDIS_USERNAME: optionalNonEmpty,
  /** Password of REDIS_USERNAME (cluster and Sentinel data nodes, a single node on a unix socket). */
  REDIS_PASSWORD: optionalNonEmpty,
  /** Password of the sentinels themselves. */
  REDIS_SENTINEL_PASSWORD: optionalNonEmpty,
  /** TLS for cluster and Sentinel connections (a single node: `rediss://`). */
  REDIS_TLS: boolFlag,
  /** PEM files: the CA that signed the server's certificate, and a client certificate + key (mutual TLS). */
  REDIS_TLS_CA_FILE: optionalNonEmpty,
  /** PEM client certificate for mutual TLS with Redis (with REDIS_TLS_KEY_FILE). */
  REDIS_TLS_CERT_FILE: optionalNonEmpty,
  /** PEM key of REDIS_TLS_CERT_FILE. */
  REDIS_TLS_KEY_FILE: optionalNonEmpty,
  /** The name to check the server's certificate against (SNI), when it differs from the host. */
  REDIS_TLS_SERVERNAME: optionalNonEmpty,
  /** "0" accepts a certificate that does not verify (testing only: anyone on the path can read the traffic). */
  REDIS_TLS_REJECT_UNAUTHORIZED: z
    .enum(["0", "1", "true", "false", ""])
    .default("")
    .transform((v) => v !== "0" && v !== "false"),
  /**
   * The key the operator sends as X-API-KEY (16+ characters), checked in constant time; unset: no auth
   * (production refuses that unless ALLOW_NO_API_KEY).
   */
  API_KEY: optionalNonEmpty.pipe(z.string().min(16, "must be at least 16 characters").optional()),
  /**
   * Solana keypair JSON file (64-byte array) of the maker wallet, mode 0600; unset: the paper setup generates
   * one into DATA_DIR. Must be unset with SIGNER_URL.
   */
  MAKER_KEYPAIR: optionalNonEmpty,
  /**
   * Keypair file of the issuer key: the mint authority of the permissioned tokens in `issuance` (it may
   * differ from the maker key, which stays the fee payer). Unset: the paper setup generates one into
   * DATA_DIR; in production the maker key when it is in this process, and a policy whose mintAuthority
   * is not the maker key then stops the start. Refused with SIGNER_URL (the signer's SIGNER_ISSUER_KEYPAIR).
   */
  ISSUER_KEYPAIR: optionalNonEmpty,
  /**
   * The signer service holding the maker's key (`npm run signer`): unix:///path/to/signer.sock or
   * https://host:port (mutual TLS with SIGNER_CA, SIGNER_CLIENT_CERT, SIGNER_CLIENT_KEY). Set: this
   * process holds no key, MAKER_KEYPAIR must be unset, and a Redis topology is required.
   */
  SIGNER_URL: optionalNonEmpty.pipe(
    z
      .string()
      .regex(/^(unix:\/\/\/.+|https:\/\/.+)$/, "unix:///path/to/socket or https://host:port")
      .optional(),
  ),
  /** PEM of the CA that signed the signer's certificate, for an https:// SIGNER_URL. */
  SIGNER_CA: optionalNonEmpty,
  /** PEM client certificate this webhook presents to an https:// SIGNER_URL. */
  SIGNER_CLIENT_CERT: optionalNonEmpty,
  /** PEM key of SIGNER_CLIENT_CERT. */
  SIGNER_CLIENT_KEY: optionalNonEmpty,
  /** How long one remote signature may take before the swap is refused, ms. */
  SIGNER_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(2_000),
  /**
   * One or more comma-separated JSON-RPC URLs; the first is read from, all are sent to. Unset: the local
   * chain.
   */
  RPC_URL: optionalNonEmpty,
  /**
   * One or more comma-separated Jito-style block engine URLs (https://host, optionally with a path prefix
   * and `?uuid=`; `/api/v1/...` is added); bundles go to all, statuses are read from the first that knows
   * them. Unset: the local bundle engine over the paper setup's chain, none in production.
   */
  BUNDLE_URL: optionalNonEmpty.pipe(
    z
      .string()
      .refine(
        (v) =>
          v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
            .every((u) => /^https?:\/\/[^\s]+$/.test(u) && URL.canParse(u)),
        "comma-separated http(s) block engine URLs",
      )
      .optional(),
  ),
  /**
   * `1`: the operator's acceptance suite's canned /swap answers, with a loud warning; refused with RPC_URL.
   */
  ACCEPTANCE_MODE: boolFlag,
  /**
   * `1`: the paper setup is meant even though a production setting (MAKER_KEYPAIR, a Redis topology,
   * DATABASE_URL, API_KEY, SIGNER_URL, BUNDLE_URL, OPERATOR_API_URL) is set without RPC_URL.
   */
  PAPER: boolFlag,
  /** Folder for generated state: the paper setup's keys, the embedded fill ledger. */
  DATA_DIR: z.string().min(1).default("data"),
  /** pino level (info: a line per /swap, none per quote; debug: every quote). */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * Key for the admin API (pause, per-pair switches, takers, fills), sent as X-ADMIN-API-KEY (16+
   * characters). Unset: every /admin route answers 404, and npm run doctor warns.
   */
  ADMIN_API_KEY: optionalNonEmpty.pipe(z.string().min(16, "must be at least 16 characters").optional()),
  /**
   * Graceful shutdown (src/http/shutdown.ts): after SIGTERM, /ready is 503 and new connections are still
   * served for SHUTDOWN_DRAIN_MS; the process exits 1 if it has not finished SHUTDOWN_GRACE_MS after the
   * signal (keep it under the orchestrator's grace period, 30 s by default).
   */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(120_000).default(5_000),
  /** After SIGTERM: exit 1, naming what was cut, if not done by then (keep under the orchestrator's 30 s). */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(1_000).max(600_000).default(25_000),
  /**
   * The https URL the operator reaches this webhook at, printed by npm run registration (npm run doctor
   * warns when it is unset or not https).
   */
  PUBLIC_BASE_URL: optionalNonEmpty.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /**
   * The operations listener: /metrics, /admin/*, /health, /ready. Loopback by default so neither the
   * metrics nor the admin API face the network the operator reaches; 0 picks a free port.
   */
  ADMIN_PORT: z.coerce.number().int().min(0).max(65_535).default(8081),
  /**
   * The address the operations listener binds (loopback unless the metrics and admin API must be reached from
   * elsewhere).
   */
  ADMIN_HOST: z.string().min(1).default("127.0.0.1"),
  /**
   * Processes serving PORT (src/http/cluster.ts): a primary plus this many workers (node:cluster).
   * Unset: the machine's cores in production mode when the shared state is outside the process
   * (Redis, DATABASE_URL or LEDGER=off), else 1. More than 1 is refused where state lives in the
   * process (the paper setup, the in-memory quote store, the embedded fill ledger).
   */
  WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  /** Log one "quoted" line at info for every N quotes (0: none; every quote is at debug). */
  LOG_QUOTE_SAMPLE: z.coerce.number().int().min(0).default(0),
  /**
   * The operator's swap order/execute API (GET /ultra/v1/order, POST /swap/v2/execute), used by the
   * rebalancer to trade as a taker; its key is sent as x-api-key. Unset: no rebalancing.
   */
  OPERATOR_API_URL: optionalNonEmpty.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** Sent as x-api-key on every order and execute call of the rebalancer. */
  OPERATOR_API_KEY: optionalNonEmpty,
  /**
   * The operator's RFQ v2 maker service (gRPC: `https://` with TLS, `http://` plaintext for the sandbox),
   * this maker's id there, and its token (a JWT, sent as the `x-api-key` header). Unset: no level stream;
   * the pairs streamed are `rfqV2.pairs`.
   */
  RFQ_V2_URL: optionalNonEmpty.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** This maker's id at the RFQ v2 service (sent in every level set); required with RFQ_V2_URL. */
  RFQ_V2_MAKER_ID: optionalNonEmpty,
  /** The RFQ v2 service's token for this maker (a JWT, sent as `x-api-key`); required with RFQ_V2_URL. */
  RFQ_V2_AUTH_TOKEN: optionalNonEmpty,
  /**
   * The fill ledger's PostgreSQL server (src/ledger/); unset: PGlite, embedded, in `<DATA_DIR>/ledger`.
   */
  DATABASE_URL: optionalNonEmpty.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  /** `off`: no fill ledger (nothing journaled for it); `on` (default): DATABASE_URL or the embedded one. */
  LEDGER: z.enum(["on", "off"]).default("on"),
  /**
   * Production allowances (config/safety.ts), each accepting one unsafe setting on purpose. `1`:
   * production accepts no API_KEY (every caller served).
   */
  ALLOW_NO_API_KEY: boolFlag,
  /** `1`: production accepts an enabled pair priced by a `static` source. */
  ALLOW_STATIC_PRICES: boolFlag,
  /** `1`: production accepts a MAKER_KEYPAIR file readable by group or others. */
  ALLOW_READABLE_KEYPAIR: boolFlag,
  /** `1`: production accepts the embedded fill ledger (DATABASE_URL unset). */
  ALLOW_EMBEDDED_LEDGER: boolFlag,
});
export type EnvConfig = z.infer<typeof envSchema>;

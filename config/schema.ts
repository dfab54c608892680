/**
 * The one configuration schema. `loadConfig` (config/load.ts) parses a JSON file plus environment
 * variables through it once at boot; any failure stops the process with the offending key named.
 *
 * Amounts are strings of integers in the token's smallest units (u64), prices are decimal strings:
 * neither ever passes through a float on the way to a signed amount.
 */
import { PublicKey } from "@solana/web3.js";
import { z } from "zod";

const U64_MAX = (1n << 64n) - 1n;

export const base58Pubkey = z.string().refine(
  (s) => {
    try {
      return new PublicKey(s).toBase58() === s;
    } catch {
      return false;
    }
  },
  { message: "must be a base58 public key" },
);

export const u64String = z
  .string()
  .regex(/^\d+$/, "must be a non-negative integer in smallest units")
  .refine((s) => BigInt(s) <= U64_MAX, "must fit in u64");

export const decimalString = z.string().regex(/^\d+(\.\d+)?$/, "must be a positive decimal number");

export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

export const tokenSchema = z.object({
  mint: base58Pubkey,
  symbol: z.string().min(1).max(16),
  decimals: z.number().int().min(0).max(18),
  tokenProgram: z.enum([TOKEN_PROGRAM, TOKEN_2022_PROGRAM]).default(TOKEN_PROGRAM),
  /** Advertised on /permissioned-tokens instead of /tokens (minted or burned just in time). */
  permissioned: z.boolean().default(false),
  /** Stablecoins: stable-to-stable swaps carry no operator fee. */
  stable: z.boolean().default(false),
  /** Inventory below this (smallest units) stops the token being advertised (inventory issue). */
  minInventory: u64String.default("0"),
});
export type TokenConfig = z.infer<typeof tokenSchema>;

/** A spread level: sizes (in base smallest units) up to `upToBase` are quoted at `spreadBps`. */
export const levelSchema = z.object({
  upToBase: u64String,
  spreadBps: z.number().int().min(0).max(5000),
});

export const pairSchema = z
  .object({
    /** Symbols from `tokens`. The price is quote units per one base unit (human units). */
    base: z.string(),
    quote: z.string(),
    enabled: z.boolean().default(true),
    /** Smallest and largest base-side size quoted, in base smallest units. */
    minBase: u64String,
    maxBase: u64String,
    /** Ascending by `upToBase`; the last level must reach `maxBase`. */
    levels: z.array(levelSchema).min(1),
    /** Name of a price source in `priceSources`; defaults to "static". */
    priceSource: z.string().default("static"),
  })
  .superRefine((p, ctx) => {
    if (BigInt(p.minBase) > BigInt(p.maxBase)) {
      ctx.addIssue({ code: "custom", path: ["minBase"], message: "must not exceed maxBase" });
    }
    let prev = 0n;
    p.levels.forEach((l, i) => {
      const up = BigInt(l.upToBase);
      if (up <= prev) {
        ctx.addIssue({ code: "custom", path: ["levels", i, "upToBase"], message: "levels must ascend" });
      }
      prev = up;
    });
    if (prev < BigInt(p.maxBase)) {
      ctx.addIssue({ code: "custom", path: ["levels"], message: "the last level must reach maxBase" });
    }
  });
export type PairConfig = z.infer<typeof pairSchema>;

export const staticPriceSourceSchema = z.object({
  kind: z.literal("static"),
  /** Mid prices keyed "BASE/QUOTE", e.g. {"SOL/USDC": "180.25"}. */
  prices: z.record(z.string(), decimalString),
});

export const priceSourceSchema = z.discriminatedUnion("kind", [staticPriceSourceSchema]);

export const limitsSchema = z.object({
  /** Largest accepted request body, bytes. A fill transaction is at most 1232 bytes (base64 ~1.7 KB). */
  maxBodyBytes: z.number().int().min(1024).max(1_048_576).default(16_384),
  /** Quote lifetime: the operator's 55 s (35 s for the user, 20 s for the maker). */
  quoteTtlMs: z.number().int().min(1_000).max(600_000).default(55_000),
  /** Quote path: answer 404 when less than this much of the operator's budget remains. */
  minQuoteBudgetMs: z.number().int().min(0).max(250).default(15),
  /** Compute-unit price we answer when the operator suggests none (micro-lamports per CU). */
  defaultComputeUnitPriceMicroLamports: z.number().int().min(0).default(10_000),
  /** Cap on the compute-unit price we agree to pay as fee payer (micro-lamports per CU). */
  maxComputeUnitPriceMicroLamports: z.number().int().min(0).default(1_000_000),
  /** The most lamports the maker pays for one fill: compute limit x price + signature fees. */
  maxFeeLamports: u64String.default("2000000"),
  /** Bound on the in-memory quote store. */
  memoryStoreMaxQuotes: z.number().int().min(100).default(200_000),
});

export const fileConfigSchema = z.object({
  /** Path prefix the operator calls, e.g. "/jupiter/rfq". Empty string for none. */
  basePath: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, "must be empty or like /jupiter/rfq (no trailing slash)")
    .default(""),
  tokens: z.array(tokenSchema).min(1),
  pairs: z.array(pairSchema).min(1),
  priceSources: z.record(z.string(), priceSourceSchema),
  limits: limitsSchema.default(limitsSchema.parse({})),
  /** Operator fee (bps) charged in manual mode. Informational: fees are never priced in. */
  manualModeFeeBps: z.number().int().min(0).max(10_000).default(2),
});
export type FileConfig = z.infer<typeof fileConfigSchema>;

const boolFlag = z
  .enum(["0", "1", "true", "false", ""])
  .default("")
  .transform((v) => v === "1" || v === "true");

const optionalNonEmpty = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

/** Environment variables: the names operators' tooling relies on. */
export const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  HOST: z.string().min(1).default("0.0.0.0"),
  CONFIG: optionalNonEmpty,
  REDIS_URL: optionalNonEmpty.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  API_KEY: optionalNonEmpty.pipe(z.string().min(16, "must be at least 16 characters").optional()),
  MAKER_KEYPAIR: optionalNonEmpty,
  /** One or more comma-separated JSON-RPC URLs; the first is read from, all are sent to. */
  RPC_URL: optionalNonEmpty,
  ACCEPTANCE_MODE: boolFlag,
  /** Folder for generated state in the embedded default (maker key). */
  DATA_DIR: z.string().min(1).default("data"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type EnvConfig = z.infer<typeof envSchema>;

/**
 * Parses configuration once at boot: the JSON file named by `CONFIG` (or config/default.json), then the
 * environment. Cross-field rules (pairs naming known tokens, prices present, production settings given
 * together) are checked here so that a bad deployment stops before it serves a single quote.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import {
  type EnvConfig,
  envSchema,
  type FileConfig,
  fileConfigSchema,
  type PairConfig,
  type TokenConfig,
} from "./schema.ts";

export const DEFAULT_CONFIG_PATH = join(dirname(fileURLToPath(import.meta.url)), "default.json");

export type Mode = "paper" | "production" | "acceptance";

export interface Config {
  env: EnvConfig;
  file: FileConfig;
  mode: Mode;
  tokensByMint: ReadonlyMap<string, TokenConfig>;
  tokensBySymbol: ReadonlyMap<string, TokenConfig>;
  /** The configuration file actually read, for the start-up banner. */
  configPath: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

function formatIssues(where: string, error: z.ZodError): string {
  return error.issues
    .map((i) => `${where}${i.path.length ? `: ${i.path.join(".")}` : ""}: ${i.message}`)
    .join("\n");
}

/** Validates a parsed config file object; used by loadConfig and by tests that build configs inline. */
export function parseFileConfig(raw: unknown, where = "config"): FileConfig {
  const parsed = fileConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatIssues(where, parsed.error));
  const file = parsed.data;
  const problems: string[] = [];
  const symbols = new Set<string>();
  const mints = new Set<string>();
  file.tokens.forEach((t, i) => {
    if (symbols.has(t.symbol)) problems.push(`${where}: tokens.${i}.symbol: duplicate symbol ${t.symbol}`);
    if (mints.has(t.mint)) problems.push(`${where}: tokens.${i}.mint: duplicate mint ${t.mint}`);
    symbols.add(t.symbol);
    mints.add(t.mint);
  });
  const pairKeys = new Set<string>();
  file.pairs.forEach((p: PairConfig, i) => {
    const key = `${p.base}/${p.quote}`;
    if (!symbols.has(p.base)) problems.push(`${where}: pairs.${i}.base: unknown token symbol ${p.base}`);
    if (!symbols.has(p.quote)) problems.push(`${where}: pairs.${i}.quote: unknown token symbol ${p.quote}`);
    if (p.base === p.quote) problems.push(`${where}: pairs.${i}.quote: must differ from base`);
    if (pairKeys.has(key) || pairKeys.has(`${p.quote}/${p.base}`)) {
      problems.push(`${where}: pairs.${i}: duplicate pair ${key}`);
    }
    pairKeys.add(key);
    const source = file.priceSources[p.priceSource];
    if (!source) {
      problems.push(`${where}: pairs.${i}.priceSource: unknown price source ${p.priceSource}`);
    } else if (source.kind === "static" && source.prices[key] === undefined) {
      problems.push(`${where}: priceSources.${p.priceSource}.prices: no price for ${key}`);
    }
  });
  if (problems.length) throw new ConfigError(problems.join("\n"));
  return file;
}

/** Parses the environment alone (names as documented in config/.env.example). */
export function parseEnv(env: Record<string, string | undefined>): EnvConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(formatIssues("env", parsed.error));
  const { SHUTDOWN_DRAIN_MS: drain, SHUTDOWN_GRACE_MS: grace } = parsed.data;
  if (drain >= grace) {
    throw new ConfigError(
      `env: SHUTDOWN_DRAIN_MS: must be less than SHUTDOWN_GRACE_MS (${drain} >= ${grace}): requests in flight need time to finish after the drain`,
    );
  }
  return parsed.data;
}

function modeOf(env: EnvConfig): Mode {
  const production = { RPC_URL: env.RPC_URL, MAKER_KEYPAIR: env.MAKER_KEYPAIR, REDIS_URL: env.REDIS_URL };
  if (env.ACCEPTANCE_MODE) {
    if (env.RPC_URL) {
      throw new ConfigError("env: ACCEPTANCE_MODE: refuses to run against a real RPC_URL; unset one of them");
    }
    return "acceptance";
  }
  if (!env.RPC_URL) return "paper";
  // A real chain needs the real key and a shared store; a half-given production setting is refused
  // rather than silently falling back to a generated key or a per-process store.
  const missing = Object.entries(production)
    .filter(([, v]) => !v)
    .map(([k]) => k);
  if (missing.length) {
    throw new ConfigError(`env: ${missing.join(", ")}: required when RPC_URL is set (production mode)`);
  }
  return "production";
}

/** Loads and validates everything; throws ConfigError naming each offending key. */
export function loadConfig(envVars: Record<string, string | undefined> = process.env): Config {
  const env = parseEnv(envVars);
  const configPath = env.CONFIG ?? DEFAULT_CONFIG_PATH;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configPath, "utf8"));
  } catch (e) {
    throw new ConfigError(`env: CONFIG: cannot read ${configPath}: ${(e as Error).message}`);
  }
  const file = parseFileConfig(raw, configPath);
  return buildConfig(env, file, configPath);
}

/** Assembles a Config from already-validated parts (tests use this to vary one piece). */
export function buildConfig(env: EnvConfig, file: FileConfig, configPath = "(inline)"): Config {
  return {
    env,
    file,
    mode: modeOf(env),
    tokensByMint: new Map(file.tokens.map((t) => [t.mint, t])),
    tokensBySymbol: new Map(file.tokens.map((t) => [t.symbol, t])),
    configPath,
  };
}

/**
 * Parses configuration once at boot: the JSON file named by `CONFIG` (or config/default.json), then the
 * environment. Cross-field rules (pairs naming known tokens, prices present, production settings given
 * together) are checked here so that a bad deployment stops before it serves a single quote.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv as parseDotEnv } from "node:util";
import type { z } from "zod";
import { type Hazard, productionHazards } from "./safety.ts";
import {
  type EnvConfig,
  envSchema,
  type FileConfig,
  fileConfigSchema,
  type PairConfig,
  type TokenConfig,
} from "./schema.ts";
import { nearest } from "./strict.ts";
import { sizesToUnits } from "./token-amounts.ts";

/**
 * config/default.json of the checkout, the file a maker edits, also when the compiled build runs
 * (dist/config/load.js): an edit then takes effect without a rebuild, and the banner names that file.
 * The copy beside the compiled code is used only where there is no checkout (the image).
 */
export const DEFAULT_CONFIG_PATH = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  const source = join(here, "..", "..", "config", "default.json");
  return basename(dirname(here)) === "dist" && existsSync(source) ? source : join(here, "default.json");
})();

/** What `loadDotEnv` read: the file and the names it set (those the environment did not already set). */
export interface DotEnv {
  path: string;
  set: string[];
}

/**
 * Reads `.env` in the working directory into `env` with Node's own parser (as `--env-file` would,
 * without Node's notice on stderr when there is none): a variable the environment already sets wins.
 * Every entry point that reads the service's settings calls it first (npm start, doctor, registration,
 * report, rebalance), so they all see the same settings.
 */
export function loadDotEnv(
  env: Record<string, string | undefined> = process.env,
  dir = process.cwd(),
): DotEnv | undefined {
  const path = join(dir, ".env");
  if (!existsSync(path)) return undefined;
  const set: string[] = [];
  for (const [name, value] of Object.entries(parseDotEnv(readFileSync(path, "utf8")))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    set.push(name);
  }
  return { path, set: set.sort() };
}

/** What `.env` did, for the banner and doctor: which file set which names (never their values). */
export function dotEnvLine(dotEnv: DotEnv | undefined): string {
  if (!dotEnv) return "none in the working directory";
  const set = dotEnv.set.length ? `set ${dotEnv.set.join(", ")}` : "set nothing";
  return `${dotEnv.path} (${set}; the environment's own values win)`;
}

export type Mode = "paper" | "production" | "acceptance";

export interface Config {
  env: EnvConfig;
  file: FileConfig;
  mode: Mode;
  tokensByMint: ReadonlyMap<string, TokenConfig>;
  tokensBySymbol: ReadonlyMap<string, TokenConfig>;
  /** The configuration file actually read, for the start-up banner. */
  configPath: string;
  /** Production hazards (config/safety.ts); loadConfig refuses to start on any not allowed. */
  hazards: readonly Hazard[];
  /** Start-up warnings to log once (unknown environment variables that look like ours). */
  warnings: readonly string[];
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

function formatIssues(where: string, error: z.ZodError): string {
  return error.issues
    .flatMap((i) => {
      const path = i.path.join(".");
      // An unknown key is reported at its own path (config/strict.ts writes one "key: ..." per line).
      if (i.code === "unrecognized_keys") {
        return i.message.split("\n").map((line) => `${where}: ${path ? `${path}.` : ""}${line}`);
      }
      return [`${where}${path ? `: ${path}` : ""}: ${i.message}`];
    })
    .join("\n");
}

/** Validates a parsed config file object; used by loadConfig and by tests that build configs inline. */
export function parseFileConfig(raw: unknown, where = "config"): FileConfig {
  // Sizes written in tokens ("500 SOL") to smallest units, exactly, before the schema reads them.
  const sized = sizesToUnits(raw);
  if (sized.problems.length) throw new ConfigError(sized.problems.map((p) => `${where}: ${p}`).join("\n"));
  const parsed = fileConfigSchema.safeParse(sized.raw);
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
  const topologies = REDIS_TOPOLOGY_SETTINGS.filter((k) => parsed.data[k] !== undefined);
  if (topologies.length > 1) {
    throw new ConfigError(
      `env: ${topologies.join(", ")}: set only one Redis topology (see docs/deployment.md, "Redis topologies")`,
    );
  }
  if ((parsed.data.REDIS_SENTINELS === undefined) !== (parsed.data.REDIS_SENTINEL_MASTER === undefined)) {
    throw new ConfigError(
      "env: REDIS_SENTINELS, REDIS_SENTINEL_MASTER: give both (the sentinels and the name of the master they guard)",
    );
  }
  if (drain >= grace) {
    throw new ConfigError(
      `env: SHUTDOWN_DRAIN_MS: must be less than SHUTDOWN_GRACE_MS (${drain} >= ${grace}): requests in flight need time to finish after the drain`,
    );
  }
  return parsed.data;
}

/** The settings that each name one Redis topology (single node, cluster, Sentinel). */
export const REDIS_TOPOLOGY_SETTINGS = ["REDIS_URL", "REDIS_CLUSTER_NODES", "REDIS_SENTINELS"] as const;

/** The setting that names the Redis in use ("REDIS_URL", ...), or undefined when none is configured. */
export function redisSetting(env: EnvConfig): (typeof REDIS_TOPOLOGY_SETTINGS)[number] | undefined {
  return REDIS_TOPOLOGY_SETTINGS.find((k) => env[k] !== undefined);
}

function modeOf(env: EnvConfig, reader = false): Mode {
  if (env.SIGNER_URL && env.MAKER_KEYPAIR) {
    throw new ConfigError(
      "env: SIGNER_URL and MAKER_KEYPAIR are both set: with a remote signer the webhook holds no key; unset MAKER_KEYPAIR",
    );
  }
  if (env.SIGNER_URL && redisSetting(env) === undefined) {
    throw new ConfigError(
      "env: SIGNER_URL: requires REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (the signer reads each quote itself from the shared store)",
    );
  }
  if (env.SIGNER_URL?.startsWith("https://")) {
    const missing = (["SIGNER_CA", "SIGNER_CLIENT_CERT", "SIGNER_CLIENT_KEY"] as const).filter(
      (k) => !env[k],
    );
    if (missing.length)
      throw new ConfigError(`env: ${missing.join(", ")}: required with an https:// SIGNER_URL (mutual TLS)`);
  }
  // The key is MAKER_KEYPAIR here, or the signer service's (SIGNER_URL). Any of the Redis topologies
  // is the shared store; REDIS_URL names the requirement when none is set.
  const production = {
    RPC_URL: env.RPC_URL,
    [env.SIGNER_URL ? "SIGNER_URL" : "MAKER_KEYPAIR"]: env.SIGNER_URL ?? env.MAKER_KEYPAIR,
    REDIS_URL: redisSetting(env) !== undefined ? "set" : undefined,
  };
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
  if (missing.length && !reader) {
    throw new ConfigError(`env: ${missing.join(", ")}: required when RPC_URL is set (production mode)`);
  }
  return "production";
}

/** Where each part of the service keeps its Redis keys, all under one prefix. */
export interface RedisKeys {
  quotes: string;
  swap: string;
  inventory: string;
  controls: string;
  advertised: string;
  /** The signer service's own record (signed messages, spent limits): src/signer/service/limits.ts. */
  signer: string;
  /** The toxic-flow controls' taker lists: src/toxicity/redis.ts. */
  toxicity: string;
  /** Issuance reservations and daily totals of permissioned tokens: inventory/issuance/redis.ts. */
  issuance: string;
}

/**
 * Every Redis key prefix from the one `redisPrefix` key (or `override`, with which tests isolate
 * themselves).
 */
export function redisKeys(file: FileConfig, override?: string): RedisKeys {
  const p = override ?? file.redisPrefix;
  return {
    quotes: `${p}quote:`,
    swap: `${p}swap:`,
    inventory: `${p}inv:`,
    controls: `${p}ctl:`,
    advertised: `${p}advertised`,
    signer: `${p}signer:`,
    toxicity: `${p}tox:`,
    issuance: `${p}iss:`,
  };
}

export interface LoadOptions {
  /**
   * "refuse" (default): a production hazard that is not allowed stops the start (ConfigError).
   * "report": they are only listed in `config.hazards` (npm run doctor shows them as rows).
   */
  hazards?: "refuse" | "report";
  /**
   * A command that reads only the configuration and the fill ledger (`npm run report`): the settings
   * that make a production service (RPC_URL with the key and Redis beside it) are not asked for, and
   * DATABASE_URL alone is not taken for a production intent without RPC_URL.
   */
  reader?: boolean;
}

/** Loads and validates everything; throws ConfigError naming each offending key. */
export function loadConfig(
  envVars: Record<string, string | undefined> = process.env,
  opts: LoadOptions = {},
): Config {
  const slips = nearMisses(envVars);
  try {
    return loadChecked(envVars, opts, slips);
  } catch (e) {
    // A refusal caused by a misspelt name (REDIS_ULR: "REDIS_URL: required") names the misspelling.
    if (e instanceof ConfigError && slips.length && !e.message.includes("did you mean")) {
      throw new ConfigError(
        `${e.message}\n${slips.map(([n, near]) => `env: ${n} is set: did you mean ${near}?`).join("\n")}`,
      );
    }
    throw e;
  }
}

/**
 * The settings that say "this is a real maker": any of them without RPC_URL is refused unless PAPER=1,
 * so that a typo in RPC_URL never runs the paper setup with the real key or the real store.
 */
export const PRODUCTION_SETTINGS = [
  "MAKER_KEYPAIR",
  ...REDIS_TOPOLOGY_SETTINGS,
  "DATABASE_URL",
  "API_KEY",
  "SIGNER_URL",
  "BUNDLE_URL",
  "OPERATOR_API_URL",
  "RFQ_V2_URL",
] as const;

/** Unknown variables with our prefix that are a likely slip of a known name: [name, known name]. */
export function nearMisses(vars: Record<string, string | undefined>): [string, string][] {
  return unknownOfOurs(vars).flatMap((n) => {
    const near = nearest(n, KNOWN_ENV);
    return near ? [[n, near] as [string, string]] : [];
  });
}

function loadChecked(
  envVars: Record<string, string | undefined>,
  opts: LoadOptions,
  slips: readonly [string, string][],
): Config {
  const env = parseEnv(envVars);
  const intent = (["RPC_URL", ...PRODUCTION_SETTINGS] as const).filter((k) => env[k] !== undefined);
  if (intent.length && slips.length) {
    throw new ConfigError(
      `${slips.map(([n, near]) => `env: ${n}: not a setting of this service (did you mean ${near}?)`).join("\n")}\n` +
        `(refused: with ${intent.join(", ")} set, a misspelt setting could run a real key with the wrong settings; fix the name or unset it)`,
    );
  }
  const productionIntent = intent.filter((k) => k !== "RPC_URL");
  if (!env.RPC_URL && !env.ACCEPTANCE_MODE && !env.PAPER && productionIntent.length && !opts.reader) {
    throw new ConfigError(
      `env: RPC_URL: unset while ${productionIntent.join(", ")} ${productionIntent.length > 1 ? "are" : "is"} set: ` +
        "without RPC_URL this would be the paper setup (local chain, nothing real); set RPC_URL for production, " +
        "or PAPER=1 if the paper setup is meant",
    );
  }
  const configPath = env.CONFIG ?? DEFAULT_CONFIG_PATH;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configPath, "utf8"));
  } catch (e) {
    throw new ConfigError(`env: CONFIG: cannot read ${configPath}: ${(e as Error).message}`);
  }
  const file = parseFileConfig(raw, configPath);
  const config = buildConfig(env, file, configPath, opts.reader === true);
  const hazards = productionHazards({ env, file, production: config.mode === "production" });
  const refused = hazards.filter((h) => !h.allowed);
  if (refused.length && opts.hazards !== "report") {
    throw new ConfigError(
      refused.map((h) => `${h.problem}\n  fix: ${h.fix}`).join("\n") +
        "\n(production mode refuses these unless each is allowed by name; see docs/deployment.md, Production guards)",
    );
  }
  return { ...config, hazards, warnings: unknownEnvWarnings(envVars) };
}

/** Assembles a Config from already-validated parts (tests use this to vary one piece). */
export function buildConfig(
  env: EnvConfig,
  file: FileConfig,
  configPath = "(inline)",
  reader = false,
): Config {
  return {
    env,
    file,
    mode: modeOf(env, reader),
    tokensByMint: new Map(file.tokens.map((t) => [t.mint, t])),
    tokensBySymbol: new Map(file.tokens.map((t) => [t.symbol, t])),
    configPath,
    hazards: [],
    warnings: [],
  };
}

/** Names read outside envSchema, by the sandbox, the operator simulator and the chain server. */
const OTHER_KNOWN_ENV = [
  "WEBHOOK_URL",
  "WEBHOOK_API_KEY",
  "WEBHOOK_NODE_ARGS",
  "WEBHOOK_PORT",
  "WEBHOOK_ADMIN_PORT",
  // Set by the primary for each worker (src/http/cluster.ts), never by hand.
  "RFQ_WORKER_SLOT",
  "RFQ_PRIMARY_OPS_URL",
  "RFQ_DOTENV_SET",
  "OPERATOR_API_KEY",
  "OPERATOR_HOST",
  "OPERATOR_PORT",
  "OPERATOR_FEE_BPS",
  "TOKEN_REFRESH_MS",
  "CHAIN_SEED",
  "CHAIN_PORT",
  // The signer service's own settings (src/signer/service/index.ts, signerEnvSchema): one environment
  // file may configure both processes.
  "SIGNER_KEYPAIR",
  "SIGNER_NEXT_KEYPAIR",
  "SIGNER_ISSUER_KEYPAIR",
  "SIGNER_RPC_URL",
  "SIGNER_SOCKET",
  "SIGNER_TLS_LISTEN",
  "SIGNER_TLS_CERT",
  "SIGNER_TLS_KEY",
  "SIGNER_TLS_CLIENT_CA",
  "SIGNER_LIMITS",
  // scripts/with-redis.ts: the test Redis Cluster.
  "REDIS_TEST_CLUSTER",
  "REDIS_TEST_CLUSTER_NODES",
];

/** Every environment name the service knows. */
export const KNOWN_ENV: ReadonlySet<string> = new Set([...Object.keys(envSchema.shape), ...OTHER_KNOWN_ENV]);

/**
 * Prefixes that mark a variable as meant for the service: the first word of every name it reads
 * with an underscore (REDIS_, API_, RPC_, MAKER_, ADMIN_, LOG_, ALLOW_, ...), plus RFQ_.
 */
export const OUR_ENV_PREFIXES: readonly string[] = [
  ...new Set([
    "RFQ_",
    ...Object.keys(envSchema.shape)
      .filter((n) => n.includes("_"))
      .map((n) => `${n.slice(0, n.indexOf("_"))}_`),
  ]),
].sort();

/**
 * One warning per environment variable that looks like ours (a known prefix) but that the service
 * does not read: a typo such as REDIS_ULR would otherwise silently mean "no Redis".
 */
export function unknownEnvWarnings(vars: Record<string, string | undefined>): string[] {
  return unknownOfOurs(vars).map((n) => {
    const near = nearest(n, KNOWN_ENV);
    return `env: ${n}: not a setting of this service, ignored${near ? ` (did you mean ${near}?)` : ""}`;
  });
}

/**
 * Names with one of our prefixes that the service does not read, sorted, leaving out what an
 * orchestrator injects into every container (`injectedByOrchestrator`): those are other software's
 * conventions, not a slip of ours.
 */
function unknownOfOurs(vars: Record<string, string | undefined>): string[] {
  return Object.keys(vars)
    .filter(
      (n) =>
        !KNOWN_ENV.has(n) &&
        OUR_ENV_PREFIXES.some((p) => n.startsWith(p)) &&
        !injectedByOrchestrator(n, vars[n]),
    )
    .sort();
}

/**
 * Variables Kubernetes and Docker set on their own for another service or container named <NAME>:
 *   Kubernetes service links: <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT, <NAME>_SERVICE_PORT_<PORT NAME>,
 *     <NAME>_PORT=tcp://10.96.0.12:6379, <NAME>_PORT_6379_TCP, <NAME>_PORT_6379_TCP_PROTO|PORT|ADDR;
 *   Docker links (the same <NAME>_PORT family, plus): <NAME>_NAME=/web/redis, <NAME>_ENV_<VARIABLE>.
 * A bare <NAME>_PORT or <NAME>_NAME counts only with the value the orchestrator gives it (a
 * `proto://host:port` address, a `/container/alias` path), so `REDIS_PORT=6380` is still a slip.
 */
export function injectedByOrchestrator(name: string, value: string | undefined): boolean {
  if (/^[A-Z0-9_]+_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$/.test(name)) return true;
  if (/^[A-Z0-9_]+_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name)) return true;
  if (/^[A-Z0-9_]+_ENV_[A-Za-z0-9_]+$/.test(name)) return true;
  if (/^[A-Z0-9_]+_PORT$/.test(name)) return /^(tcp|udp|sctp):\/\/[^/\s]+:\d+$/.test(value ?? "");
  if (/^[A-Z0-9_]+_NAME$/.test(name)) return /^\/[^/\s]+\/[^/\s]+$/.test(value ?? "");
  return false;
}

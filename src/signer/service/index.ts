/**
 * The signer service (`npm run signer`, src/signer/main.ts): its own process and its own
 * configuration, the only holder of the maker's key when the webhook runs with SIGNER_URL. It reads
 * quotes itself from the shared Redis quote store and signs only what SigningPolicy (policy.ts)
 * allows. Settings (environment; docs/signer.md and config/.env.example):
 *   SIGNER_KEYPAIR       the maker's keypair file (required; mode 0600 or the start is refused)
 *   SIGNER_NEXT_KEYPAIR  a second key during a rotation: signed for, advertised, not yet active
 *   SIGNER_ISSUER_KEYPAIR the issuer key of the tokens the maker issues (config `issuance`): the signer
 *                        then makes each fill's companion mint itself (mode 0600 or the start is refused)
 *   SIGNER_SOCKET        Unix socket path to listen on (created mode 0600)
 *   SIGNER_TLS_LISTEN    host:port for mutual TLS, with SIGNER_TLS_CERT, SIGNER_TLS_KEY, SIGNER_TLS_CLIENT_CA
 *   SIGNER_LIMITS        the policy file: limits, loss limits, price bands and the signer's own price
 *                        sources (limits.ts; required)
 *   SIGNER_RPC_URL       a JSON-RPC URL the signer reads the chain through: blockhash validity and the
 *                        lookup tables of RFQ v2 swaps (optional: without it a quote is never signed
 *                        for a second message, nor a v2 swap that loads from lookup tables)
 *   REDIS_URL | REDIS_CLUSTER_NODES | REDIS_SENTINELS (+ REDIS_SENTINEL_MASTER), and REDIS_USERNAME,
 *   REDIS_PASSWORD, REDIS_TLS_*: the webhook's Redis, named exactly as the webhook names it (required:
 *   the quotes and the signer's own record; one topology, src/redis/client.ts)
 *   CONFIG               the webhook's configuration file (tokens, limits.maxFeeLamports, redisPrefix,
 *                        rfqV2.quoteExpirySeconds)
 *   LOG_LEVEL            as the webhook's
 */
import { readFileSync } from "node:fs";
import type { Keypair } from "@solana/web3.js";
import { z } from "zod";
import {
  buildConfig,
  ConfigError,
  DEFAULT_CONFIG_PATH,
  parseEnv,
  parseFileConfig,
  REDIS_TOPOLOGY_SETTINGS,
  redisKeys,
} from "../../../config/load.ts";
import { createNamedPriceSources } from "../../../pricing/sources.ts";
import type { Chain } from "../../chain/interface.ts";
import { RpcChain } from "../../chain/rpc.ts";
import { createLogger, type Logger } from "../../observability/logger.ts";
import { RedisQuoteStore } from "../../quote-store/redis.ts";
import {
  createRedisClient,
  type RedisClient,
  type RedisTarget,
  redisTarget,
  waitReady,
} from "../../redis/client.ts";
import { assertPrivateKeyFile, readKeypairFile } from "../../signing/keypair.ts";
import type { SignerRequest, SignerResponse } from "../../signing/protocol.ts";
import { loadLimits, SignerIssuanceLedger, SignerLedger } from "./limits.ts";
import { SigningPolicy } from "./policy.ts";
import { listenSigner, type SignerListeners } from "./server.ts";

const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

export const signerEnvSchema = z.object({
  /** The maker's keypair file (64-byte JSON array); group or other access stops the start. */
  SIGNER_KEYPAIR: z.string().min(1, "required: the maker's keypair file"),
  /** A second key during a rotation (same permission check): signed for, advertised, not yet active. */
  SIGNER_NEXT_KEYPAIR: optional,
  /**
   * The issuer key of the tokens in `issuance` (same permission check): the signer makes each fill's
   * companion mint under the caps in its own record; required with SIGNER_URL when `issuance` is configured.
   */
  SIGNER_ISSUER_KEYPAIR: optional,
  /**
   * Unix socket to listen on, created mode 0600 (a stale socket file is replaced; any other file is refused).
   */
  SIGNER_SOCKET: optional,
  /**
   * `host:port` to listen on with mutual TLS 1.3 (with SIGNER_TLS_CERT, SIGNER_TLS_KEY,
   * SIGNER_TLS_CLIENT_CA).
   */
  SIGNER_TLS_LISTEN: optional.pipe(
    z
      .string()
      .regex(/^[^\s]+:\d{1,5}$/, "host:port")
      .optional(),
  ),
  /** The signer's certificate (PEM); required with SIGNER_TLS_LISTEN. */
  SIGNER_TLS_CERT: optional,
  /** The key of SIGNER_TLS_CERT (PEM); required with SIGNER_TLS_LISTEN. */
  SIGNER_TLS_KEY: optional,
  /** The CA (PEM) whose client certificates may connect; required with SIGNER_TLS_LISTEN. */
  SIGNER_TLS_CLIENT_CA: optional,
  /** The signer's policy file: per-token limits, its own price sources and the pairs' bands (below). */
  SIGNER_LIMITS: z
    .string()
    .min(1, "required: the signer's policy file (see config/signer-limits.example.json)"),
  /**
   * JSON-RPC URL of the signer's own chain reader: whether a signed fill's blockhash is still valid, and
   * the lookup tables an RFQ v2 swap loads accounts from (read here, never taken from the webhook);
   * unset: a quote is never signed for a second message, and a v2 swap with lookup tables is refused
   * (SIGNER_V2_LOOKUP_TABLES).
   */
  SIGNER_RPC_URL: optional.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /**
   * The webhook's configuration file (tokens, limits.maxFeeLamports, redisPrefix, rfqV2.quoteExpirySeconds):
   * give it the same file.
   */
  CONFIG: optional,
  /** pino level, as the webhook's. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type SignerEnv = z.infer<typeof signerEnvSchema> & {
  /** The webhook's Redis, from the same REDIS_* settings the webhook reads (config/load.ts parseEnv). */
  redis: RedisTarget;
};

/** Parses the signer's environment; throws ConfigError naming each offending setting. */
export function parseSignerEnv(env: Record<string, string | undefined>): SignerEnv {
  const parsed = signerEnvSchema.safeParse(env);
  // The Redis settings are the webhook's own (one parser, one factory): every topology it can use.
  const redisVars = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("REDIS_")));
  const target = redisTarget(parseEnv(redisVars));
  if (!target) {
    throw new ConfigError(
      `env: ${REDIS_TOPOLOGY_SETTINGS.join(" | ")}: required: the webhook's Redis (the quotes and the signer's own record)`,
    );
  }
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => `env: ${i.path.join(".")}: ${i.message}`).join("\n"),
    );
  }
  const e = parsed.data;
  if (!e.SIGNER_SOCKET && !e.SIGNER_TLS_LISTEN)
    throw new ConfigError("env: SIGNER_SOCKET or SIGNER_TLS_LISTEN: set at least one to listen on");
  if (e.SIGNER_TLS_LISTEN) {
    const missing = (["SIGNER_TLS_CERT", "SIGNER_TLS_KEY", "SIGNER_TLS_CLIENT_CA"] as const).filter(
      (k) => !e[k],
    );
    if (missing.length)
      throw new ConfigError(`env: ${missing.join(", ")}: required with SIGNER_TLS_LISTEN (mutual TLS)`);
  }
  return { ...e, redis: target };
}

export interface SignerService {
  policy: SigningPolicy;
  listeners: SignerListeners;
  log: Logger;
  close(): Promise<void>;
}

/** Reads a key the way the signer requires it: owner-only file, valid keypair. */
function loadKey(path: string, setting: string): Keypair {
  assertPrivateKeyFile(path, setting);
  return readKeypairFile(path, setting);
}

/**
 * The signer's configuration file (the fill rules read its tokens and limits only; the webhook's own
 * settings do not apply here), its keys and its limits file. A key or limits problem is a
 * configuration error: one message naming the setting, no stack.
 */
function readSignerFiles(env: ReturnType<typeof parseSignerEnv>) {
  const configPath = env.CONFIG ?? DEFAULT_CONFIG_PATH;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(configPath, "utf8"));
  } catch (e) {
    throw new ConfigError(`env: CONFIG: cannot read ${configPath}: ${(e as Error).message}`);
  }
  const file = parseFileConfig(raw, configPath);
  const config = buildConfig(parseEnv({}), file, configPath);
  try {
    const keys: Keypair[] = [loadKey(env.SIGNER_KEYPAIR, "SIGNER_KEYPAIR")];
    if (env.SIGNER_NEXT_KEYPAIR) keys.push(loadKey(env.SIGNER_NEXT_KEYPAIR, "SIGNER_NEXT_KEYPAIR"));
    const issuerKey = env.SIGNER_ISSUER_KEYPAIR
      ? loadKey(env.SIGNER_ISSUER_KEYPAIR, "SIGNER_ISSUER_KEYPAIR")
      : undefined;
    return { file, config, keys, issuerKey, policyFile: loadLimits(env.SIGNER_LIMITS, file.tokens) };
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

/** SIGNER_TLS_LISTEN (host:port, IPv6 in brackets) with its certificate, key and client CA. */
function tlsListenOf(env: ReturnType<typeof parseSignerEnv>): Parameters<typeof listenSigner>[0]["tls"] {
  if (!env.SIGNER_TLS_LISTEN) return undefined;
  const at = env.SIGNER_TLS_LISTEN.lastIndexOf(":");
  return {
    host: env.SIGNER_TLS_LISTEN.slice(0, at).replace(/^\[|\]$/g, ""),
    port: Number(env.SIGNER_TLS_LISTEN.slice(at + 1)),
    certFile: env.SIGNER_TLS_CERT as string,
    keyFile: env.SIGNER_TLS_KEY as string,
    clientCaFile: env.SIGNER_TLS_CLIENT_CA as string,
  };
}

/** Each request to the policy's answer for it. */
function answerWith(policy: SigningPolicy): (req: SignerRequest) => Promise<SignerResponse> {
  return async (req) => {
    if (req.op === "keys") return { id: req.id, ok: true, ...policy.keys() };
    if (req.op === "companion")
      return { id: req.id, ...(await policy.companion(req.quoteId, req.transaction, req.tipAccount)) };
    if (req.op === "signV2")
      return { id: req.id, ...(await policy.decideV2(req.swapUuid, req.transaction, req.claimed)) };
    return { id: req.id, ...(await policy.decide(req.quoteId, req.transaction)) };
  };
}

export async function startSignerService(
  vars: Record<string, string | undefined>,
  opts: {
    log?: Logger;
    redis?: RedisClient;
    redisPrefix?: string;
    now?: () => number;
    /** The chain reader (tests); else one over SIGNER_RPC_URL when set. */
    chain?: Pick<Chain, "isBlockhashValid" | "getAccounts">;
  } = {},
): Promise<SignerService> {
  const env = parseSignerEnv(vars);
  const log = opts.log ?? createLogger(env.LOG_LEVEL).child({ service: "rfq-maker-signer" });
  const { file, config, keys, policyFile, issuerKey } = readSignerFiles(env);

  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };
  try {
    let redis = opts.redis;
    if (!redis) {
      const owned = createRedisClient(env.redis, { client: "signer", log });
      closers.push(async () => owned.disconnect());
      await waitReady(owned, env.redis.setting, env.redis.address, 5_000);
      redis = owned;
    }
    const prefixes = redisKeys(file, opts.redisPrefix);
    const store = new RedisQuoteStore(redis, prefixes.quotes);
    // The signer's own prices: its file's sources, never the webhook's.
    const priceSources = createNamedPriceSources(
      policyFile.priceSources,
      (name) => [...policyFile.bands.values()].filter((b) => b.priceSource === name).map((b) => b.pair),
      { redis, log },
    );
    for (const source of priceSources.values()) {
      closers.push(() => source.close());
      await source.start();
    }
    let chain = opts.chain;
    if (!chain && env.SIGNER_RPC_URL) {
      const rpc = new RpcChain({ urls: [env.SIGNER_RPC_URL] });
      closers.push(() => rpc.close());
      chain = rpc;
    }
    const limits = policyFile.limits;
    const issuanceRecord = new SignerIssuanceLedger(redis, prefixes.signer);
    const policy = new SigningPolicy({
      config,
      store,
      ledger: new SignerLedger(redis, prefixes.signer),
      limits,
      bands: policyFile.bands,
      priceSources,
      ...(chain ? { chain } : {}),
      keys,
      ...(issuerKey ? { issuer: { keypair: issuerKey, ledger: issuanceRecord } } : {}),
      issuanceRecord,
      log,
      ...(opts.now ? { now: opts.now } : {}),
    });
    const tls = tlsListenOf(env);
    const listeners = await listenSigner({
      ...(env.SIGNER_SOCKET ? { socketPath: env.SIGNER_SOCKET } : {}),
      ...(tls ? { tls } : {}),
      handle: answerWith(policy),
      log,
    });
    closers.push(() => listeners.close());
    const k = policy.keys();
    log.info(
      {
        active: k.active,
        keys: k.keys,
        issuer: k.issuer ?? "none",
        socket: listeners.socketPath,
        tlsPort: listeners.tlsPort,
        limitedTokens: limits.size,
        bands: [...policyFile.bands.values()].map((b) => `${b.pair} ${b.bandBps} bps (${b.priceSource})`),
        chain: env.SIGNER_RPC_URL ? "SIGNER_RPC_URL" : opts.chain ? "given" : "none",
      },
      "signer listening",
    );
    return { policy, listeners, log, close };
  } catch (e) {
    await close();
    throw e;
  }
}

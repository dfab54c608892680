/**
 * What the operations commands (doctor, registration) need, chosen as the service chooses them (the
 * same makeSigner and makeChain as src/compose.ts): the maker key (the signer service's at SIGNER_URL,
 * MAKER_KEYPAIR, or the paper setup's key in DATA_DIR), the chain (RPC_URL, or a freshly seeded local
 * chain in the paper setup), Redis when one is configured (REDIS_URL, REDIS_CLUSTER_NODES or
 * REDIS_SENTINELS; the same factory as the service), and the service's configured parts (src/wiring/parts.ts:
 * the price sources, not started, and USD values).
 */
import type { Config } from "../../config/load.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { startPriceSources } from "../../pricing/sources.ts";
import type { UsdValuer } from "../../pricing/usd.ts";
import type { Chain } from "../chain/interface.ts";
import { makeChain } from "../chain/make.ts";
import { createRedisClient, type RedisClient, redisTarget } from "../redis/client.ts";
import { makeSigner } from "../signing/keypair.ts";
import type { Signer } from "../signing/port.ts";
import { RemoteSigner } from "../signing/remote.ts";
import { configuredParts } from "../wiring/parts.ts";

export interface OpsContext {
  config: Config;
  chain: Chain;
  signer: Signer;
  redis?: RedisClient;
  sources: ReadonlyMap<string, PriceSource>;
  /** USD values over those sources, as the service values (src/wiring/parts.ts). */
  usd: UsdValuer;
  /** "rpc <host>" or "local chain (paper setup, seeded by this command)". */
  chainNote: string;
  /**
   * Starts the price sources and waits up to `waitMs` for every enabled pair's first price (streaming
   * sources need a moment; static and Redis ones have it at start). A source that cannot start is
   * reported by the returned message, not thrown.
   */
  startPrices(waitMs: number): Promise<string | undefined>;
  close(): Promise<void>;
}

export async function opsContext(config: Config): Promise<OpsContext> {
  // The service's own parts first: a configuration the service refuses is refused here, before any
  // key is read or generated.
  const target = redisTarget(config.env);
  const redis = target ? createRedisClient(target, { client: "doctor", use: "probe" }) : undefined;
  let parts: ReturnType<typeof configuredParts>;
  try {
    parts = configuredParts(config, redis ? { redis } : {});
  } catch (e) {
    redis?.disconnect();
    throw e;
  }
  // With SIGNER_URL the key is the signer service's: never generate or read one here.
  const remote = config.env.SIGNER_URL
    ? await RemoteSigner.connect({
        url: config.env.SIGNER_URL,
        ...(config.env.SIGNER_CA ? { caFile: config.env.SIGNER_CA } : {}),
        ...(config.env.SIGNER_CLIENT_CERT ? { clientCertFile: config.env.SIGNER_CLIENT_CERT } : {}),
        ...(config.env.SIGNER_CLIENT_KEY ? { clientKeyFile: config.env.SIGNER_CLIENT_KEY } : {}),
        timeoutMs: config.env.SIGNER_TIMEOUT_MS,
      })
    : undefined;
  const signer = remote ?? makeSigner(config).signer;
  // The paper setup's chain lives inside the service process; this command sees a fresh one, seeded
  // the same way. Point RPC_URL at `npm run chain` to inspect a chain that persists.
  const made = await makeChain(config, signer.publicKey, { rpcTimeoutMs: 5_000 });
  const chain = made.chain;
  const chainNote = made.seeded
    ? "local chain (paper setup: a fresh one, seeded as `npm start` seeds it)"
    : made.note;
  const sources = parts.priceSources;
  return {
    config,
    chain,
    signer,
    ...(redis ? { redis } : {}),
    sources,
    usd: parts.usd,
    chainNote,
    async startPrices(waitMs) {
      const problem = await startPriceSources(sources).then(
        () => undefined,
        (e: unknown) => `price sources did not start: ${(e as Error).message}`,
      );
      const pairs = config.file.pairs.filter((p) => p.enabled);
      const until = Date.now() + waitMs;
      while (
        Date.now() < until &&
        pairs.some((p) => !sources.get(p.priceSource)?.price(`${p.base}/${p.quote}`))
      )
        await new Promise((r) => setTimeout(r, 100));
      return problem;
    },
    async close() {
      await parts.close();
      await chain.close();
      redis?.disconnect();
      remote?.close();
    },
  };
}

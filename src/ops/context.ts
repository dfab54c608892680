/**
 * What the operations commands (doctor, registration) need, chosen as the service chooses them (the
 * same makeSigner and makeChain as src/compose.ts): the maker key (the signer service's at SIGNER_URL,
 * MAKER_KEYPAIR, or the paper setup's key in DATA_DIR), the chain (RPC_URL, or a freshly seeded local
 * chain in the paper setup), Redis when one is configured (REDIS_URL, REDIS_CLUSTER_NODES or
 * REDIS_SENTINELS; the same factory as the service), and the configured price sources (not started).
 */
import type { Config } from "../../config/load.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { createPriceSources } from "../../pricing/sources.ts";
import type { Chain } from "../chain/interface.ts";
import { makeChain } from "../chain/make.ts";
import { createRedisClient, type RedisClient, redisTarget } from "../redis/client.ts";
import { makeSigner, type Signer } from "../signer/index.ts";
import { RemoteSigner } from "../signer/remote.ts";

export interface OpsContext {
  config: Config;
  chain: Chain;
  signer: Signer;
  redis?: RedisClient;
  sources: Map<string, PriceSource>;
  /** "rpc <host>" or "local chain (paper setup, seeded by this command)". */
  chainNote: string;
  close(): Promise<void>;
}

export async function opsContext(config: Config): Promise<OpsContext> {
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
  // The service's own factory and topology settings; one try, so an unreachable Redis is a FAIL row
  // in doctor's table, not a wait or a stack trace on stderr.
  const target = redisTarget(config.env);
  const redis = target ? createRedisClient(target, { client: "doctor", use: "probe" }) : undefined;
  const sources = createPriceSources(config, redis ? { redis } : {});
  return {
    config,
    chain,
    signer,
    ...(redis ? { redis } : {}),
    sources,
    chainNote,
    async close() {
      await Promise.allSettled([...sources.values()].map((s) => s.close()));
      await chain.close();
      redis?.disconnect();
      remote?.close();
    },
  };
}

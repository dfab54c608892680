/**
 * The one choice of chain adapter, used by the service (src/compose.ts) and the ops commands
 * (src/ops/context.ts): the JSON-RPC chain when RPC_URL is set, else the paper setup's local chain,
 * seeded with the maker's inventory from the configuration.
 */
import type { PublicKey } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import type { BundlePort } from "./bundle.ts";
import { JitoBundleClient } from "./bundle-jito.ts";
import type { Chain } from "./interface.ts";
import { loadLocalChain } from "./load-local.ts";
import { LocalBundleEngine } from "./local/bundle-engine.ts";
import { type SeededToken, seedFromConfig } from "./local/seed.ts";
import { parseUrlList, RpcChain } from "./rpc.ts";

export interface MadeChain {
  chain: Chain;
  /** Set when a local chain was created and seeded here. */
  seeded?: SeededToken[];
  /** For logs and the ops commands' header: "rpc <host>" or the local chain's description. */
  note: string;
}

export async function makeChain(
  config: Config,
  maker: PublicKey,
  opts: {
    rpcTimeoutMs?: number;
    onRpcError?: (method: string) => void;
    onRpcOk?: (method: string) => void;
    issuer?: PublicKey;
  } = {},
): Promise<MadeChain> {
  if (config.env.RPC_URL) {
    const chain = new RpcChain({
      urls: parseUrlList(config.env.RPC_URL),
      ...(opts.rpcTimeoutMs !== undefined ? { timeoutMs: opts.rpcTimeoutMs } : {}),
      ...(opts.onRpcError ? { onError: opts.onRpcError } : {}),
      ...(opts.onRpcOk ? { onOk: opts.onRpcOk } : {}),
    });
    return { chain, note: chain.description };
  }
  // The paper setup only: LiteSVM is a development dependency, loaded on demand (load-local.ts).
  const local = (await loadLocalChain()).create();
  const seeded = seedFromConfig(local, config.file, maker, opts.issuer ? { issuer: opts.issuer } : {});
  return { chain: local, seeded, note: "local chain (paper setup, seeded from the configuration)" };
}

/** The bundle port, or why there is none (then permissioned fills, which need one, are refused). */
export type MadeBundlePort = { port: BundlePort; note: string } | { port: null; reason: string };

/**
 * The one choice of bundle port (bundle.ts): a Jito-style block engine client when BUNDLE_URL is set;
 * else, over the paper setup's local chain, the local bundle engine; else (a production RPC_URL and no
 * BUNDLE_URL) none, with the reason.
 */
export async function makeBundlePort(
  env: { BUNDLE_URL?: string | undefined; RPC_URL?: string | undefined },
  chain: Chain,
  opts: { timeoutMs?: number } = {},
): Promise<MadeBundlePort> {
  if (env.BUNDLE_URL) {
    const port = new JitoBundleClient({
      urls: parseUrlList(env.BUNDLE_URL),
      chain,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    return { port, note: port.description };
  }
  if (!env.RPC_URL) {
    const LocalChain = await loadLocalChain();
    if (chain instanceof LocalChain) {
      const port = new LocalBundleEngine(chain);
      return { port, note: `${port.description} (over the local chain)` };
    }
  }
  return {
    port: null,
    reason: env.RPC_URL
      ? "BUNDLE_URL: unset, and a production RPC_URL has no bundle engine of its own: set BUNDLE_URL to a Jito-style block engine"
      : "BUNDLE_URL: unset, and the chain is not the embedded local chain",
  };
}

/**
 * The one choice of chain adapter, used by the service (src/compose.ts) and the ops commands
 * (src/ops/context.ts): the JSON-RPC chain when RPC_URL is set, else the paper setup's local chain,
 * seeded with the maker's inventory from the configuration.
 */
import type { PublicKey } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import type { Chain } from "./interface.ts";
import { loadLocalChain } from "./load-local.ts";
import { type SeededToken, seedFromConfig } from "./local/seed.ts";
import { parseRpcUrls, RpcChain } from "./rpc.ts";

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
  } = {},
): Promise<MadeChain> {
  if (config.env.RPC_URL) {
    const chain = new RpcChain({
      urls: parseRpcUrls(config.env.RPC_URL),
      ...(opts.rpcTimeoutMs !== undefined ? { timeoutMs: opts.rpcTimeoutMs } : {}),
      ...(opts.onRpcError ? { onError: opts.onRpcError } : {}),
      ...(opts.onRpcOk ? { onOk: opts.onRpcOk } : {}),
    });
    return { chain, note: chain.description };
  }
  // The paper setup only: LiteSVM is a development dependency, loaded on demand (load-local.ts).
  const local = (await loadLocalChain()).create();
  const seeded = seedFromConfig(local, config.file, maker);
  return { chain: local, seeded, note: "local chain (paper setup, seeded from the configuration)" };
}

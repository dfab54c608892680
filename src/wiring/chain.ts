/**
 * The chain and the bundle port: a given chain (tests), the RPC (`RPC_URL`, probed first so that a
 * wrong URL stops the start naming it), or the paper setup's local chain, seeded; and how permissioned
 * fills land atomically (a block engine, the local one) or why they cannot.
 */
import type { Chain } from "../chain/interface.ts";
import type { SeededToken } from "../chain/local/seed.ts";
import { type MadeBundlePort, makeBundlePort, makeChain } from "../chain/make.ts";
import { parseUrlList, probeRpcEndpoint, redactUrl } from "../chain/rpc.ts";
import { StartupError } from "../errors/startup.ts";
import { owned, type Wiring } from "./options.ts";
import type { WiredKeys } from "./signer.ts";

export interface WiredChain {
  chain: Chain;
  /** Set when this process created and seeded a local chain. */
  seeded: SeededToken[] | undefined;
  bundles: MadeBundlePort;
  /** For logs: "rpc <host>" or the local chain's description. */
  note: string;
}

export async function wireChain(w: Wiring, keys: WiredKeys): Promise<WiredChain> {
  const { config, given, metrics } = w;
  const rpc = !given.chain && config.env.RPC_URL;
  if (rpc) {
    const first = parseUrlList(rpc)[0] as string;
    const problem = await probeRpcEndpoint(first, w.startTimeoutMs);
    if (problem) throw new StartupError("RPC_URL", redactUrl(first), `not reachable: ${problem}`);
  }
  const made = given.chain
    ? { chain: given.chain, seeded: undefined, note: given.chain.description }
    : await makeChain(config, keys.signer.publicKey, {
        onRpcError: (method) => metrics.rpcCall(method, false),
        onRpcOk: (method) => metrics.rpcCall(method, true),
        ...(keys.issuer ? { issuer: keys.issuer.publicKey } : {}),
      });
  if (rpc) metrics.watchRpc();
  const chain = owned(w, made.chain);
  const bundles = given.bundles ?? (await makeBundlePort(config.env, chain));
  if (bundles.port) owned(w, bundles.port);
  return { chain, seeded: made.seeded, bundles, note: made.note };
}

/**
 * The operator's chain access over Solana JSON-RPC: the RpcChain adapter for reads, blockhashes and
 * statuses, plus `simulateTransaction` (signatures not verified, the blockhash as built) to size the
 * compute-unit limit as the operator does.
 */
import { Connection, type VersionedTransaction } from "@solana/web3.js";
import { RpcChain } from "../../src/chain/rpc.ts";
import type { OperatorChain, SimulationResult } from "./build-order.ts";

export function operatorChainOverRpc(url: string, timeoutMs = 5_000): OperatorChain {
  const chain = new RpcChain({ urls: [url], timeoutMs });
  const connection = new Connection(url, { commitment: "confirmed", disableRetryOnRateLimit: true });
  const simulate = async (tx: VersionedTransaction): Promise<SimulationResult> => {
    try {
      const r = await connection.simulateTransaction(tx, {
        sigVerify: false,
        replaceRecentBlockhash: false,
        commitment: "confirmed",
      });
      if (r.value.err) {
        const logs = r.value.logs?.slice(-3).join(" | ") ?? "";
        return { ok: false, error: `${JSON.stringify(r.value.err)}${logs ? `: ${logs}` : ""}` };
      }
      return { ok: true, unitsConsumed: r.value.unitsConsumed ?? 0 };
    } catch (e) {
      return { ok: false, error: `simulateTransaction failed: ${(e as Error).message}` };
    }
  };
  return { chain, simulate };
}

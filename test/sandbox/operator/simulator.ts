/**
 * The operator simulator in front of one webhook (registered as "mm"), every hop over a real socket:
 * the harness's app on its own port, the harness's local chain behind the JSON-RPC server, and the
 * simulator reading the chain through that server. The test keeps and closes the harness itself.
 */
import { startRpcServer } from "../../../sandbox/chain/rpc-server.ts";
import { operatorChainOverRpc } from "../../../sandbox/operator/rpc-chain.ts";
import { type OperatorServer, startOperator } from "../../../sandbox/operator/server.ts";
import { type Harness, listen } from "../../support/harness.ts";

type Answer = { status: number; body: Record<string, unknown> };

export interface Simulator {
  op: OperatorServer;
  /** How many transactions the simulator has simulated so far. */
  readonly simulations: number;
  /** GET /ultra/v1/order as a taker. */
  order(params: Record<string, string>): Promise<Answer>;
  /** POST one of the simulator's execute endpoints as a taker (the path may carry a query). */
  execute(path: string, body: Record<string, unknown>): Promise<Answer>;
  /** Closes the simulator, the RPC server and the webhook's socket (not the harness). */
  close(): Promise<void>;
}

/** Starts the stack above; `now` is the simulator's clock (wall time unless given). */
export async function startSimulator(
  h: Harness,
  opts: { now?: () => number; apiKey?: string } = {},
): Promise<Simulator> {
  const webhook = await listen(h.app);
  const rpc = await startRpcServer(h.chain, { host: "127.0.0.1", port: 0 });
  const operatorChain = operatorChainOverRpc(rpc.url);
  const simulate = operatorChain.simulate;
  let simulations = 0;
  const op = await startOperator({
    chain: {
      chain: operatorChain.chain,
      ...(simulate
        ? {
            simulate: (tx: Parameters<typeof simulate>[0]) => {
              simulations++;
              return simulate(tx);
            },
          }
        : {}),
    },
    webhooks: [{ name: "mm", baseUrl: webhook.url }],
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
  });
  return {
    op,
    get simulations() {
      return simulations;
    },
    async order(params) {
      const res = await fetch(`${op.url}/ultra/v1/order?${new URLSearchParams(params)}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async execute(path, body) {
      const res = await fetch(`${op.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async close() {
      await op.close();
      await rpc.close();
      await webhook.close();
    },
  };
}

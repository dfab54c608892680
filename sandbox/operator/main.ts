/**
 * The operator simulator on its own: A STAND-IN FOR THE OPERATOR'S RFQ ROUTE (the aggregator's
 * market-maker router), not the operator itself. It does what the operator does to a maker as far as
 * the contract and the seed describe it: reads /tokens and /permissioned-tokens every 10 minutes,
 * fans quotes out with the 250 ms budget, builds the fill transaction the operator's way, checks the
 * taker's signed transaction, forwards /swap with the 25 s limit, confirms on chain, and polices the
 * fill rate. Its public surface mimics GET /ultra/v1/order and POST /ultra/v1/execute, /swap/v2/execute.
 *
 *   RPC_URL=http://127.0.0.1:8899 WEBHOOK_URL=http://127.0.0.1:8080 npm run operator
 *
 * Environment: RPC_URL (the chain, required), WEBHOOK_URL (comma-separated maker base URLs),
 * WEBHOOK_API_KEY, OPERATOR_HOST (127.0.0.1), OPERATOR_PORT (8090), OPERATOR_FEE_BPS (10),
 * OPERATOR_API_KEY (unset: no key required), TOKEN_REFRESH_MS (600000).
 * `npm run sandbox` starts it together with the chain and the webhook.
 */
import { parseArgs } from "../../src/cli/args.ts";
import { operatorChainOverRpc } from "./rpc-chain.ts";
import { startOperator } from "./server.ts";

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name}: must be a non-negative integer`);
  return v;
}

const USAGE = {
  command: "npm run operator",
  summary:
    "The operator simulator on its own (a stand-in for the operator's RFQ route): syncs the makers'\n" +
    "token lists, fans quotes out with the 250 ms budget, builds fills, forwards /swap, confirms on\n" +
    "chain and polices the fill rate. Serves GET /ultra/v1/order and POST /ultra/v1/execute.",
  flags: {},
  notes:
    "environment: RPC_URL (required), WEBHOOK_URL (comma-separated maker base URLs), WEBHOOK_API_KEY,\n" +
    "OPERATOR_HOST (127.0.0.1), OPERATOR_PORT (8090), OPERATOR_FEE_BPS (10), OPERATOR_API_KEY,\n" +
    "TOKEN_REFRESH_MS (600000).\n" +
    "example: RPC_URL=http://127.0.0.1:8899 WEBHOOK_URL=http://127.0.0.1:8080 npm run operator",
} as const;

async function main(): Promise<void> {
  parseArgs(process.argv.slice(2), USAGE);
  const rpc = process.env.RPC_URL;
  if (!rpc) throw new Error("RPC_URL: required (the chain the operator reads and confirms on)");
  const hooks = (process.env.WEBHOOK_URL ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const apiKey = process.env.WEBHOOK_API_KEY || undefined;
  const op = await startOperator({
    chain: operatorChainOverRpc(rpc),
    webhooks: hooks.map((baseUrl, i) => ({ name: `maker${i + 1}`, baseUrl, ...(apiKey ? { apiKey } : {}) })),
    host: process.env.OPERATOR_HOST || "127.0.0.1",
    port: intEnv("OPERATOR_PORT", 8090),
    feeBps: intEnv("OPERATOR_FEE_BPS", 10),
    tokenRefreshMs: intEnv("TOKEN_REFRESH_MS", 600_000),
    ...(process.env.OPERATOR_API_KEY ? { apiKey: process.env.OPERATOR_API_KEY } : {}),
  });
  const lines = [`operator simulator (a stand-in for the operator's RFQ route) on ${op.url}`];
  for (const [name, sync] of op.firstSync) {
    const h = op.registry.get(name);
    lines.push(
      `  ${name} ${h?.baseUrl}: ${sync.kind === "failed" ? `token sync failed: ${sync.error}` : `${h?.tokens.size} tokens`}`,
    );
  }
  lines.push(
    "  GET  /ultra/v1/order?inputMint=&outputMint=&amount=&taker=&swapMode=ExactIn|ExactOut",
    "  POST /ultra/v1/execute, /swap/v2/execute {signedTransaction, requestId}",
    "  GET  /operator/webhooks, POST /operator/webhooks {name, baseUrl, apiKey}, POST /operator/webhooks/:name/sync?force=1",
  );
  process.stdout.write(`${lines.join("\n")}\n`);
  const stop = () => void op.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});

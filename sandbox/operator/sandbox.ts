/**
 * `npm run sandbox`: the local chain server, the webhook and the operator simulator together, on
 * 127.0.0.1, with two funded takers; prints the URLs and keeps running until Ctrl-C.
 *
 * Ports: CHAIN_PORT (8899), WEBHOOK_PORT (8080), WEBHOOK_ADMIN_PORT (8081, the webhook's operations
 * listener: /metrics, /admin), OPERATOR_PORT (8090), RFQ_V2_PORT (8092, the RFQ v2 stand-in). State
 * (keys, chain seed, logs, stack.json) lives in data/sandbox/. Redis: REDIS_URL, REDIS_CLUSTER_NODES (a Redis Cluster), or a throwaway redis-server.
 */
import { join } from "node:path";
import { parseArgs } from "../../src/cli/args.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { startStack } from "./stack.ts";

const port = (name: string, fallback: number) => {
  const v = Number(process.env[name] || fallback);
  if (!Number.isInteger(v) || v < 0 || v > 65_535) throw new Error(`${name}: not a port`);
  return v;
};

const USAGE = {
  command: "npm run sandbox",
  summary:
    "The local chain server, the webhook (production shape: Redis store, RPC chain) and the operator\n" +
    "simulator together on 127.0.0.1, with two funded takers; prints the URLs and runs until Ctrl-C.\n" +
    "State (keys, chain seed, logs, stack.json) in data/sandbox/.",
  flags: {
    "remote-signer": {
      type: "boolean",
      description:
        "run the signer service (npm run signer) as its own process on data/sandbox/signer.sock; the webhook gets SIGNER_URL and no key",
    },
  },
  notes:
    "environment: CHAIN_PORT (8899), WEBHOOK_PORT (8080), WEBHOOK_ADMIN_PORT (8081: /metrics, /admin),\n" +
    "OPERATOR_PORT (8090), RFQ_V2_PORT (8092: the RFQ v2 stand-in), REDIS_URL or REDIS_CLUSTER_NODES\n" +
    "(unset: a throwaway redis-server), CONFIG.",
} as const;

async function main(): Promise<void> {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const dir = join(REPO_ROOT, "data", "sandbox");
  say("starting the sandbox ...");
  const stack = await startStack({
    dir,
    ports: {
      chain: port("CHAIN_PORT", 8899),
      webhook: port("WEBHOOK_PORT", 8080),
      webhookAdmin: port("WEBHOOK_ADMIN_PORT", 8081),
      operator: port("OPERATOR_PORT", 8090),
      rfqV2: port("RFQ_V2_PORT", 8092),
    },
    takers: [
      {
        name: "1",
        sol: 50_000_000_000n,
        tokens: { USDC: 10_000_000_000n, USDT: 10_000_000_000n, JUP: 10_000_000_000n },
      },
      { name: "2", sol: 5_000_000_000n, tokens: { USDC: 1_000_000_000n } },
    ],
    remoteSigner: values["remote-signer"],
    // The operator's RFQ v2 service (stand-in) with every enabled pair streamed; with --remote-signer
    // the signer service judges and signs its swaps.
    rfqV2: true,
    // TBILL, a permissioned token the maker issues just in time (sandbox/operator/issued-token.ts).
    issuedToken: true,
    say: (s) => say(`  ${s}`),
  });
  const sample = new URLSearchParams({
    inputMint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    outputMint: "So11111111111111111111111111111111111111112",
    amount: "10000000",
    taker: stack.takers[0]!.keypair.publicKey.toBase58(),
  });
  say(
    [
      "",
      `sandbox ready (state in ${dir}, manifest ${join(dir, "stack.json")})`,
      `  chain    (Solana JSON-RPC)   ${stack.chainUrl}`,
      `  webhook  (maker ${stack.maker}) ${stack.webhookUrl}`,
      ...(stack.signerUrl ? [`  signer   (holds the maker key) ${stack.signerUrl}`] : []),
      `  webhook operations (metrics, admin) ${stack.webhookAdminUrl}`,
      `  operator (simulator)         ${stack.operatorUrl}`,
      ...(stack.rfqV2
        ? [`  rfq v2   (stand-in, gRPC)    ${stack.rfqV2.url}  maker id ${stack.rfqV2.makerId}`]
        : []),
      ...(stack.issued
        ? [
            `  permissioned ${stack.issued.symbol} (Token-2022) mint ${stack.issued.mint}, issuer ${stack.issued.issuer}: minted for a buy, burned for a sell, in one bundle with the fill`,
          ]
        : []),
      ...stack.takers.map(
        (t) => `  taker ${t.name}: ${t.keypair.publicKey.toBase58()}  keypair ${t.keypairPath}`,
      ),
      "",
      "try:",
      `  curl '${stack.operatorUrl}/ultra/v1/order?${sample}'`,
      `  curl ${stack.operatorUrl}/operator/webhooks`,
      "Ctrl-C stops everything.",
    ].join("\n"),
  );
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    say("stopping ...");
    void stack.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});

/**
 * `npm run sandbox`: the local chain server, the webhook and the operator simulator together, on
 * 127.0.0.1, with two funded takers and a smart-account (Squads) taker; prints the URLs and keeps
 * running until Ctrl-C.
 *
 * Ports: CHAIN_PORT (8899), WEBHOOK_PORT (8080), WEBHOOK_ADMIN_PORT (8081, the webhook's operations
 * listener: /metrics, /admin), OPERATOR_PORT (8090), RFQ_V2_PORT (8092, the RFQ v2 stand-in); with
 * `--port-base N` they are N to N+4 in that order, `--port-base 0` picks free ones (a variable still
 * overrides its own port, 0 a free one). These variables are the sandbox's own: they are removed from
 * its environment once read, so that no child inherits them (the webhook refuses a name near one of its
 * own settings, e.g. RFQ_V2_PORT beside RFQ_V2_URL). State (keys, chain seed, logs, stack.json) lives
 * in data/sandbox/, or `--dir`. Redis: REDIS_URL, REDIS_CLUSTER_NODES (a Redis Cluster), or a throwaway
 * redis-server. Two sandboxes run side by side with their own --dir and --port-base.
 */
import { isAbsolute, join, resolve } from "node:path";
import { parseArgs } from "../../src/cli/args.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { startStack } from "./stack.ts";

/** The sandbox's own port variables, in `--port-base` order, with their defaults. */
const PORT_VARIABLES = [
  ["CHAIN_PORT", 8899],
  ["WEBHOOK_PORT", 8080],
  ["WEBHOOK_ADMIN_PORT", 8081],
  ["OPERATOR_PORT", 8090],
  ["RFQ_V2_PORT", 8092],
] as const;

const checkPort = (what: string, v: number) => {
  if (!Number.isInteger(v) || v < 0 || v > 65_535) throw new Error(`${what}: not a port (0 to 65535)`);
  return v;
};

/**
 * Each port: its variable when set, else `base + i` (`base` 0: 0, a free port), else the default.
 * Then the variables are deleted from this process's environment: the children it spawns inherit it.
 */
function sandboxPorts(
  env: NodeJS.ProcessEnv,
  base: number | undefined,
): { chain: number; webhook: number; webhookAdmin: number; operator: number; rfqV2: number } {
  if (base !== undefined) checkPort("--port-base", base);
  if (base !== undefined && base > 0) checkPort("--port-base + 4", base + PORT_VARIABLES.length - 1);
  const [chain, webhook, webhookAdmin, operator, rfqV2] = PORT_VARIABLES.map(([name, fallback], i) => {
    const set = env[name];
    const v =
      set !== undefined && set !== "" ? Number(set) : base === undefined ? fallback : base && base + i;
    return checkPort(name, v);
  }) as [number, number, number, number, number];
  for (const [name] of PORT_VARIABLES) delete env[name];
  return { chain, webhook, webhookAdmin, operator, rfqV2 };
}

const USAGE = {
  command: "npm run sandbox",
  summary:
    "The local chain server, the webhook (production shape: Redis store, RPC chain) and the operator\n" +
    "simulator together on 127.0.0.1, with two funded takers and a smart-account (Squads) taker; prints\n" +
    "the URLs and runs until Ctrl-C. State (keys, chain seed, logs, stack.json) in data/sandbox/ or --dir.",
  flags: {
    dir: {
      type: "string",
      value: "PATH",
      description: "the state folder (keys, chain seed, logs, stack.json); default data/sandbox",
    },
    "port-base": {
      type: "string",
      value: "N",
      description:
        "ports N (chain), N+1 (webhook), N+2 (webhook operations), N+3 (operator), N+4 (RFQ v2); 0: free ports",
    },
    "remote-signer": {
      type: "boolean",
      description:
        "run the signer service (npm run signer) as its own process on data/sandbox/signer.sock; the webhook gets SIGNER_URL and no key",
    },
  },
  notes:
    "environment: CHAIN_PORT (8899), WEBHOOK_PORT (8080), WEBHOOK_ADMIN_PORT (8081: /metrics, /admin),\n" +
    "OPERATOR_PORT (8090), RFQ_V2_PORT (8092: the RFQ v2 stand-in), each over --port-base (0: a free\n" +
    "port; the sandbox's own, never passed to the webhook), REDIS_URL or REDIS_CLUSTER_NODES (unset: a\n" +
    "throwaway redis-server), CONFIG.\n" +
    "a second sandbox beside the first: npm run sandbox -- --dir data/sandbox-2 --port-base 0",
} as const;

async function main(): Promise<void> {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const dirFlag = values.dir;
  const dir = dirFlag
    ? isAbsolute(dirFlag)
      ? dirFlag
      : resolve(process.cwd(), dirFlag)
    : join(REPO_ROOT, "data", "sandbox");
  const base = values["port-base"];
  if (base !== undefined && !/^\d+$/.test(base)) throw new Error(`--port-base: not a port number: ${base}`);
  const ports = sandboxPorts(process.env, base === undefined ? undefined : Number(base));
  say("starting the sandbox ...");
  const stack = await startStack({
    dir,
    ports,
    takers: [
      {
        name: "1",
        sol: 50_000_000_000n,
        tokens: { USDC: 10_000_000_000n, USDT: 10_000_000_000n, JUP: 10_000_000_000n },
      },
      { name: "2", sol: 5_000_000_000n, tokens: { USDC: 1_000_000_000n } },
    ],
    // A smart-account (Squads) taker, as the demo's: its vault takes, its two members sign (the
    // operator wraps the fill in executeTransactionSyncV2); listed in stack.json under smartAccounts.
    smartAccountTaker: { name: "squads", sol: 1_000_000_000n, tokens: { USDC: 1_000_000_000n } },
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
      ...(stack.smartAccount
        ? [
            `  smart-account taker ${stack.smartAccount.name}: vault ${stack.smartAccount.vault.toBase58()}, members ${stack.smartAccount.members.map((m) => m.publicKey.toBase58()).join(", ")} (keypairs in stack.json)`,
          ]
        : []),
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

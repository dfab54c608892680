/**
 * `npm run chain`: a seeded LocalChain behind a Solana JSON-RPC endpoint on loopback.
 *
 *   npm run chain                        # config/chain.json, tokens from config/default.json
 *   CHAIN_SEED=my-seed.json CONFIG=my-config.json npm run chain
 *
 * Then point the service at it: RPC_URL=http://127.0.0.1:8899 (with the same maker keypair), and
 * BUNDLE_URL=http://127.0.0.1:8899 for bundles (the local bundle engine behind Jito's API). The
 * order-engine fill is emulated (see src/chain/local/index.ts): this is a paper chain, not a validator.
 */
import { readFileSync } from "node:fs";
import { PublicKey } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import type { FileConfig, TokenConfig } from "../../config/schema.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import {
  creditSol,
  creditToken,
  lamports,
  seedFromConfig,
  seedSmartAccount,
  tokenBalance,
} from "../../src/chain/local/seed.ts";
import { parseArgs } from "../../src/cli/args.ts";
import { loadOrCreateKeypair } from "../../src/signing/keypair.ts";
import { startRpcServer } from "./rpc-server.ts";
import { type ChainSeed, readChainSeed } from "./seed-file.ts";

function wallet(w: { keypair?: string; pubkey?: string }): { key: PublicKey; note: string } {
  if (w.pubkey) return { key: new PublicKey(w.pubkey), note: "pubkey only" };
  const path = w.keypair as string;
  const { keypair, created } = loadOrCreateKeypair(path);
  return { key: keypair.publicKey, note: `${path}${created ? " (created)" : ""}` };
}

function mintOf(name: string, tokens: readonly TokenConfig[], where: string): PublicKey {
  const t = tokens.find((x) => x.symbol === name || x.mint === name);
  if (!t) throw new Error(`${where}: unknown token ${name} (not in the service config)`);
  return new PublicKey(t.mint);
}

/** Builds, seeds and serves the chain described by `seed`; returns a stop function. */
export async function runChainServer(
  seed: ChainSeed,
  tokens: readonly TokenConfig[],
  issuance: FileConfig["issuance"] = {},
) {
  const chain = LocalChain.create({ slotMs: seed.slotMs, blockhashValidity: seed.blockhashValidity });
  const maker = wallet(seed.maker);
  const inventory: Record<string, bigint> = {};
  for (const [name, amount] of Object.entries(seed.maker.inventory)) {
    inventory[mintOf(name, tokens, "maker.inventory").toBase58()] = BigInt(amount);
  }
  const issuer = seed.issuer ? wallet(seed.issuer) : undefined;
  const seeded = seedFromConfig(chain, { tokens, issuance }, maker.key, {
    sol: BigInt(seed.maker.sol),
    inventory,
    ...(issuer && seed.issuer ? { issuer: issuer.key, issuerSol: BigInt(seed.issuer.sol) } : {}),
  });

  const takers = seed.takers.map((t, i) => {
    const w = wallet(t);
    creditSol(chain, w.key, BigInt(t.sol));
    for (const [name, amount] of Object.entries(t.tokens)) {
      creditToken(chain, w.key, mintOf(name, tokens, `takers.${i}.tokens`), BigInt(amount));
    }
    return { ...w, tokens: Object.keys(t.tokens) };
  });

  const smartAccounts = seed.smartAccounts.map((sa, i) => {
    const vault = seedSmartAccount(chain, {
      settings: new PublicKey(sa.settings),
      members: sa.members.map((m) => new PublicKey(m)),
    });
    creditSol(chain, vault, BigInt(sa.sol));
    for (const [name, amount] of Object.entries(sa.tokens)) {
      creditToken(chain, vault, mintOf(name, tokens, `smartAccounts.${i}.tokens`), BigInt(amount));
    }
    return { vault, settings: sa.settings, members: sa.members };
  });

  const server = await startRpcServer(chain, { host: seed.host, port: seed.port });
  const lines = [
    `local chain (LiteSVM, order-engine fill emulated) listening on ${server.url}`,
    `  bundle engine (Jito API, BUNDLE_URL=${server.bundleUrl}) at ${server.bundleUrl}/api/v1/bundles, ${server.bundles.tipAccounts.length} tip accounts`,
    `  maker ${maker.key.toBase58()}  [${maker.note}]  ${lamports(chain, maker.key)} lamports`,
    ...(issuer
      ? [
          `  issuer ${issuer.key.toBase58()}  [${issuer.note}]  mint authority of: ${Object.keys(issuance).join(", ")}`,
        ]
      : []),
    ...seeded.map(
      (s) =>
        `    ${s.symbol.padEnd(6)} mint ${s.mint.toBase58()}  ATA ${s.makerAta.toBase58()}  ${s.inventory}`,
    ),
    ...takers.map(
      (t, i) =>
        `  taker ${i + 1} ${t.key.toBase58()}  [${t.note}]  ${lamports(chain, t.key)} lamports` +
        t.tokens
          .map((name) => `  ${name} ${tokenBalance(chain, t.key, mintOf(name, tokens, "takers"))}`)
          .join(""),
    ),
    ...smartAccounts.map(
      (sa, i) =>
        `  smart account ${i + 1}: vault ${sa.vault.toBase58()}  settings ${sa.settings}  members ${sa.members.join(", ")}`,
    ),
  ];
  return { chain, server, banner: lines.join("\n") };
}

const USAGE = {
  command: "npm run chain",
  positionals: "[seed.json]",
  summary:
    "A seeded local chain (LiteSVM, the order-engine fill emulated) behind a Solana JSON-RPC endpoint\n" +
    "on loopback. The seed file (CHAIN_SEED, or the argument, default config/chain.json) gives host,\n" +
    "port, maker and takers; tokens come from CONFIG (default config/default.json). Runs until Ctrl-C.",
  flags: {},
} as const;

async function main(): Promise<void> {
  const { positionals } = parseArgs(process.argv.slice(2), USAGE);
  if (positionals.length > 1)
    throw new Error(`${USAGE.command}: one seed file at most, got ${positionals.join(" ")}`);
  const seedPath = process.env.CHAIN_SEED || positionals[0] || "config/chain.json";
  const configPath = process.env.CONFIG || DEFAULT_CONFIG_PATH;
  const file = parseFileConfig(JSON.parse(readFileSync(configPath, "utf8")), configPath);
  const { server, banner } = await runChainServer(readChainSeed(seedPath), file.tokens, file.issuance);
  process.stdout.write(`${banner}\n`);
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}

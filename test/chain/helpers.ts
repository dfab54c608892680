/**
 * Shared set-up for the chain tests: a seeded LocalChain and builder-made, really signed fills.
 */

import { readFileSync } from "node:fs";
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import { type BuildFillParams, buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { seedFromConfig } from "../../src/chain/local/seed.ts";
import { TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";

export const config = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
const mintOf = (symbol: string) =>
  new PublicKey(config.tokens.find((t) => t.symbol === symbol)?.mint as string);
export const SOL = mintOf("SOL");
export const USDC = mintOf("USDC");
export const JUP = mintOf("JUP");

/**
 * A chain seeded from config/default.json. Blocks are an hour long so that heights (and blockhash
 * expiry) move only when a test calls `advanceBlocks`.
 */
export function seededChain(): { chain: LocalChain; maker: Keypair } {
  const chain = LocalChain.create({ slotMs: 3_600_000 });
  const maker = Keypair.generate();
  seedFromConfig(chain, config, maker.publicKey);
  return { chain, maker };
}

/** A fill as the operator builds it, signed by `signers` (maker and taker by default). */
export async function signedFill(
  chain: LocalChain,
  maker: Keypair,
  taker: Keypair,
  p: Partial<BuildFillParams> &
    Pick<BuildFillParams, "inputMint" | "outputMint" | "inputAmount" | "outputAmount">,
  signers: Keypair[] = [maker, taker],
): Promise<VersionedTransaction> {
  const { blockhash } = await chain.getLatestBlockhash();
  const tx = buildFillTransaction({
    maker: maker.publicKey,
    taker: taker.publicKey,
    inputTokenProgram: TOKEN_PROGRAM_ID,
    outputTokenProgram: TOKEN_PROGRAM_ID,
    expireAt: (await chain.getUnixTimestamp()) + 30n,
    feeBps: 10,
    exactOut: false,
    computeUnitLimit: 200_000,
    computeUnitPrice: 10_000n,
    recentBlockhash: blockhash,
    createTakerOutputAta: false,
    ...p,
  });
  tx.sign(signers);
  return tx;
}

/** What the maker pays for a fill: 5,000 per signature plus limit x price (micro-lamports, rounded up). */
export function fillFee(signatures: number, limit: number, priceMicroLamports: bigint): bigint {
  return 5_000n * BigInt(signatures) + (BigInt(limit) * priceMicroLamports + 999_999n) / 1_000_000n;
}

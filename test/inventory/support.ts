/**
 * A world for inventory tests: a seeded local chain (LiteSVM), a maker, the configured static prices
 * and a clock the test moves by hand (reservation expiry and balance age are measured on it).
 */
import { createTransferCheckedInstruction } from "@solana/spl-token";
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import type { InventoryOptions } from "../../inventory/ledger-inventory.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { createPriceSources } from "../../pricing/sources.ts";
import { UsdValuer } from "../../pricing/usd.ts";
import { LocalChain } from "../../src/chain/local.ts";
import { ata, creditToken, type MakerSeedOptions, seedFromConfig } from "../../src/chain/seed.ts";
import { testConfig } from "../support/config.ts";

export interface World {
  config: Config;
  chain: LocalChain;
  maker: Keypair;
  sources: Map<string, PriceSource>;
  usd: UsdValuer;
  clock: { t: number };
  /** Options for one inventory instance on this world. */
  options(): InventoryOptions;
}

export function makeWorld(
  vary: (f: FileConfig) => FileConfig = (f) => f,
  seed: MakerSeedOptions = {},
): World {
  const config = testConfig({}, vary);
  const chain = LocalChain.create();
  const maker = Keypair.generate();
  seedFromConfig(chain, config.file, maker.publicKey, seed);
  const sources = createPriceSources(config);
  const clock = { t: Date.now() };
  const now = () => clock.t;
  const usd = new UsdValuer(config, sources, now);
  return {
    config,
    chain,
    maker,
    sources,
    usd,
    clock,
    options: () => ({ config, chain, maker: maker.publicKey, usd, now }),
  };
}

/** Changes one configured token (by symbol). */
export function withToken(symbol: string, change: Record<string, unknown>) {
  return (f: FileConfig): FileConfig => ({
    ...f,
    tokens: f.tokens.map((t) => (t.symbol === symbol ? { ...t, ...change } : t)),
  });
}

/** A real SPL transfer out of the maker's ATA, as a landed fill would move it, sent to the local chain. */
export async function transferOut(w: World, mint: string, amount: bigint): Promise<void> {
  const mintKey = new PublicKey(mint);
  const token = w.config.tokensByMint.get(mint)!;
  const to = creditToken(w.chain, Keypair.generate().publicKey, mintKey, 0n);
  const ix = createTransferCheckedInstruction(
    ata(w.chain, w.maker.publicKey, mintKey),
    mintKey,
    to,
    w.maker.publicKey,
    amount,
    token.decimals,
    [],
    new PublicKey(token.tokenProgram),
  );
  const { blockhash } = await w.chain.getLatestBlockhash();
  const msg = new TransactionMessage({
    payerKey: w.maker.publicKey,
    recentBlockhash: blockhash,
    instructions: [ix],
  }).compileToV0Message();
  const tx = new VersionedTransaction(msg);
  tx.sign([w.maker]);
  const sent = await w.chain.send(tx);
  if (!sent.ok) throw new Error(`transfer failed: ${sent.error}`);
}

/** Deletes the maker's ATA for `mint`, as if the maker never opened it. */
export function removeAta(w: World, mint: string): PublicKey {
  const address = ata(w.chain, w.maker.publicKey, new PublicKey(mint));
  w.chain.svm.setAccount(address, {
    lamports: 0,
    data: new Uint8Array(),
    owner: new PublicKey("11111111111111111111111111111111"),
    executable: false,
  });
  return address;
}

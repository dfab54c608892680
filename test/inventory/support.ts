/**
 * A world for inventory tests: a seeded local chain (LiteSVM), a maker, the configured static prices
 * and a clock the test moves by hand (reservation expiry and balance age are measured on it).
 */
import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import { createTransferCheckedInstruction } from "@solana/spl-token";
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import type { Redis } from "ioredis";
import type { Config } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import type { InventoryOptions } from "../../inventory/reservations/inventory.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { createPriceSources } from "../../pricing/sources.ts";
import { UsdValuer } from "../../pricing/usd.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { ata, creditToken, type MakerSeedOptions, seedFromConfig } from "../../src/chain/local/seed.ts";
import { createLogger } from "../../src/observability/logger.ts";
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
  deps: { redis?: Redis } = {},
): World {
  const config = testConfig({}, vary);
  const chain = LocalChain.create();
  const maker = Keypair.generate();
  seedFromConfig(chain, config.file, maker.publicKey, seed);
  const sources = createPriceSources(config, deps);
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

/** Adds a token (and a FEE/USDC pair priced statically at 1) to a config variation. */
export function withExtraToken(mint: string, symbol: string, tokenProgram: string, decimals = 6) {
  return (f: FileConfig): FileConfig => {
    const statics = f.priceSources.static;
    if (statics?.kind !== "static") throw new Error("test config needs the static price source");
    return {
      ...f,
      tokens: [
        ...f.tokens,
        { ...f.tokens[1]!, mint, symbol, decimals, tokenProgram, stable: false } as never,
      ],
      pairs: [
        ...f.pairs,
        {
          base: symbol,
          quote: "USDC",
          minBase: "1",
          maxBase: "1000000000",
          levels: [{ upToBase: "1000000000", spreadBps: 10 }],
        } as never,
      ],
      priceSources: {
        ...f.priceSources,
        static: { ...statics, prices: { ...statics.prices, [`${symbol}/USDC`]: "1" } },
      },
    };
  };
}

/**
 * Replaces the mint at `mint` with a real Token-2022 mint carrying a TransferFeeConfig of `bps`,
 * created by transactions through the token program (paid by the maker).
 */
export async function makeTransferFeeMint(
  w: World,
  mintKp: Keypair,
  bps: number,
  decimals = 6,
): Promise<void> {
  const {
    ExtensionType,
    TOKEN_2022_PROGRAM_ID,
    createInitializeMintInstruction,
    createInitializeTransferFeeConfigInstruction,
    getMintLen,
  } = await import("@solana/spl-token");
  const { SystemProgram } = await import("@solana/web3.js");
  w.chain.svm.setAccount(mintKp.publicKey, {
    lamports: 0,
    data: new Uint8Array(),
    owner: new PublicKey("11111111111111111111111111111111"),
    executable: false,
  });
  const len = getMintLen([ExtensionType.TransferFeeConfig]);
  const rent = await w.chain.getMinimumBalanceForRentExemption(len);
  const authority = w.maker.publicKey;
  const ixs = [
    SystemProgram.createAccount({
      fromPubkey: w.maker.publicKey,
      newAccountPubkey: mintKp.publicKey,
      space: len,
      lamports: Number(rent),
      programId: TOKEN_2022_PROGRAM_ID,
    }),
    createInitializeTransferFeeConfigInstruction(
      mintKp.publicKey,
      authority,
      authority,
      bps,
      1_000_000n,
      TOKEN_2022_PROGRAM_ID,
    ),
    createInitializeMintInstruction(mintKp.publicKey, decimals, authority, null, TOKEN_2022_PROGRAM_ID),
  ];
  const { blockhash } = await w.chain.getLatestBlockhash();
  const tx = new VersionedTransaction(
    new TransactionMessage({
      payerKey: w.maker.publicKey,
      recentBlockhash: blockhash,
      instructions: ixs,
    }).compileToV0Message(),
  );
  tx.sign([w.maker, mintKp]);
  const sent = await w.chain.send(tx);
  if (!sent.ok) throw new Error(`creating the Token-2022 mint failed: ${sent.error}`);
}

/** The advertised lists' union hash, computed here independently: sha256 of the sorted mints, comma-joined. */
export const sortedUnionHash = (mints: string[]): string =>
  createHash("sha256")
    .update([...mints].sort().join(","))
    .digest("hex");

/** A logger at info level whose lines (parsed) are kept in `lines`. */
export function logCapture() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: createLogger("info", sink), lines };
}

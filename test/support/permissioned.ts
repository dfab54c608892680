/**
 * A permissioned token the maker issues, for tests: TBILL (Token-2022, 6 decimals) traded against
 * USDC, minted just in time for a buy and burned for a sell (config `issuance`), with an allowlist of
 * holders. The setup's `vary` adds it to the shipped configuration.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import type { FileConfig } from "../../config/schema.ts";
import { TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { ata } from "../../src/chain/local/seed.ts";
import { encodeTokenAccount, readMint } from "../../src/chain/local/spl-state.ts";
import { TOKEN_2022_PROGRAM_ID } from "../../src/program/layout.ts";
import { MINT } from "./config.ts";

export interface PermissionedSetup {
  mint: PublicKey;
  issuer: Keypair;
  /** Wallets on the allowlist. */
  holders: Keypair[];
  vary: (f: FileConfig) => FileConfig;
}

export const TBILL_LIMITS = {
  /** 2,000 TBILL per fill, 3,000 per UTC day. */
  maxPerFill: 2_000_000_000n,
  maxPerDay: 3_000_000_000n,
  tipLamports: 10_000n,
};

export function permissionedSetup(holderCount = 3, over: Record<string, unknown> = {}): PermissionedSetup {
  const mint = Keypair.generate().publicKey;
  const issuer = Keypair.generate();
  const holders = Array.from({ length: holderCount }, () => Keypair.generate());
  const vary = (f: FileConfig): FileConfig =>
    ({
      ...f,
      tokens: [
        ...f.tokens,
        {
          mint: mint.toBase58(),
          symbol: "TBILL",
          decimals: 6,
          tokenProgram: TOKEN_2022_PROGRAM,
          permissioned: true,
        },
      ],
      pairs: [
        ...f.pairs,
        {
          base: "TBILL",
          quote: "USDC",
          minBase: "1000000",
          maxBase: "5000000000",
          levels: [{ upToBase: "5000000000", spreadBps: 10 }],
        },
      ],
      priceSources: {
        ...f.priceSources,
        static: {
          ...(f.priceSources.static as { kind: "static"; prices: Record<string, string> }),
          prices: {
            ...(f.priceSources.static as { kind: "static"; prices: Record<string, string> }).prices,
            "TBILL/USDC": "1.05",
          },
        },
      },
      issuance: {
        TBILL: {
          mintAuthority: issuer.publicKey.toBase58(),
          maxPerFill: TBILL_LIMITS.maxPerFill.toString(),
          maxPerDay: TBILL_LIMITS.maxPerDay.toString(),
          priceSource: "static",
          holders: { allowlist: holders.map((h) => h.publicKey.toBase58()) },
          tipLamports: TBILL_LIMITS.tipLamports.toString(),
          ...over,
        },
      },
    }) as unknown as FileConfig;
  return { mint, issuer, holders, vary };
}

/** The mint's supply on the local chain. */
export function supplyOf(chain: LocalChain, mint: PublicKey): bigint {
  const m = readMint(mint, chain.svm.getAccount(mint), TOKEN_2022_PROGRAM_ID);
  if (!m) throw new Error(`mint ${mint.toBase58()} not found`);
  return m.supply;
}

/** Empties `owner`'s USDC account in place (a taker spending its balance elsewhere). */
export function drainUsdc(chain: LocalChain, owner: PublicKey): void {
  const usdc = new PublicKey(MINT.USDC);
  const address = ata(chain, owner, usdc);
  const acc = chain.svm.getAccount(address);
  if (!acc) return;
  chain.svm.setAccount(address, { ...acc, data: encodeTokenAccount({ mint: usdc, owner, amount: 0n }) });
}

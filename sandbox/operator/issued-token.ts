/**
 * The sandbox's permissioned token: TBILL, a tokenised T-bill fund share the maker issues. Added to
 * the configuration the stack runs on (sandbox/operator/stack.ts, `issuedToken`):
 *  - a Token-2022 mint (the local chain runs the real Token-2022 program) at an address kept in
 *    `<dir>/tbill-mint-keypair.json`, 6 decimals, listed on /permissioned-tokens;
 *  - its mint authority is the issuer key `<dir>/issuer-keypair.json` (not the maker key), which the
 *    chain seed funds and the webhook gets as ISSUER_KEYPAIR;
 *  - the pair TBILL/USDC priced from the configuration's static source at a NAV of 1.0425 USDC;
 *  - minted just in time when a taker buys, burned when it sells, at most 2,000 TBILL per fill and
 *    10,000 per UTC day, a 10,000-lamport tip, and the stack's takers as the allowed holders.
 * The maker holds none: every TBILL a taker receives is minted in the bundle with its fill.
 */
import { join } from "node:path";
import type { PublicKey } from "@solana/web3.js";
import { parseFileConfig } from "../../config/load.ts";
import { type FileConfig, TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import { loadOrCreateKeypair } from "../../src/signing/keypair.ts";

export interface IssuedToken {
  symbol: string;
  mint: string;
  /** The issuer key's public half and its file. */
  issuer: string;
  issuerPath: string;
  maxPerFill: bigint;
  maxPerDay: bigint;
}

export const ISSUED_SYMBOL = "TBILL";
const NAV = "1.0425";

export function withIssuedToken(
  base: FileConfig,
  opts: { dir: string; holders: PublicKey[]; burnOnSell: boolean },
): { config: FileConfig; issued: IssuedToken } {
  const issuerPath = join(opts.dir, "issuer-keypair.json");
  const issuer = loadOrCreateKeypair(issuerPath).keypair.publicKey.toBase58();
  const mint = loadOrCreateKeypair(join(opts.dir, "tbill-mint-keypair.json")).keypair.publicKey.toBase58();
  const maxPerFill = 2_000_000_000n;
  const maxPerDay = 10_000_000_000n;
  const staticSource = Object.entries(base.priceSources).find(([, s]) => s.kind === "static");
  if (!staticSource)
    throw new Error("the sandbox's issued token needs a static price source in the configuration");
  const [sourceName, source] = staticSource as [string, { kind: "static"; prices: Record<string, string> }];
  const raw = {
    ...base,
    tokens: [
      ...base.tokens,
      { mint, symbol: ISSUED_SYMBOL, decimals: 6, tokenProgram: TOKEN_2022_PROGRAM, permissioned: true },
    ],
    pairs: [
      ...base.pairs,
      {
        base: ISSUED_SYMBOL,
        quote: "USDC",
        minBase: "1000000",
        // The pair quotes past the per-fill cap, so that a quote above it is refused by the issuance
        // policy (404 ISSUANCE_CAP_EXCEEDED, as README says), not by the pair's size (SIZE_ABOVE_MAX).
        maxBase: (maxPerFill * 2n).toString(),
        levels: [{ upToBase: (maxPerFill * 2n).toString(), spreadBps: 10 }],
        priceSource: sourceName,
      },
    ],
    priceSources: {
      ...base.priceSources,
      [sourceName]: { ...source, prices: { ...source.prices, [`${ISSUED_SYMBOL}/USDC`]: NAV } },
    },
    issuance: {
      ...base.issuance,
      [ISSUED_SYMBOL]: {
        mintAuthority: issuer,
        mintOnBuy: true,
        burnOnSell: opts.burnOnSell,
        maxPerFill: maxPerFill.toString(),
        maxPerDay: maxPerDay.toString(),
        priceSource: sourceName,
        holders: { allowlist: opts.holders.map((h) => h.toBase58()) },
        tipLamports: "10000",
      },
    },
  };
  return {
    config: parseFileConfig(raw, "sandbox configuration with TBILL"),
    issued: { symbol: ISSUED_SYMBOL, mint, issuer, issuerPath, maxPerFill, maxPerDay },
  };
}

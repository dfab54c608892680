/**
 * The local chain server's seed file (config/chain.json): where it listens, whose wallet is the maker
 * and what it holds, and the takers to fund. Amounts are strings of smallest units; tokens are named
 * by symbol (from the service config) or by mint.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { base58Pubkey, u64String } from "../../config/schema.ts";

const walletSchema = z
  .object({
    /** Keypair file (Solana JSON array); created when missing. */
    keypair: z.string().min(1).optional(),
    /** Or just the public key (the chain never signs for a wallet). */
    pubkey: base58Pubkey.optional(),
  })
  .refine((w) => (w.keypair === undefined) !== (w.pubkey === undefined), {
    message: "give exactly one of keypair or pubkey",
  });

const amounts = z.record(z.string().min(1), u64String);

export const chainSeedSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65_535).default(8899),
  /** Block time, ms (mainnet: about 400). */
  slotMs: z.number().int().min(10).max(10_000).default(400),
  /** Blocks a blockhash stays valid (mainnet: 150). */
  blockhashValidity: z.number().int().min(1).max(10_000).default(150),
  maker: walletSchema.and(
    z.object({
      /** Lamports for fees and rent. */
      sol: u64String.default("100000000000"),
      /** Inventory per token (symbol or mint); tokens not named get seed.ts's default. */
      inventory: amounts.default({}),
    }),
  ),
  /**
   * The issuer key: mint authority of the configuration's issued (permissioned) tokens, funded with
   * `sol` for its companion transactions' fees and tips (src/issuance/). Unset: none.
   */
  issuer: walletSchema.and(z.object({ sol: u64String.default("10000000000") })).optional(),
  takers: z
    .array(
      walletSchema.and(
        z.object({
          sol: u64String.default("0"),
          /** Token balances (symbol or mint); each gets an ATA. "0" creates an empty ATA. */
          tokens: amounts.default({}),
        }),
      ),
    )
    .default([]),
  /**
   * Smart accounts (Squads) to stand up: the settings account (owned by the smart-account program,
   * every member with every permission, threshold = all members) and the vault at account index 0,
   * funded with `sol` and `tokens` (src/chain/local/smart-account-emulation.ts). Fund the members
   * (who pay the fees) as takers.
   */
  smartAccounts: z
    .array(
      z.object({
        settings: base58Pubkey,
        members: z.array(base58Pubkey).min(1),
        sol: u64String.default("0"),
        tokens: amounts.default({}),
      }),
    )
    .default([]),
});
export type ChainSeed = z.infer<typeof chainSeedSchema>;

/** Reads and validates a seed file; throws naming the file and each bad key. */
export function readChainSeed(path: string): ChainSeed {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
  const parsed = chainSeedSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `${path}: ${i.path.join(".")}: ${i.message}`).join("\n"));
  }
  return parsed.data;
}

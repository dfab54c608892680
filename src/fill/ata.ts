/**
 * Associated token addresses, memoised. Deriving one is a PDA search (a few SHA-256 and an off-curve
 * check) and validating one fill needs five; the maker's are the same every time and a
 * taker's repeat across its re-quotes. The cache is bounded: when full it starts again empty.
 */
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import type { PublicKey } from "@solana/web3.js";

const MAX_ENTRIES = 50_000;
const cache = new Map<string, PublicKey>();

/** The ATA of `owner` for `mint` under `tokenProgram` (off-curve owners allowed, as the operator does). */
export function associatedTokenAddress(
  mint: PublicKey,
  owner: PublicKey,
  tokenProgram: PublicKey,
): PublicKey {
  const key = `${mint.toBase58()}:${owner.toBase58()}:${tokenProgram.toBase58()}`;
  let ata = cache.get(key);
  if (!ata) {
    if (cache.size >= MAX_ENTRIES) cache.clear();
    ata = getAssociatedTokenAddressSync(mint, owner, true, tokenProgram);
    cache.set(key, ata);
  }
  return ata;
}

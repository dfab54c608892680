/**
 * One chain read of everything the inventory needs: the maker's native SOL, its associated token
 * account (ATA) for every configured mint with the balance, and each mint itself (exists, token
 * program, decimals, Token-2022 transfer fee). One `getAccounts` call, so a read is one round trip.
 */
import { getAssociatedTokenAddressSync, getTransferFeeConfig, unpackMint } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";
import type { TokenConfig } from "../config/schema.ts";

/**
 * The one chain read the inventory needs, declared here so the inventory depends on no chain adapter:
 * the service's `Chain` port (src/chain/interface.ts) satisfies it.
 */
export interface AccountReader {
  /** Accounts in the order asked; null where an account does not exist. */
  getAccounts(keys: PublicKey[]): Promise<(AccountSnapshot | null)[]>;
}

/** The fields of an account the inventory reads. */
export interface AccountSnapshot {
  owner: PublicKey;
  lamports: bigint;
  data: Uint8Array;
}

export interface MintHolding {
  mint: string;
  symbol: string;
  ata: PublicKey;
  ataExists: boolean;
  amount: bigint;
  /** Set when the token cannot be traded (see Holding.problem in interface.ts). */
  problem?: string;
}

export interface ChainHoldings {
  /** When the read started (ms epoch): anything confirmed before this is in it. */
  readAtMs: number;
  lamports: bigint;
  tokens: Map<string, MintHolding>;
}

export type ReadHoldingsResult = { ok: true; holdings: ChainHoldings } | { ok: false; error: string };

/** The maker's ATA for a configured token, under the token's own program. */
export function ataFor(maker: PublicKey, token: TokenConfig): PublicKey {
  return getAssociatedTokenAddressSync(
    new PublicKey(token.mint),
    maker,
    true,
    new PublicKey(token.tokenProgram),
  );
}

// SPL token account layout (shared by Token-2022's base): mint 0..32, owner 32..64, amount 64..72,
// state at 108 (0 uninitialised, 1 initialised, 2 frozen).
const ACCOUNT_MIN_LEN = 165;

export async function readHoldings(
  chain: AccountReader,
  maker: PublicKey,
  tokens: readonly TokenConfig[],
  now: () => number = Date.now,
): Promise<ReadHoldingsResult> {
  const readAtMs = now();
  const atas = tokens.map((t) => ataFor(maker, t));
  const mints = tokens.map((t) => new PublicKey(t.mint));
  let accounts: (AccountSnapshot | null)[];
  try {
    accounts = await chain.getAccounts([maker, ...atas, ...mints]);
  } catch (e) {
    return { ok: false, error: `cannot read maker accounts: ${(e as Error).message}` };
  }
  if (accounts.length !== 1 + 2 * tokens.length) {
    return {
      ok: false,
      error: `chain returned ${accounts.length} accounts for ${1 + 2 * tokens.length} keys`,
    };
  }
  const result = new Map<string, MintHolding>();
  tokens.forEach((t, i) => {
    const ata = accounts[1 + i] ?? null;
    const mintAcc = accounts[1 + tokens.length + i] ?? null;
    const problem = mintProblem(t, mints[i]!, mintAcc) ?? ataProblem(t, maker, ata);
    const ataExists = ata !== null && ata.data.length >= ACCOUNT_MIN_LEN && ata.data[108] !== 0;
    result.set(t.mint, {
      mint: t.mint,
      symbol: t.symbol,
      ata: atas[i]!,
      ataExists,
      amount: ataExists ? Buffer.from(ata.data).readBigUInt64LE(64) : 0n,
      ...(problem ? { problem } : {}),
    });
  });
  return { ok: true, holdings: { readAtMs, lamports: accounts[0]?.lamports ?? 0n, tokens: result } };
}

function mintProblem(t: TokenConfig, mint: PublicKey, acc: AccountSnapshot | null): string | undefined {
  if (!acc) return "mint account not found";
  if (acc.owner.toBase58() !== t.tokenProgram) {
    return `mint is owned by ${acc.owner.toBase58()}, not the configured ${t.tokenProgram}`;
  }
  let decoded: ReturnType<typeof unpackMint>;
  try {
    decoded = unpackMint(
      mint,
      { data: Buffer.from(acc.data), owner: acc.owner, lamports: Number(acc.lamports), executable: false },
      acc.owner,
    );
  } catch (e) {
    return `mint account does not decode: ${(e as Error).message}`;
  }
  if (decoded.decimals !== t.decimals)
    return `mint has ${decoded.decimals} decimals, config says ${t.decimals}`;
  const fee = getTransferFeeConfig(decoded);
  if (fee) {
    const bps = Math.max(
      fee.newerTransferFee.transferFeeBasisPoints,
      fee.olderTransferFee.transferFeeBasisPoints,
    );
    // The order engine refuses Token-2022 mints with a transfer fee: such a fill can never land.
    if (bps > 0) return `Token-2022 transfer fee of ${bps} bps (refused by the order engine)`;
  }
  return undefined;
}

function ataProblem(t: TokenConfig, maker: PublicKey, acc: AccountSnapshot | null): string | undefined {
  if (!acc || acc.data.length < ACCOUNT_MIN_LEN) return undefined;
  const data = Buffer.from(acc.data);
  if (acc.owner.toBase58() !== t.tokenProgram) return "ATA is not owned by the token program";
  if (new PublicKey(data.subarray(0, 32)).toBase58() !== t.mint) return "ATA holds a different mint";
  if (!new PublicKey(data.subarray(32, 64)).equals(maker)) return "ATA belongs to another owner";
  if (data[108] === 2) return "ATA is frozen";
  return undefined;
}

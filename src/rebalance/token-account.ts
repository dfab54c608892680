/**
 * An SPL token account's fields as the rebalancer's checks read them (Token-2022's base layout is the
 * same); anything else, a mint included, is not one.
 */
import { PublicKey } from "@solana/web3.js";
import type { AccountSnapshot } from "../chain/interface.ts";
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../program/layout.ts";

export interface TokenAccountView {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  closeAuthority: string | null;
  /** The account's lamports (a wSOL account's amount plus its rent). */
  lamports: bigint;
}

const TOKEN_ACCOUNT_SIZE = 165;

/** The token account in `acc`, or undefined when it is none. */
export function readTokenAccount(acc: AccountSnapshot | null): TokenAccountView | undefined {
  if (!acc) return undefined;
  if (!acc.owner.equals(TOKEN_PROGRAM_ID) && !acc.owner.equals(TOKEN_2022_PROGRAM_ID)) return undefined;
  const d = Buffer.from(acc.data);
  // A Token-2022 mint with extensions can be longer than 165 bytes: its account type byte says so.
  if (d.length < TOKEN_ACCOUNT_SIZE || (d.length > TOKEN_ACCOUNT_SIZE && d[TOKEN_ACCOUNT_SIZE] !== 2))
    return undefined;
  const key = (option: number, at: number) =>
    d.readUInt32LE(option) === 1 ? new PublicKey(d.subarray(at, at + 32)).toBase58() : null;
  return {
    mint: new PublicKey(d.subarray(0, 32)).toBase58(),
    owner: new PublicKey(d.subarray(32, 64)).toBase58(),
    amount: d.readBigUInt64LE(64),
    delegate: key(72, 76),
    closeAuthority: key(129, 133),
    lamports: acc.lamports,
  };
}

/**
 * Raw SPL account bytes for seeding the local chain: a mint at its mainnet address and token accounts
 * with a balance, written with `setAccount` exactly as the token program would have stored them.
 * Reading goes through @solana/spl-token's own unpackers so that both directions use one layout.
 */
import {
  ACCOUNT_SIZE,
  AccountLayout,
  AccountState,
  MINT_SIZE,
  type Mint,
  MintLayout,
  type Account as TokenAccount,
  unpackAccount,
  unpackMint,
} from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";

/** Bytes of an initialized base mint (valid for Token and for Token-2022 without extensions). */
export function encodeMint(args: {
  mintAuthority: PublicKey | null;
  supply: bigint;
  decimals: number;
  freezeAuthority?: PublicKey | null;
}): Uint8Array {
  const data = Buffer.alloc(MINT_SIZE);
  MintLayout.encode(
    {
      mintAuthorityOption: args.mintAuthority ? 1 : 0,
      mintAuthority: args.mintAuthority ?? PublicKey.default,
      supply: args.supply,
      decimals: args.decimals,
      isInitialized: true,
      freezeAuthorityOption: args.freezeAuthority ? 1 : 0,
      freezeAuthority: args.freezeAuthority ?? PublicKey.default,
    },
    data,
  );
  return data;
}

/**
 * Bytes of an initialized token account. `nativeRentReserve` marks a wrapped-SOL account: the token
 * program then keeps `amount == lamports - reserve`, so the caller must give it those lamports.
 */
export function encodeTokenAccount(args: {
  mint: PublicKey;
  owner: PublicKey;
  amount: bigint;
  nativeRentReserve?: bigint;
}): Uint8Array {
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      mint: args.mint,
      owner: args.owner,
      amount: args.amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: AccountState.Initialized,
      isNativeOption: args.nativeRentReserve === undefined ? 0 : 1,
      isNative: args.nativeRentReserve ?? 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  );
  return data;
}

interface RawAccountLike {
  owner: PublicKey;
  lamports: number | bigint;
  data: Uint8Array;
  executable: boolean;
}

function asInfo(acc: RawAccountLike) {
  return {
    owner: acc.owner,
    lamports: Number(acc.lamports),
    data: Buffer.from(acc.data),
    executable: acc.executable,
  };
}

/** Parses a mint owned by `programId`; undefined when the account is not one. */
export function readMint(
  address: PublicKey,
  acc: RawAccountLike | null,
  programId: PublicKey,
): Mint | undefined {
  if (!acc?.owner.equals(programId)) return undefined;
  try {
    return unpackMint(address, asInfo(acc), programId);
  } catch {
    return undefined;
  }
}

/** Parses a token account owned by `programId`; undefined when the account is not one. */
export function readTokenAccount(
  address: PublicKey,
  acc: RawAccountLike | null,
  programId: PublicKey,
): TokenAccount | undefined {
  if (!acc?.owner.equals(programId)) return undefined;
  try {
    return unpackAccount(address, asInfo(acc), programId);
  } catch {
    return undefined;
  }
}

/**
 * Seeding the local chain: the configured mints at their mainnet addresses, the maker's SOL, ATAs
 * (wrapped SOL included: the operator's simulation needs one per advertised token) and inventory,
 * and takers for tests. State is written directly (`setAccount`) in the exact bytes the token program
 * would store, the way a validator's genesis or an account clone does; transactions sent afterwards
 * run against it through the real programs.
 *
 * The local chain holds one mint authority for every seeded mint, so supply stays consistent with the
 * balances it creates.
 */
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import type { TokenConfig } from "../../../config/schema.ts";
import { NATIVE_MINT, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../program/layout.ts";
import { SMART_ACCOUNT_PROGRAM_ID, smartAccountVault } from "../../program/smart-account.ts";
import type { LocalChain } from "./index.ts";
import { encodeSettings, PERMISSIONS_ALL } from "./smart-account-emulation.ts";
import { encodeMint, encodeTokenAccount, readMint, readTokenAccount } from "./spl-state.ts";

const TOKEN_ACCOUNT_SIZE = 165n;

const authorities = new WeakMap<LocalChain, Keypair>();

/** The mint authority of every mint seeded on this chain (generated once per chain). */
export function mintAuthority(chain: LocalChain): Keypair {
  let kp = authorities.get(chain);
  if (!kp) {
    kp = Keypair.generate();
    authorities.set(chain, kp);
  }
  return kp;
}

/** Token program that owns `mint` on this chain (Token when the mint does not exist). */
export function tokenProgramOf(chain: LocalChain, mint: PublicKey): PublicKey {
  return chain.svm.getAccount(mint)?.owner ?? TOKEN_PROGRAM_ID;
}

/** The associated token account of `owner` for `mint` (off-curve owners allowed). */
export function ata(chain: LocalChain, owner: PublicKey, mint: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(mint, owner, true, tokenProgramOf(chain, mint));
}

/**
 * Creates (or overwrites) a mint at `address`, owned by `tokenProgram`, with the chain's mint
 * authority. The native mint is left alone: the SVM already has it.
 */
export function createMint(
  chain: LocalChain,
  args: { address: PublicKey; decimals: number; tokenProgram?: PublicKey; mintAuthority?: PublicKey },
): void {
  if (args.address.equals(NATIVE_MINT)) return;
  const data = encodeMint({
    mintAuthority: args.mintAuthority ?? mintAuthority(chain).publicKey,
    supply: 0n,
    decimals: args.decimals,
  });
  chain.svm.setAccount(args.address, {
    owner: args.tokenProgram ?? TOKEN_PROGRAM_ID,
    lamports: Number(chain.svm.minimumBalanceForRentExemption(BigInt(data.length))),
    data,
    executable: false,
  });
}

/** Adds lamports to a wallet (creating it as a System account when new). */
export function creditSol(chain: LocalChain, wallet: PublicKey, lamports: bigint): void {
  const acc = chain.svm.getAccount(wallet);
  chain.svm.setAccount(wallet, {
    owner: acc?.owner ?? SYSTEM_PROGRAM_ID,
    lamports: Number(BigInt(acc?.lamports ?? 0) + lamports),
    data: acc?.data ?? new Uint8Array(),
    executable: acc?.executable ?? false,
  });
}

/**
 * Adds `amount` of `mint` to `owner`'s ATA, creating the ATA when missing (with `amount` 0 it only
 * makes sure the ATA exists). Wrapped SOL is backed by lamports as the token program requires; other
 * mints' supply grows by the amount. Returns the ATA.
 */
export function creditToken(chain: LocalChain, owner: PublicKey, mint: PublicKey, amount: bigint): PublicKey {
  const program = tokenProgramOf(chain, mint);
  const mintAcc = chain.svm.getAccount(mint);
  const parsedMint = readMint(mint, mintAcc, program);
  if (!mintAcc || !parsedMint) throw new Error(`mint ${mint.toBase58()} does not exist on the local chain`);
  const address = getAssociatedTokenAddressSync(mint, owner, true, program);
  const rent = chain.svm.minimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE);
  const existing = readTokenAccount(address, chain.svm.getAccount(address), program);
  const balance = (existing?.amount ?? 0n) + amount;
  const native = mint.equals(NATIVE_MINT);
  chain.svm.setAccount(address, {
    owner: program,
    lamports: Number(native ? rent + balance : rent),
    data: encodeTokenAccount({
      mint,
      owner,
      amount: balance,
      ...(native ? { nativeRentReserve: rent } : {}),
    }),
    executable: false,
  });
  if (!native && amount > 0n) {
    const data = Buffer.from(mintAcc.data);
    // Supply is the u64 at offset 36 of the base mint layout (after the COption<Pubkey> authority).
    data.writeBigUInt64LE(parsedMint.supply + amount, 36);
    chain.svm.setAccount(mint, { ...mintAcc, data });
  }
  return address;
}

/** Balance of a token account; 0n when it does not exist. */
export function tokenAccountBalance(chain: LocalChain, address: PublicKey): bigint {
  const acc = chain.svm.getAccount(address);
  if (!acc) return 0n;
  return readTokenAccount(address, acc, acc.owner)?.amount ?? 0n;
}

/** `owner`'s balance of `mint` in its ATA; 0n when there is no ATA. */
export function tokenBalance(chain: LocalChain, owner: PublicKey, mint: PublicKey): bigint {
  return tokenAccountBalance(chain, ata(chain, owner, mint));
}

/** Lamports of an account; 0n when it does not exist. */
export function lamports(chain: LocalChain, key: PublicKey): bigint {
  return BigInt(chain.svm.getBalance(key) ?? 0n);
}

export interface MakerSeedOptions {
  /** Lamports for fees and ATA rent (default 100 SOL). */
  sol?: bigint;
  /** Inventory per token, smallest units, keyed by symbol or mint; default `defaultInventory`. */
  inventory?: Record<string, bigint>;
  /**
   * The issuer key of the tokens in the configuration's `issuance`: their mint authority (else the
   * policy's `mintAuthority`), given SOL for companion fees and tips. An issued token's maker
   * inventory defaults to none: it is minted just in time.
   */
  issuer?: PublicKey;
  /** Lamports for the issuer (default 10 SOL). */
  issuerSol?: bigint;
}

/** Default inventory: 10,000 SOL (as wSOL) and 10,000,000 of every other token, in human units. */
function defaultInventory(token: TokenConfig): bigint {
  const units = token.mint === NATIVE_MINT.toBase58() ? 10_000n : 10_000_000n;
  return units * 10n ** BigInt(token.decimals);
}

export interface SeededToken {
  symbol: string;
  mint: PublicKey;
  tokenProgram: PublicKey;
  makerAta: PublicKey;
  inventory: bigint;
}

/**
 * Creates every configured mint at its configured (mainnet) address with its configured decimals and
 * token program, and gives the maker SOL plus an ATA with inventory for each token, wrapped SOL
 * included.
 */
export function seedFromConfig(
  chain: LocalChain,
  config: {
    tokens: readonly TokenConfig[];
    issuance?: Readonly<Record<string, { mintAuthority?: string | undefined }>>;
  },
  maker: PublicKey,
  opts: MakerSeedOptions = {},
): SeededToken[] {
  creditSol(chain, maker, opts.sol ?? 100_000_000_000n);
  if (opts.issuer) creditSol(chain, opts.issuer, opts.issuerSol ?? 10_000_000_000n);
  return config.tokens.map((t) => {
    const mint = new PublicKey(t.mint);
    const tokenProgram = new PublicKey(t.tokenProgram);
    const policy = config.issuance?.[t.symbol];
    const authority = policy
      ? (opts.issuer ?? (policy.mintAuthority ? new PublicKey(policy.mintAuthority) : undefined))
      : undefined;
    createMint(chain, {
      address: mint,
      decimals: t.decimals,
      tokenProgram,
      ...(authority ? { mintAuthority: authority } : {}),
    });
    const inventory =
      opts.inventory?.[t.symbol] ?? opts.inventory?.[t.mint] ?? (policy ? 0n : defaultInventory(t));
    const makerAta = creditToken(chain, maker, mint, inventory);
    return { symbol: t.symbol, mint, tokenProgram, makerAta, inventory };
  });
}

export interface TakerFunding {
  /** Lamports to add (default 0). */
  sol?: bigint;
  /** Token amounts (smallest units) keyed by mint (base58); each gets an ATA. */
  tokens?: Record<string, bigint>;
}

/** Gives a taker SOL and tokens (ATAs created as needed). */
export function fundTaker(chain: LocalChain, taker: PublicKey, funding: TakerFunding): void {
  if (funding.sol) creditSol(chain, taker, funding.sol);
  for (const [mint, amount] of Object.entries(funding.tokens ?? {})) {
    creditToken(chain, taker, new PublicKey(mint), amount);
  }
}

/**
 * A smart account (Squads V5) on the local chain: its settings account at `settings`, owned by the
 * smart-account program, listing `members` (every permission) and `threshold`, in the layout the
 * stand-in reads (smart-account-emulation.ts). Returns the vault at account index 0, which holds the
 * smart account's funds (fund it with `fundTaker`).
 */
export function seedSmartAccount(
  chain: LocalChain,
  args: { settings: PublicKey; members: readonly PublicKey[]; threshold?: number },
): PublicKey {
  const data = encodeSettings(
    {
      threshold: args.threshold ?? args.members.length,
      members: args.members.map((key) => ({ key, permissions: PERMISSIONS_ALL })),
    },
    args.settings,
  );
  chain.svm.setAccount(args.settings, {
    owner: SMART_ACCOUNT_PROGRAM_ID,
    lamports: Number(chain.svm.minimumBalanceForRentExemption(BigInt(data.length))),
    data,
    executable: false,
  });
  return smartAccountVault(args.settings, 0);
}

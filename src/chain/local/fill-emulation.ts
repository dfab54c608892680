/**
 * The local chain's stand-in for the order-engine program, whose binary is not available here.
 *
 * A `fill` is checked the way the program checks it (docs/contract.md, "The fill transaction") and then
 * replaced by the equivalent real instructions, which the SVM executes with the rest of the
 * transaction, atomically and under the same signers:
 *
 * - token leg, both token accounts given: SPL `TransferChecked` from the payer's account, signed by
 *   the payer (taker for the input leg, maker for the output leg);
 * - native SOL in (payer's token account absent, i.e. passed as the order-engine id): a System
 *   transfer of lamports into the receiver's wrapped-SOL account followed by `SyncNative`;
 * - native SOL out (receiver's token account absent): the wrapped SOL moves through a temporary
 *   token account that is closed at once, as the program does with its temporary wSOL PDA. The PDA
 *   cannot sign outside the program, so the emulation derives its own temporary account with
 *   `CreateAccountWithSeed` (base: the maker, rent paid by the maker), closes it to the maker and
 *   forwards the unwrapped lamports with a System transfer. Net effect: the receiver gains exactly the
 *   amount in lamports, the payer's wSOL falls by exactly the amount, the maker's rent comes back.
 *
 * A check that fails is the program failing: the transaction still lands, pays its fee and changes
 * nothing else. The emulation expresses that with an instruction that always fails
 * (`failingInstruction`), so the SVM rolls back and charges the fee exactly as it would on mainnet.
 */
import { createHash } from "node:crypto";
import {
  createCloseAccountInstruction,
  createInitializeAccount3Instruction,
  createSyncNativeInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  getEpochFee,
  getTransferFeeConfig,
  type Mint,
} from "@solana/spl-token";
import { PublicKey, SystemProgram, type TransactionInstruction } from "@solana/web3.js";
import {
  decodeFillData,
  FILL_MAX_ACCOUNTS,
  FILL_MIN_ACCOUNTS,
  FillAccount,
  NATIVE_MINT,
  ORDER_ENGINE_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  temporaryWsolAccount,
} from "../../program/layout.ts";
import { readMint, readTokenAccount } from "./spl-state.ts";

/** What the emulation needs to read from the chain (pre-transaction state). */
export type AccountReader = (
  key: PublicKey,
) => { owner: PublicKey; lamports: number | bigint; data: Uint8Array; executable: boolean } | null;

export interface EmulationContext {
  read: AccountReader;
  /** Chain clock: the program compares `expire_at` with it, and transfer fees are per epoch. */
  unixTimestamp: bigint;
  epoch: bigint;
  /** Rent-exempt minimum of a 165-byte token account (the temporary wSOL account). */
  tokenAccountRent: bigint;
}

export type Emulation = { ok: true; instructions: TransactionInstruction[] } | { ok: false; error: string };

/** True when `ix` is an order-engine instruction (whatever its data). */
export function isOrderEngineInstruction(ix: TransactionInstruction): boolean {
  return ix.programId.equals(ORDER_ENGINE_PROGRAM_ID);
}

/**
 * An instruction that always fails (a System transfer of more lamports than can exist), used in
 * place of a fill whose checks fail: the SVM then rolls the whole transaction back and charges the
 * fee, as the real program's error would.
 */
export function failingInstruction(payer: PublicKey, fill: TransactionInstruction): TransactionInstruction {
  const ix = SystemProgram.transfer({ fromPubkey: payer, toPubkey: payer, lamports: (1n << 64n) - 1n });
  // Keep the fill's accounts listed (the System program ignores extra accounts) so that the
  // transaction keeps the same signers, hence the same fee.
  ix.keys.push(...fill.keys.filter((k) => !k.pubkey.equals(ORDER_ENGINE_PROGRAM_ID)));
  return ix;
}

const SEED_IN = "rfq-local-unwrap-in";
const SEED_OUT = "rfq-local-unwrap-out";

interface Leg {
  name: "input" | "output";
  /** Wallet that pays this leg and signs for it. */
  from: PublicKey;
  to: PublicKey;
  /** undefined: native SOL on that side. */
  fromAccount: PublicKey | undefined;
  toAccount: PublicKey | undefined;
  mint: PublicKey;
  tokenProgram: PublicKey;
  amount: bigint;
  seed: string;
}

function optionalAccount(key: PublicKey): PublicKey | undefined {
  return key.equals(ORDER_ENGINE_PROGRAM_ID) ? undefined : key;
}

/** Checks a fill and returns the instructions that do what it does. */
export function emulateFill(ix: TransactionInstruction, ctx: EmulationContext): Emulation {
  const args = decodeFillData(ix.data);
  if (!args) return { ok: false, error: "order engine: instruction data is not a fill" };
  if (ix.keys.length < FILL_MIN_ACCOUNTS || ix.keys.length > FILL_MAX_ACCOUNTS) {
    return { ok: false, error: `order engine: fill has ${ix.keys.length} accounts` };
  }
  const key = (i: number): PublicKey => {
    const meta = ix.keys[i];
    if (!meta) throw new Error(`fill account ${i} missing`); // unreachable after the length check
    return meta.pubkey;
  };
  const taker = ix.keys[FillAccount.taker];
  const maker = ix.keys[FillAccount.maker];
  if (!taker?.isSigner) return { ok: false, error: "order engine: taker did not sign" };
  if (!maker?.isSigner) return { ok: false, error: "order engine: maker did not sign" };
  if (!key(FillAccount.systemProgram).equals(SYSTEM_PROGRAM_ID)) {
    return { ok: false, error: "order engine: wrong system program account" };
  }
  if (args.expireAt < ctx.unixTimestamp) {
    return {
      ok: false,
      error: `order engine: fill expired (expire_at ${args.expireAt} < now ${ctx.unixTimestamp})`,
    };
  }

  const legs: Leg[] = [
    {
      name: "input",
      from: taker.pubkey,
      to: maker.pubkey,
      fromAccount: optionalAccount(key(FillAccount.takerInputTokenAccount)),
      toAccount: optionalAccount(key(FillAccount.makerInputTokenAccount)),
      mint: key(FillAccount.inputMint),
      tokenProgram: key(FillAccount.inputTokenProgram),
      amount: args.inputAmount,
      seed: SEED_IN,
    },
    {
      name: "output",
      from: maker.pubkey,
      to: taker.pubkey,
      fromAccount: optionalAccount(key(FillAccount.makerOutputTokenAccount)),
      toAccount: optionalAccount(key(FillAccount.takerOutputTokenAccount)),
      mint: key(FillAccount.outputMint),
      tokenProgram: key(FillAccount.outputTokenProgram),
      amount: args.outputAmount,
      seed: SEED_OUT,
    },
  ];

  const out: TransactionInstruction[] = [];
  for (const leg of legs) {
    const checked = checkLeg(leg, ctx);
    if (typeof checked === "string") return { ok: false, error: `order engine: ${leg.name}: ${checked}` };
    if (leg.toAccount === undefined && leg.fromAccount !== undefined) {
      // Unwrapping needs the program's temporary wSOL PDA in the account list.
      const temp = ix.keys[FillAccount.temporaryWsolTokenAccount]?.pubkey;
      if (!temp?.equals(temporaryWsolAccount(maker.pubkey))) {
        return {
          ok: false,
          error: `order engine: ${leg.name}: native SOL out needs the temporary wSOL account`,
        };
      }
    }
    out.push(...legInstructions(leg, checked, maker.pubkey, ctx.tokenAccountRent));
  }
  return { ok: true, instructions: out };
}

/** The program's checks for one leg; returns the mint, or the reason it fails. */
function checkLeg(leg: Leg, ctx: EmulationContext): Mint | string {
  if (!leg.tokenProgram.equals(TOKEN_PROGRAM_ID) && !leg.tokenProgram.equals(TOKEN_2022_PROGRAM_ID)) {
    return "token program is neither Token nor Token-2022";
  }
  const mintAcc = ctx.read(leg.mint);
  if (!mintAcc) return `mint ${leg.mint.toBase58()} does not exist`;
  if (!mintAcc.owner.equals(leg.tokenProgram)) return "mint is not owned by the given token program";
  const mint = readMint(leg.mint, mintAcc, leg.tokenProgram);
  if (!mint) return `${leg.mint.toBase58()} is not a mint`;
  if (leg.tokenProgram.equals(TOKEN_2022_PROGRAM_ID)) {
    const feeConfig = getTransferFeeConfig(mint);
    if (feeConfig && getEpochFee(feeConfig, ctx.epoch).transferFeeBasisPoints > 0) {
      return "Token-2022 mint with a transfer fee is not supported";
    }
  }
  if ((leg.fromAccount === undefined || leg.toAccount === undefined) && !leg.mint.equals(NATIVE_MINT)) {
    return "a native SOL side needs the wrapped SOL mint";
  }
  for (const [side, account, wallet] of [
    ["source", leg.fromAccount, leg.from],
    ["destination", leg.toAccount, leg.to],
  ] as const) {
    if (account === undefined) continue;
    const acc = ctx.read(account);
    if (!acc) {
      // Created earlier in this transaction (ATA CreateIdempotent): then it is the wallet's ATA.
      const ata = getAssociatedTokenAddressSync(leg.mint, wallet, true, leg.tokenProgram);
      if (!account.equals(ata)) return `${side} token account does not exist and is not the owner's ATA`;
      continue;
    }
    const token = readTokenAccount(account, acc, leg.tokenProgram);
    if (!token) return `${side} is not a token account of the given token program`;
    if (!token.mint.equals(leg.mint)) return `${side} token account holds another mint`;
    if (!token.owner.equals(wallet)) return `${side} token account does not belong to ${wallet.toBase58()}`;
  }
  return mint;
}

function legInstructions(leg: Leg, mint: Mint, maker: PublicKey, rent: bigint): TransactionInstruction[] {
  const { from, to, fromAccount, toAccount, amount } = leg;
  if (fromAccount && toAccount) {
    return [
      createTransferCheckedInstruction(
        fromAccount,
        leg.mint,
        toAccount,
        from,
        amount,
        mint.decimals,
        [],
        leg.tokenProgram,
      ),
    ];
  }
  if (!fromAccount && toAccount) {
    return [
      SystemProgram.transfer({ fromPubkey: from, toPubkey: toAccount, lamports: amount }),
      createSyncNativeInstruction(toAccount, leg.tokenProgram),
    ];
  }
  if (!fromAccount && !toAccount) {
    return [SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: amount })];
  }
  // fromAccount given, toAccount absent: unwrap through a temporary account.
  const source = fromAccount as PublicKey;
  const temp = tempAccount(maker, leg.seed, leg.tokenProgram);
  const ixs = [
    SystemProgram.createAccountWithSeed({
      fromPubkey: maker,
      newAccountPubkey: temp,
      basePubkey: maker,
      seed: leg.seed,
      lamports: Number(rent),
      space: 165,
      programId: leg.tokenProgram,
    }),
    createInitializeAccount3Instruction(temp, leg.mint, maker, leg.tokenProgram),
    createTransferCheckedInstruction(
      source,
      leg.mint,
      temp,
      from,
      amount,
      mint.decimals,
      [],
      leg.tokenProgram,
    ),
    createCloseAccountInstruction(temp, maker, maker, [], leg.tokenProgram),
  ];
  if (!to.equals(maker))
    ixs.push(SystemProgram.transfer({ fromPubkey: maker, toPubkey: to, lamports: amount }));
  return ixs;
}

/** The emulation's temporary wSOL account for one leg (derived from the maker, so no extra signer). */
function tempAccount(maker: PublicKey, seed: string, tokenProgram: PublicKey): PublicKey {
  return createWithSeedSync(maker, seed, tokenProgram);
}

/** `Pubkey::create_with_seed`: sha256(base || seed || owner). web3.js only offers an async form. */
function createWithSeedSync(base: PublicKey, seed: string, owner: PublicKey): PublicKey {
  const hash = createHash("sha256")
    .update(base.toBuffer())
    .update(Buffer.from(seed))
    .update(owner.toBuffer())
    .digest();
  return new PublicKey(hash);
}

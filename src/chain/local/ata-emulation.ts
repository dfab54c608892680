/**
 * The local chain's stand-in for the Associated Token Account program's `Create` and
 * `CreateIdempotent`.
 *
 * Why emulate a program the SVM has: litesvm 0.8's x86-64 JIT leaves the x87 FPU tag word full after
 * running the ATA program (it spills into MM0 on `callx` and never issues EMMS; LiteSVM/litesvm#396,
 * fixed upstream by #398, not in 0.8). Node's next x87 computation then yields NaN and the process
 * aborts with std::bad_alloc at a later GC. LiteSVM 1.x (1.5.0 in the registry) loads on Node 20 here,
 * but its API is @solana/kit 8's (Address, kit transactions) where this local chain, its seeding and
 * both emulations are written against @solana/web3.js 1.x; moving to it is a rewrite of src/chain/local/
 * that was not done with the whole suite green, so the emulation stays (issue 18, item 4). No other program on our paths triggers it (the token
 * programs and System are clean), so the ATA program is the one left out of the SVM.
 *
 * The equivalent, done inside the same SVM transaction: the ATA program's own checks (address is
 * the derived ATA; an existing account must already be that ATA), then what it does through CPI:
 * System `CreateAccount` (or top-up + `Allocate` + `Assign` when lamports already sit at the
 * address) paid by the instruction's payer, Token-2022 `InitializeImmutableOwner`, and
 * `InitializeAccount3`. The ATA address has to sign `CreateAccount`, which the program does with
 * its PDA seeds; here it is listed as an extra signer (the SVM runs with sigverify off) and the one
 * extra signature's fee is refunded after execution (index.ts), so the fee payer pays exactly what
 * mainnet charges.
 */
import {
  ACCOUNT_SIZE,
  createInitializeAccount3Instruction,
  createInitializeImmutableOwnerInstruction,
  ExtensionType,
  getAccountLen,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import { type PublicKey, SystemProgram, type TransactionInstruction } from "@solana/web3.js";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  ATA_CREATE_IDEMPOTENT,
  SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "../../program/layout.ts";
import type { AccountReader } from "./fill-emulation.ts";
import { readTokenAccount } from "./spl-state.ts";

export interface AtaContext {
  read: AccountReader;
  rent(dataLength: number): bigint;
  /** ATAs created by earlier instructions of the same transaction. */
  createdInTransaction: Set<string>;
}

export type AtaEmulation =
  | { ok: true; instructions: TransactionInstruction[]; extraSigners: PublicKey[] }
  | { ok: false; error: string };

export function isAtaInstruction(ix: TransactionInstruction): boolean {
  return ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID);
}

/** Emulates `Create` (data empty or [0]) and `CreateIdempotent` ([1]); other ATA instructions fail. */
export function emulateAta(ix: TransactionInstruction, ctx: AtaContext): AtaEmulation {
  const tag = ix.data.length === 0 ? 0 : ix.data[0];
  if (ix.data.length > 1 || (tag !== 0 && tag !== ATA_CREATE_IDEMPOTENT)) {
    return { ok: false, error: `associated token: instruction ${tag} is not supported on the local chain` };
  }
  const idempotent = tag === ATA_CREATE_IDEMPOTENT;
  const [payer, ata, wallet, mint, system, tokenProgram] = ix.keys.map((k) => k.pubkey);
  if (!payer || !ata || !wallet || !mint || !system || !tokenProgram) {
    return { ok: false, error: "associated token: not enough accounts" };
  }
  if (!ix.keys[0]?.isSigner) return { ok: false, error: "associated token: payer did not sign" };
  if (!system.equals(SYSTEM_PROGRAM_ID))
    return { ok: false, error: "associated token: wrong system program" };
  if (!tokenProgram.equals(TOKEN_PROGRAM_ID) && !tokenProgram.equals(TOKEN_2022_PROGRAM_ID)) {
    return { ok: false, error: "associated token: unsupported token program" };
  }
  if (!ata.equals(getAssociatedTokenAddressSync(mint, wallet, true, tokenProgram))) {
    return { ok: false, error: "associated token: address is not the derived ATA (InvalidSeeds)" };
  }

  const existing = ctx.read(ata);
  const created = ctx.createdInTransaction.has(ata.toBase58());
  if (created || existing?.owner.equals(tokenProgram)) {
    if (!idempotent) return { ok: false, error: "associated token: account already exists" };
    if (created) return { ok: true, instructions: [], extraSigners: [] };
    const token = readTokenAccount(ata, existing, tokenProgram);
    if (!token?.owner.equals(wallet) || !token.mint.equals(mint)) {
      return {
        ok: false,
        error: "associated token: existing account is not this wallet's ATA (InvalidOwner)",
      };
    }
    return { ok: true, instructions: [], extraSigners: [] };
  }
  if (existing && (!existing.owner.equals(SYSTEM_PROGRAM_ID) || existing.data.length > 0)) {
    return { ok: false, error: "associated token: address is in use by another program" };
  }

  const t22 = tokenProgram.equals(TOKEN_2022_PROGRAM_ID);
  const space = t22 ? getAccountLen([ExtensionType.ImmutableOwner]) : ACCOUNT_SIZE;
  const rent = ctx.rent(space);
  const ixs: TransactionInstruction[] = [];
  const held = existing ? BigInt(existing.lamports) : 0n;
  if (held === 0n) {
    ixs.push(
      SystemProgram.createAccount({
        fromPubkey: payer,
        newAccountPubkey: ata,
        lamports: Number(rent),
        space,
        programId: tokenProgram,
      }),
    );
  } else {
    // Someone already sent lamports to the address: top up, allocate and assign, as the program does.
    if (held < rent) {
      ixs.push(SystemProgram.transfer({ fromPubkey: payer, toPubkey: ata, lamports: rent - held }));
    }
    ixs.push(SystemProgram.allocate({ accountPubkey: ata, space }));
    ixs.push(SystemProgram.assign({ accountPubkey: ata, programId: tokenProgram }));
  }
  if (t22) ixs.push(createInitializeImmutableOwnerInstruction(ata, tokenProgram));
  ixs.push(createInitializeAccount3Instruction(ata, mint, wallet, tokenProgram));
  ctx.createdInTransaction.add(ata.toBase58());
  return { ok: true, instructions: ixs, extraSigners: [ata] };
}

/**
 * Wraps a fill for a smart-account (Squads) taker exactly as the operator's toolkit does (its
 * `squads-sdk/`, commit 331d404: wrap.rs `wrap_transaction_base64` and
 * `build_squads_wrapped_transaction`, accounts.rs, serialize.rs), written from the published layout,
 * for the tests, the sandbox's smart-account taker and the demo:
 *
 * - the quote's transaction is decompiled with each account's flags from its header; its
 *   compute-budget instructions are dropped, their limit multiplied by 2 (capped at 1,400,000) and
 *   their price kept (400,000 and 500,000 when absent);
 * - the remaining accounts: every program id and account of the inner instructions, once, flags
 *   OR-ed, the vault's signer flag cleared, grouped writable signers, readonly signers, writable
 *   non-signers, readonly non-signers, each group in first-seen order;
 * - the payload: a u8 count, then per instruction a u8 program index, a u8 account count, the u8
 *   account indexes (into the remaining accounts), a u16 LE data length and the data;
 * - the execute's accounts: the settings (writable), the smart-account program (readonly), every
 *   member as a readonly signer prepended one by one (so in reverse order), then the remaining
 *   accounts; its data: discriminator, account_index 0, num_signers = the members' count, a zero
 *   padding byte, a u32 LE payload length, the payload;
 * - the message: v0, compiled as Rust's `Message::try_compile` does (fee payer the first member,
 *   then the four header groups sorted by key bytes: compile.ts), instructions SetComputeUnitLimit,
 *   SetComputeUnitPrice, execute; every signature slot zeroed (the members, then the inner signers
 *   that are not members, the maker among them).
 *
 * `overrides` let an attack test change one thing the SDK would not (each named for what it breaks).
 */
import {
  type AddressLookupTableAccount,
  type PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { COMPUTE_BUDGET_PROGRAM_ID } from "../../src/program/layout.ts";
import {
  EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR,
  SMART_ACCOUNT_PROGRAM_ID,
  smartAccountVault,
} from "../../src/program/smart-account.ts";
import { setComputeUnitLimitInstruction, setComputeUnitPriceInstruction } from "./builder.ts";
import { compileSortedMessageV0 } from "./compile.ts";

/** The SDK's `SquadsWrapConfig`: `members` in the order the caller gives them, the first pays. */
export interface SmartAccountConfig {
  settings: PublicKey;
  vault: PublicKey;
  members: readonly PublicKey[];
}

/** The SDK's `WrapOptions` defaults. */
export const CU_MULTIPLIER = 2;
export const CU_CAP = 1_400_000;
const DEFAULT_CU_LIMIT = 400_000;
const DEFAULT_CU_PRICE = 500_000n;

/** What an attack may change in the envelope the SDK builds. */
export interface WrapOverrides {
  /** Instructions wrapped instead of the quote's own (compute budget already removed). */
  inner?: (ixs: TransactionInstruction[]) => TransactionInstruction[];
  /** The execute's account_index byte (0 in the SDK). */
  accountIndex?: number;
  /** The execute's num_signers byte (the members' count in the SDK). */
  numSigners?: number;
  padding?: number;
  /** The execute's second account (the smart-account program in the SDK). */
  programAccount?: PublicKey;
  /** A member listed (first) that is not a signer; num_signers counts it. */
  unsignedMember?: PublicKey;
  /** Extra readonly signer accounts appended to the execute's accounts (no inner instruction uses them). */
  extraSigners?: readonly PublicKey[];
  /** Bytes appended to the payload (its length counts them). */
  payloadTail?: Uint8Array;
  /** Outer instructions appended after the execute. */
  outerAfter?: readonly TransactionInstruction[];
  /** Outer instructions put beside the compute budget, before the execute. */
  outerBefore?: readonly TransactionInstruction[];
  /** Compile the outer message against these lookup tables (the SDK's `_with_alts`). */
  lookupTables?: readonly AddressLookupTableAccount[];
  /** The outer compute-unit price instead of the quote's. */
  computeUnitPrice?: bigint;
  /** The outer compute-unit limit instead of the wrapped one (the inner limit x 2, at most the cap). */
  computeUnitLimit?: number;
}

interface Meta {
  pubkey: PublicKey;
  isSigner: boolean;
  isWritable: boolean;
}

/** The quote's instructions with each account's flags read from its header (SDK `decompile_instruction`). */
export function decompileWithHeaderFlags(tx: VersionedTransaction): TransactionInstruction[] {
  const m = tx.message;
  const keys = m.staticAccountKeys;
  return m.compiledInstructions.map(
    (ci) =>
      new TransactionInstruction({
        programId: keys[ci.programIdIndex] as PublicKey,
        keys: ci.accountKeyIndexes.map((i) => ({
          pubkey: keys[i] as PublicKey,
          isSigner: m.isAccountSigner(i),
          isWritable: m.isAccountWritable(i),
        })),
        data: Buffer.from(ci.data),
      }),
  );
}

/** SDK `compile_remaining_accounts`. */
export function remainingAccounts(ixs: readonly TransactionInstruction[], vault: PublicKey): Meta[] {
  const map = new Map<string, Meta>();
  const touch = (pubkey: PublicKey, isSigner: boolean, isWritable: boolean) => {
    const id = pubkey.toBase58();
    const m = map.get(id);
    if (m) {
      m.isSigner ||= isSigner;
      m.isWritable ||= isWritable;
    } else {
      map.set(id, { pubkey, isSigner, isWritable });
    }
  };
  for (const ix of ixs) {
    touch(ix.programId, false, false);
    for (const k of ix.keys) touch(k.pubkey, k.isSigner, k.isWritable);
  }
  const all = [...map.values()].map((m) => (m.pubkey.equals(vault) ? { ...m, isSigner: false } : m));
  const group = (s: boolean, w: boolean) => all.filter((m) => m.isSigner === s && m.isWritable === w);
  return [...group(true, true), ...group(true, false), ...group(false, true), ...group(false, false)];
}

/** SDK `serialize_swap_instructions`. */
export function serializeInstructions(
  ixs: readonly TransactionInstruction[],
  remaining: readonly Meta[],
): Buffer {
  const index = new Map(remaining.map((m, i) => [m.pubkey.toBase58(), i]));
  const at = (k: PublicKey) => {
    const i = index.get(k.toBase58());
    if (i === undefined) throw new Error(`${k.toBase58()} is not a remaining account`);
    return i;
  };
  const parts: Buffer[] = [Buffer.from([ixs.length])];
  for (const ix of ixs) {
    const len = Buffer.alloc(2);
    len.writeUInt16LE(ix.data.length);
    parts.push(
      Buffer.from([at(ix.programId), ix.keys.length, ...ix.keys.map((k) => at(k.pubkey))]),
      len,
      ix.data,
    );
  }
  return Buffer.concat(parts);
}

/** SDK `build_squads_wrapped_transaction(_with_alts)`: the unsigned envelope around `swap` instructions. */
export function buildSmartAccountTransaction(
  swap: readonly TransactionInstruction[],
  config: SmartAccountConfig,
  recentBlockhash: string,
  computeUnitLimit: number,
  computeUnitPrice: bigint,
  o: WrapOverrides = {},
): VersionedTransaction {
  if (config.members.length === 0) throw new Error("members cannot be empty");
  const remaining = remainingAccounts(swap, config.vault);
  let payload = serializeInstructions(swap, remaining);
  if (o.payloadTail) payload = Buffer.concat([payload, o.payloadTail]);
  const members = config.members;
  const accounts: Meta[] = [
    { pubkey: config.settings, isSigner: false, isWritable: true },
    { pubkey: o.programAccount ?? SMART_ACCOUNT_PROGRAM_ID, isSigner: false, isWritable: false },
    ...(o.unsignedMember ? [{ pubkey: o.unsignedMember, isSigner: false, isWritable: false }] : []),
    // insert(0) one member after another: the last member first.
    ...[...members].reverse().map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
    ...remaining,
    ...(o.extraSigners ?? []).map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
  ];
  const header = Buffer.alloc(15);
  header.set(EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR, 0);
  header.writeUInt8(o.accountIndex ?? 0, 8);
  header.writeUInt8(o.numSigners ?? members.length + (o.unsignedMember ? 1 : 0), 9);
  header.writeUInt8(o.padding ?? 0, 10);
  header.writeUInt32LE(payload.length, 11);
  const execute = new TransactionInstruction({
    programId: SMART_ACCOUNT_PROGRAM_ID,
    keys: accounts,
    data: Buffer.concat([header, payload]),
  });
  const instructions = [
    setComputeUnitLimitInstruction(computeUnitLimit),
    setComputeUnitPriceInstruction(computeUnitPrice),
    ...(o.outerBefore ?? []),
    execute,
    ...(o.outerAfter ?? []),
  ];
  const payerKey = members[0] as PublicKey;
  const message = o.lookupTables
    ? new TransactionMessage({ payerKey, recentBlockhash, instructions }).compileToV0Message([
        ...o.lookupTables,
      ])
    : compileSortedMessageV0({ payerKey, instructions, recentBlockhash });
  // Signers: the members and the inner signers that are not members (the maker): the header's.
  return new VersionedTransaction(message);
}

/** SDK `wrap_transaction_base64` with the default options: the quote's fill, wrapped for `config`. */
export function wrapFillForSmartAccount(
  quoteTx: VersionedTransaction,
  config: SmartAccountConfig,
  o: WrapOverrides = {},
): VersionedTransaction {
  const all = decompileWithHeaderFlags(quoteTx);
  let limit: number | undefined;
  let price: bigint | undefined;
  for (const ix of all) {
    if (!ix.programId.equals(COMPUTE_BUDGET_PROGRAM_ID) || ix.data.length === 0) continue;
    if (ix.data[0] === 2 && ix.data.length >= 5) limit = ix.data.readUInt32LE(1);
    if (ix.data[0] === 3 && ix.data.length >= 9) price = ix.data.readBigUInt64LE(1);
  }
  const swap = all.filter((ix) => !ix.programId.equals(COMPUTE_BUDGET_PROGRAM_ID));
  const cuLimit = o.computeUnitLimit ?? Math.min((limit ?? DEFAULT_CU_LIMIT) * CU_MULTIPLIER, CU_CAP);
  return buildSmartAccountTransaction(
    o.inner ? o.inner(swap) : swap,
    config,
    quoteTx.message.recentBlockhash,
    cuLimit,
    o.computeUnitPrice ?? price ?? DEFAULT_CU_PRICE,
    o,
  );
}

/** The vault of `settings` at account index 0, and the config the SDK's `from_settings` makes. */
export function smartAccountConfig(settings: PublicKey, members: readonly PublicKey[]): SmartAccountConfig {
  return { settings, vault: smartAccountVault(settings, 0), members };
}

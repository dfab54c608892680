/**
 * Stand-in for the smart-account (Squads V5) program's `executeTransactionSyncV2`
 * (`SMRTzfY6DfH5ik3TKiyLFfXexV8uSG3d2UksSCYdunG`), whose binary is not available here: the local
 * chain replaces the execute with the instructions it carries, run in the same SVM transaction with
 * the vault as a signer (the program signs for it by CPI), each account with the flags the outer
 * message gives it, so the inner fill is then emulated as any fill is (fill-emulation.ts). The
 * execute's own accounts (settings, members) stay listed on a zero-lamport System transfer the local
 * chain puts before them, so that the transaction keeps its signers and its fee.
 *
 * What it checks, as the program does: the data (discriminator, account_index, num_signers, padding,
 * a u32 payload length and exactly that many payload bytes, the payload read to its last byte); the
 * settings account exists, is owned by the program and is a `Settings` account (the toolkit's
 * `squads-sdk/src/settings.rs` layout, commit 331d404); the execute's second account is the program;
 * each of the `num_signers` members listed signs the transaction, is a member of the settings with
 * the execute permission, no member is listed twice, and they are at least the threshold; the vault
 * is the PDA of the settings and account_index.
 *
 * What it does not check: time lock, the initiate and vote permissions, spending limits, the
 * settings' archival state, the program's own compute units and CPI limits (64 accounts, depth), and
 * it runs no program code of its own: a check that fails makes the transaction fail at the execute
 * (the fee charged), with a custom error of this stand-in's, not the program's error numbers.
 */
import { createHash } from "node:crypto";
import { type AccountMeta, PublicKey, TransactionInstruction } from "@solana/web3.js";
import {
  EXECUTE_FIXED_ACCOUNTS,
  EXECUTE_HEADER_LENGTH,
  EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR,
  SMART_ACCOUNT_PROGRAM_ID,
  smartAccountVault,
} from "../../program/smart-account.ts";

/** The member permission bit that lets a member execute (squads-sdk `MemberPermissions::EXECUTE`). */
const PERMISSION_EXECUTE = 1 << 2;
/** All three permissions (initiate, vote, execute). */
export const PERMISSIONS_ALL = 0b111;

/** Anchor account discriminator of `Settings`: sha256("account:Settings")[..8]. */
const SETTINGS_DISCRIMINATOR = createHash("sha256").update("account:Settings").digest().subarray(0, 8);

export interface SmartAccountSettings {
  threshold: number;
  members: { key: PublicKey; permissions: number }[];
}

/** A `Settings` account's data (the fields the stand-in does not read are zero). */
export function encodeSettings(s: SmartAccountSettings, multisig: PublicKey): Buffer {
  const parts: Buffer[] = [Buffer.from(SETTINGS_DISCRIMINATOR), multisig.toBuffer()];
  const fixed = Buffer.alloc(8 + 8 + 2 + 4 + 8 + 8 + 1 + 8 + 1);
  fixed.writeUInt16LE(s.threshold, 16);
  parts.push(fixed);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(s.members.length);
  parts.push(len);
  for (const m of s.members) parts.push(m.key.toBuffer(), Buffer.from([m.permissions]));
  return Buffer.concat(parts);
}

/** Reads a `Settings` account's threshold and members; undefined when the data is not one. */
function decodeSettings(data: Uint8Array): SmartAccountSettings | undefined {
  const b = Buffer.from(data);
  if (b.length < 78 || !b.subarray(0, 8).equals(SETTINGS_DISCRIMINATOR)) return undefined;
  let o = 8 + 32 + 8 + 8;
  const threshold = b.readUInt16LE(o);
  o += 2 + 4 + 8 + 8;
  const tag = b.readUInt8(o);
  o += 1 + (tag === 1 ? 32 : 0) + 8 + 1;
  if (o + 4 > b.length) return undefined;
  const count = b.readUInt32LE(o);
  o += 4;
  if (o + count * 33 > b.length) return undefined;
  const members = [];
  for (let i = 0; i < count; i++, o += 33) {
    members.push({ key: new PublicKey(b.subarray(o, o + 32)), permissions: b.readUInt8(o + 32) });
  }
  return { threshold, members };
}

/** The custom error a refused execute fails with (this stand-in's own number, not the program's). */
export const SMART_ACCOUNT_STAND_IN_ERROR = 0x5a5a;

export const isSmartAccountInstruction = (ix: TransactionInstruction): boolean =>
  ix.programId.equals(SMART_ACCOUNT_PROGRAM_ID);

export type SmartAccountEmulation =
  | { ok: true; instructions: TransactionInstruction[]; extraSigners: PublicKey[] }
  | { ok: false; error: string };

interface Ctx {
  read(key: PublicKey): { owner: PublicKey; data: Uint8Array } | null;
}

/** The execute's inner instructions as the program runs them, or why the program would fail. */
export function emulateSmartAccount(ix: TransactionInstruction, ctx: Ctx): SmartAccountEmulation {
  const fail = (why: string): SmartAccountEmulation => ({
    ok: false,
    error: `smart-account stand-in: ${why}`,
  });
  const d = ix.data;
  if (
    d.length < EXECUTE_HEADER_LENGTH ||
    !EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR.every((b, i) => d[i] === b)
  ) {
    return fail("not executeTransactionSyncV2");
  }
  const accountIndex = d.readUInt8(8);
  const numSigners = d.readUInt8(9);
  if (d.readUInt8(10) !== 0) return fail("non-zero padding");
  if (d.readUInt32LE(11) !== d.length - EXECUTE_HEADER_LENGTH) return fail("payload length");
  const keys = ix.keys;
  if (keys.length < EXECUTE_FIXED_ACCOUNTS + numSigners || numSigners === 0) return fail("accounts");
  const [settingsMeta, program] = keys as [AccountMeta, AccountMeta];
  const settingsKey = settingsMeta.pubkey;
  if (!program.pubkey.equals(SMART_ACCOUNT_PROGRAM_ID)) return fail("the second account is not the program");
  const acc = ctx.read(settingsKey);
  if (!acc?.owner.equals(SMART_ACCOUNT_PROGRAM_ID)) return fail("no settings account");
  const settings = decodeSettings(acc.data);
  if (!settings) return fail("the settings account does not read");
  const listed = keys.slice(EXECUTE_FIXED_ACCOUNTS, EXECUTE_FIXED_ACCOUNTS + numSigners);
  const seen = new Set<string>();
  for (const m of listed) {
    const id = m.pubkey.toBase58();
    if (!m.isSigner) return fail(`member ${id} does not sign`);
    if (seen.has(id)) return fail(`member ${id} listed twice`);
    seen.add(id);
    const member = settings.members.find((x) => x.key.equals(m.pubkey));
    if (!member || (member.permissions & PERMISSION_EXECUTE) === 0) return fail(`${id} may not execute`);
  }
  if (listed.length < settings.threshold) return fail("fewer signers than the threshold");
  const vault = smartAccountVault(settingsKey, accountIndex);
  const remaining = keys.slice(EXECUTE_FIXED_ACCOUNTS + numSigners);
  const payload = d.subarray(EXECUTE_HEADER_LENGTH);
  if (payload.length === 0) return fail("empty payload");
  let pos = 0;
  const count = payload.readUInt8(pos++);
  const out: TransactionInstruction[] = [];
  for (let n = 0; n < count; n++) {
    if (pos + 2 > payload.length) return fail("payload cut short");
    const program = remaining[payload.readUInt8(pos++)];
    const accounts = payload.readUInt8(pos++);
    if (pos + accounts + 2 > payload.length) return fail("payload cut short");
    const metas = [];
    for (let i = 0; i < accounts; i++) {
      const m = remaining[payload.readUInt8(pos++)];
      if (!m) return fail("account index out of range");
      metas.push({
        pubkey: m.pubkey,
        isSigner: m.isSigner || m.pubkey.equals(vault),
        isWritable: m.isWritable,
      });
    }
    const len = payload.readUInt16LE(pos);
    pos += 2;
    if (!program || pos + len > payload.length) return fail("payload cut short");
    out.push(
      new TransactionInstruction({
        programId: program.pubkey,
        keys: metas,
        data: Buffer.from(payload.subarray(pos, pos + len)),
      }),
    );
    pos += len;
  }
  if (pos !== payload.length) return fail("bytes after the payload's instructions");
  return { ok: true, instructions: out, extraSigners: [vault] };
}

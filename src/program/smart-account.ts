/**
 * The smart-account (Squads) envelope a fill arrives in when the taker is a smart-account vault
 * (docs/contract.md, "Smart-account takers"; toolkit `squads-sdk/`, commit 331d404): the outer message
 * holds the compute budget and one `executeTransactionSyncV2` of the smart-account program, whose data
 * is discriminator, account_index u8, num_signers u8, a padding byte, a u32 length and the payload (a u8
 * count of instructions, each a u8 program index, a u8 account count, u8 account indexes, a u16 data
 * length and the data). Its accounts: the settings account, the smart-account program, the
 * `num_signers` members, then the remaining accounts the payload's indexes point into.
 *
 * Decoding only: this file reads the envelope into named parts and gives the inner instructions as
 * the same `DecodedInstruction`s a plain fill has, each account with the flags the outer message gives
 * it (what the program's CPI passes on) and the vault as a signer (the program signs for it).
 * rules/smart-account.ts judges it.
 */
import { PublicKey } from "@solana/web3.js";
import {
  type AccountRef,
  classifyInstruction,
  type DecodedFillTx,
  type DecodedInstruction,
} from "./decode.ts";

export const SMART_ACCOUNT_PROGRAM_ID = new PublicKey("SMRTzfY6DfH5ik3TKiyLFfXexV8uSG3d2UksSCYdunG");
/** sha256("global:execute_transaction_sync_v2")[..8]. */
export const EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR = Uint8Array.from([90, 81, 187, 81, 39, 70, 128, 78]);
/** Discriminator, account_index, num_signers, padding, u32 payload length. */
export const EXECUTE_HEADER_LENGTH = 8 + 1 + 1 + 1 + 4;
/** Settings account and the smart-account program come before the members. */
export const EXECUTE_FIXED_ACCOUNTS = 2;

/** The vault PDA: seeds "smart_account", settings, "smart_account", [account_index]. */
export function smartAccountVault(settings: PublicKey, accountIndex: number): PublicKey {
  return PublicKey.findProgramAddressSync(
    [
      Buffer.from("smart_account"),
      settings.toBuffer(),
      Buffer.from("smart_account"),
      Buffer.from([accountIndex]),
    ],
    SMART_ACCOUNT_PROGRAM_ID,
  )[0];
}

export interface SmartAccountEnvelope {
  /** Position of the execute instruction in the outer message. */
  position: number;
  accountIndex: number;
  numSigners: number;
  padding: number;
  settings: AccountRef;
  /** The execute's second account: must be the smart-account program itself. */
  program: AccountRef;
  /** The members as listed (the SDK prepends them, so in reverse of its members' order). */
  members: AccountRef[];
  /** The accounts the payload's indexes point into. */
  remaining: AccountRef[];
  /** PDA of the settings account and account_index. */
  vault: PublicKey;
  /** The payload's instructions, decoded as a plain fill's are, in order. */
  inner: DecodedInstruction[];
}

export type EnvelopeDecode =
  /** No smart-account instruction in the outer message: a plain fill. */
  | { kind: "plain" }
  | { kind: "envelope"; envelope: SmartAccountEnvelope }
  | { kind: "malformed"; problem: string };

/** Shorter data fails too: data[i] past its end is undefined, never a discriminator byte. */
const isExecute = (data: Uint8Array) =>
  EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR.every((b, i) => data[i] === b);

/**
 * Finds the smart-account instruction of the outer message and decodes it. More than one, or one that
 * is not `executeTransactionSyncV2`, or bytes that do not read exactly, is malformed.
 */
export function decodeSmartAccountEnvelope(d: DecodedFillTx): EnvelopeDecode {
  const calls = d.instructions.filter((ix) => ix.programId.equals(SMART_ACCOUNT_PROGRAM_ID));
  if (calls.length === 0) return { kind: "plain" };
  if (calls.length > 1) {
    return {
      kind: "malformed",
      problem: `the message calls the smart-account program ${calls.length} times`,
    };
  }
  const ix = calls[0] as DecodedInstruction;
  const data = ix.data;
  if (!isExecute(data)) {
    return { kind: "malformed", problem: "the smart-account instruction is not executeTransactionSyncV2" };
  }
  if (data.length < EXECUTE_HEADER_LENGTH) {
    return {
      kind: "malformed",
      problem: `executeTransactionSyncV2 data is ${data.length} bytes, shorter than its header`,
    };
  }
  const buf = Buffer.from(data);
  const accountIndex = buf.readUInt8(8);
  const numSigners = buf.readUInt8(9);
  const padding = buf.readUInt8(10);
  const payloadLength = buf.readUInt32LE(11);
  if (data.length !== EXECUTE_HEADER_LENGTH + payloadLength) {
    return {
      kind: "malformed",
      problem: `executeTransactionSyncV2 says its payload is ${payloadLength} bytes, but ${data.length - EXECUTE_HEADER_LENGTH} follow`,
    };
  }
  const accounts = ix.accounts;
  if (accounts.length < EXECUTE_FIXED_ACCOUNTS + numSigners) {
    return {
      kind: "malformed",
      problem: `executeTransactionSyncV2 names ${accounts.length} accounts, fewer than its settings, program and ${numSigners} members`,
    };
  }
  const settings = accounts[0] as AccountRef;
  if (!settings.key)
    return { kind: "malformed", problem: "the smart account's settings come from a lookup table" };
  const remaining = accounts.slice(EXECUTE_FIXED_ACCOUNTS + numSigners);
  const vault = smartAccountVault(settings.key, accountIndex);
  const inner = decodePayload(buf.subarray(EXECUTE_HEADER_LENGTH), remaining, vault, ix.position);
  if (typeof inner === "string") return { kind: "malformed", problem: inner };
  return {
    kind: "envelope",
    envelope: {
      position: ix.position,
      accountIndex,
      numSigners,
      padding,
      settings,
      program: accounts[1] as AccountRef,
      members: accounts.slice(EXECUTE_FIXED_ACCOUNTS, EXECUTE_FIXED_ACCOUNTS + numSigners),
      remaining,
      vault,
      inner,
    },
  };
}

/** The payload's instructions, or why they do not read exactly (no byte left over). */
function decodePayload(
  payload: Buffer,
  remaining: AccountRef[],
  vault: PublicKey,
  position: number,
): DecodedInstruction[] | string {
  if (payload.length === 0) return "the smart-account payload is empty";
  let pos = 0;
  const count = payload.readUInt8(pos++);
  const out: DecodedInstruction[] = [];
  for (let n = 0; n < count; n++) {
    // A u8 program index, a u8 account count, that many u8 account indexes, a u16 data length.
    const accountCount = payload[pos + 1];
    if (accountCount === undefined || pos + 2 + accountCount + 2 > payload.length)
      return `inner instruction ${n} is cut short`;
    const programIndex = payload.readUInt8(pos);
    pos += 2;
    const indexes = [...payload.subarray(pos, pos + accountCount)];
    pos += accountCount;
    const dataLength = payload.readUInt16LE(pos);
    pos += 2;
    if (pos + dataLength > payload.length) return `inner instruction ${n}'s data is cut short`;
    const data = Uint8Array.from(payload.subarray(pos, pos + dataLength));
    pos += dataLength;
    const program = remaining[programIndex];
    if (!program?.key)
      return `inner instruction ${n} names program index ${programIndex}, not a remaining account`;
    const accounts: AccountRef[] = [];
    for (const i of indexes) {
      const a = remaining[i];
      if (!a) return `inner instruction ${n} names account index ${i}, not a remaining account`;
      // The program signs for the vault by CPI: inside, the vault is a signer whatever the outer flags.
      accounts.push(a.key?.equals(vault) ? { ...a, signer: true } : { ...a });
    }
    out.push(
      classifyInstruction({
        position,
        inner: n,
        programIndex: program.index,
        programId: program.key,
        accounts,
        data,
      }),
    );
  }
  if (pos !== payload.length)
    return `the smart-account payload has ${payload.length - pos} bytes after its instructions`;
  return out;
}

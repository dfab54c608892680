/**
 * Decodes a fill transaction into named parts without judging it: which instruction is which, the
 * compute budget it asks for, the ATAs it creates, the `fill` with its named accounts and arguments.
 * validate.ts judges the result against the quote; the simulator and tests read it too.
 *
 * Only problems that make the message unreadable (bad indexes, duplicate keys, unparsable bytes)
 * are reported, as values; anything readable but wrong is left for the validator to name.
 */
import { type MessageCompiledInstruction, type PublicKey, VersionedTransaction } from "@solana/web3.js";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  ATA_CREATE_IDEMPOTENT,
  CB_SET_COMPUTE_UNIT_LIMIT,
  CB_SET_COMPUTE_UNIT_PRICE,
  COMPUTE_BUDGET_PROGRAM_ID,
  decodeFillData,
  FILL_DATA_LENGTH,
  FILL_DISCRIMINATOR,
  FILL_MAX_ACCOUNTS,
  FILL_MIN_ACCOUNTS,
  FillAccount,
  type FillArgs,
  LIGHTHOUSE_PROGRAM_ID,
  ORDER_ENGINE_PROGRAM_ID,
} from "./layout.ts";

/** One account an instruction names. `key` is undefined when it comes from a lookup table. */
export interface AccountRef {
  index: number;
  key: PublicKey | undefined;
  signer: boolean;
  writable: boolean;
}

export interface InstructionBase {
  /** Position in the message, 0-based (for an instruction inside a smart-account execute, the execute's). */
  position: number;
  /** Set for an instruction inside a smart-account execute: its place in the payload, 0-based. */
  inner?: number;
  programIndex: number;
  programId: PublicKey;
  accounts: AccountRef[];
  data: Uint8Array;
}

export interface ComputeUnitLimitIx extends InstructionBase {
  kind: "computeUnitLimit";
  units: number;
}
export interface ComputeUnitPriceIx extends InstructionBase {
  kind: "computeUnitPrice";
  microLamports: bigint;
}
/** Any other ComputeBudget instruction, or a limit/price whose data has the wrong length. */
export interface ComputeBudgetOtherIx extends InstructionBase {
  kind: "computeBudgetOther";
  tag: number | undefined;
}

/** Associated Token program accounts for Create / CreateIdempotent. */
export interface AtaCreateAccounts {
  payer: AccountRef;
  ata: AccountRef;
  owner: AccountRef;
  mint: AccountRef;
  systemProgram: AccountRef;
  tokenProgram: AccountRef;
}
export interface AtaCreateIdempotentIx extends InstructionBase {
  kind: "ataCreateIdempotent";
  /** Undefined when the instruction does not carry exactly six accounts. */
  named: AtaCreateAccounts | undefined;
}
/** Any Associated Token instruction whose data is not exactly `[1]`. */
export interface AtaOtherIx extends InstructionBase {
  kind: "ataOther";
}

/** The `fill` accounts by name (docs/contract.md order). */
export interface FillAccounts {
  taker: AccountRef;
  maker: AccountRef;
  takerInputTokenAccount: AccountRef;
  makerInputTokenAccount: AccountRef;
  takerOutputTokenAccount: AccountRef;
  makerOutputTokenAccount: AccountRef;
  inputMint: AccountRef;
  inputTokenProgram: AccountRef;
  outputMint: AccountRef;
  outputTokenProgram: AccountRef;
  systemProgram: AccountRef;
  /** Present only when a 12th account is passed (native SOL output). */
  temporaryWsolTokenAccount?: AccountRef;
}
export interface FillIx extends InstructionBase {
  kind: "fill";
  /** Undefined when the account count is not 11 or 12. */
  named: FillAccounts | undefined;
  /** Undefined when the data is not exactly a fill's 35 bytes; `dataProblem` then says why. */
  args: FillArgs | undefined;
  dataProblem?: string;
}
/** An order-engine instruction that is not `fill` (another discriminator). */
export interface OrderEngineOtherIx extends InstructionBase {
  kind: "orderEngineOther";
}
export interface LighthouseIx extends InstructionBase {
  kind: "lighthouse";
  /** First data byte (the Lighthouse instruction tag); undefined for empty data. */
  discriminator: number | undefined;
}
export interface OtherIx extends InstructionBase {
  kind: "other";
}

export type DecodedInstruction =
  | ComputeUnitLimitIx
  | ComputeUnitPriceIx
  | ComputeBudgetOtherIx
  | AtaCreateIdempotentIx
  | AtaOtherIx
  | FillIx
  | OrderEngineOtherIx
  | LighthouseIx
  | OtherIx;

export interface DecodedFillTx {
  version: 0 | "legacy";
  header: {
    numRequiredSignatures: number;
    numReadonlySignedAccounts: number;
    numReadonlyUnsignedAccounts: number;
  };
  staticKeys: PublicKey[];
  signatures: Uint8Array[];
  recentBlockhash: string;
  /** Number of address lookup tables the message references. */
  addressTableLookups: number;
  /** Every instruction, in order. */
  instructions: DecodedInstruction[];
  /** The same instructions grouped by kind (positions keep their message order). */
  computeBudget: (ComputeUnitLimitIx | ComputeUnitPriceIx | ComputeBudgetOtherIx)[];
  ataCreations: AtaCreateIdempotentIx[];
  fills: FillIx[];
  lighthouse: LighthouseIx[];
  /** Everything else: unknown programs, other ATA or order-engine instructions. */
  others: (AtaOtherIx | OrderEngineOtherIx | OtherIx)[];
}

export type DecodeResult = { ok: true; decoded: DecodedFillTx } | { ok: false; problem: string };
export type DeserializeResult = { ok: true; tx: VersionedTransaction } | { ok: false; problem: string };

/** Parses wire bytes (or base64) into a transaction; unparsable or trailing bytes are a problem value. */
export function deserializeFillTransaction(input: Uint8Array | string): DeserializeResult {
  const bytes = typeof input === "string" ? Buffer.from(input, "base64") : input;
  if (bytes.length === 0) return { ok: false, problem: "the transaction is empty" };
  let tx: VersionedTransaction;
  try {
    tx = VersionedTransaction.deserialize(bytes);
  } catch (err) {
    return { ok: false, problem: `the transaction bytes do not parse: ${(err as Error).message}` };
  }
  // web3.js ignores bytes after the message; a signed-over payload must be exactly the message.
  let length: number;
  try {
    length = tx.serialize().length;
  } catch (err) {
    return { ok: false, problem: `the transaction does not re-serialize: ${(err as Error).message}` };
  }
  if (length !== bytes.length) {
    return { ok: false, problem: `the transaction has ${bytes.length - length} unexpected trailing bytes` };
  }
  return { ok: true, tx };
}

/** Decodes a transaction's instructions into named parts; see the module comment. */
export function decodeFillTransaction(tx: VersionedTransaction): DecodeResult {
  const message = tx.message;
  const staticKeys = message.staticAccountKeys;
  const header = { ...message.header };
  const lookups = message.addressTableLookups;
  const lookupCount = lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  const totalKeys = staticKeys.length + lookupCount;

  if (tx.signatures.length !== header.numRequiredSignatures) {
    return {
      ok: false,
      problem: `the transaction carries ${tx.signatures.length} signatures but its message requires ${header.numRequiredSignatures}`,
    };
  }
  if (header.numRequiredSignatures > staticKeys.length) {
    return { ok: false, problem: "the header requires more signers than there are account keys" };
  }
  if (header.numReadonlySignedAccounts >= header.numRequiredSignatures && header.numRequiredSignatures > 0) {
    return { ok: false, problem: "the header marks every signer readonly, the fee payer included" };
  }
  if (header.numRequiredSignatures + header.numReadonlyUnsignedAccounts > staticKeys.length) {
    return { ok: false, problem: "the header counts more accounts than there are account keys" };
  }
  const seen = new Set<string>();
  for (const k of staticKeys) {
    const id = k.toBase58();
    if (seen.has(id)) return { ok: false, problem: `account key ${id} appears twice` };
    seen.add(id);
  }

  const ref = (index: number): AccountRef => ({
    index,
    key: staticKeys[index],
    signer: message.isAccountSigner(index),
    writable: message.isAccountWritable(index),
  });

  const instructions: DecodedInstruction[] = [];
  const compiled: MessageCompiledInstruction[] = message.compiledInstructions;
  for (const [position, ci] of compiled.entries()) {
    // Programs must be static keys: the runtime cannot invoke a program loaded from a lookup table.
    const programId = staticKeys[ci.programIdIndex];
    if (programId === undefined) {
      return {
        ok: false,
        problem: `instruction ${position} names program index ${ci.programIdIndex}, not a key`,
      };
    }
    for (const i of ci.accountKeyIndexes) {
      if (i >= totalKeys)
        return { ok: false, problem: `instruction ${position} names account index ${i}, not a key` };
    }
    const base: InstructionBase = {
      position,
      programIndex: ci.programIdIndex,
      programId,
      accounts: ci.accountKeyIndexes.map(ref),
      data: Uint8Array.from(ci.data),
    };
    instructions.push(classifyInstruction(base));
  }

  const decoded: DecodedFillTx = {
    version: message.version,
    header,
    staticKeys,
    signatures: tx.signatures,
    recentBlockhash: message.recentBlockhash,
    addressTableLookups: lookups.length,
    instructions,
    computeBudget: [],
    ataCreations: [],
    fills: [],
    lighthouse: [],
    others: [],
  };
  for (const ix of instructions) {
    switch (ix.kind) {
      case "computeUnitLimit":
      case "computeUnitPrice":
      case "computeBudgetOther":
        decoded.computeBudget.push(ix);
        break;
      case "ataCreateIdempotent":
        decoded.ataCreations.push(ix);
        break;
      case "fill":
        decoded.fills.push(ix);
        break;
      case "lighthouse":
        decoded.lighthouse.push(ix);
        break;
      default:
        decoded.others.push(ix);
    }
  }
  return { ok: true, decoded };
}

/** Names one instruction by its program and data (also for the instructions a smart-account execute carries). */
export function classifyInstruction(base: InstructionBase): DecodedInstruction {
  const { programId, data, accounts } = base;
  if (programId.equals(COMPUTE_BUDGET_PROGRAM_ID)) {
    const tag = data[0];
    const buf = Buffer.from(data);
    if (tag === CB_SET_COMPUTE_UNIT_LIMIT && data.length === 5) {
      return { ...base, kind: "computeUnitLimit", units: buf.readUInt32LE(1) };
    }
    if (tag === CB_SET_COMPUTE_UNIT_PRICE && data.length === 9) {
      return { ...base, kind: "computeUnitPrice", microLamports: buf.readBigUInt64LE(1) };
    }
    return { ...base, kind: "computeBudgetOther", tag };
  }
  if (programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) {
    if (data.length !== 1 || data[0] !== ATA_CREATE_IDEMPOTENT) return { ...base, kind: "ataOther" };
    const [payer, ata, owner, mint, systemProgram, tokenProgram] = accounts;
    const named =
      accounts.length === 6 && payer && ata && owner && mint && systemProgram && tokenProgram
        ? { payer, ata, owner, mint, systemProgram, tokenProgram }
        : undefined;
    return { ...base, kind: "ataCreateIdempotent", named };
  }
  if (programId.equals(ORDER_ENGINE_PROGRAM_ID)) {
    // Shorter data fails too: data[i] past its end is undefined, never a discriminator byte.
    const isFill = FILL_DISCRIMINATOR.every((b, i) => data[i] === b);
    if (!isFill) return { ...base, kind: "orderEngineOther" };
    const args = decodeFillData(data);
    const ix: FillIx = { ...base, kind: "fill", named: nameFillAccounts(accounts), args };
    if (!args)
      ix.dataProblem = `the fill data is ${data.length} bytes, a fill is exactly ${FILL_DATA_LENGTH}`;
    return ix;
  }
  if (programId.equals(LIGHTHOUSE_PROGRAM_ID)) {
    return { ...base, kind: "lighthouse", discriminator: data[0] };
  }
  return { ...base, kind: "other" };
}

function nameFillAccounts(a: AccountRef[]): FillAccounts | undefined {
  if (a.length < FILL_MIN_ACCOUNTS || a.length > FILL_MAX_ACCOUNTS) return undefined;
  const at = (i: number): AccountRef => a[i] as AccountRef;
  const named: FillAccounts = {
    taker: at(FillAccount.taker),
    maker: at(FillAccount.maker),
    takerInputTokenAccount: at(FillAccount.takerInputTokenAccount),
    makerInputTokenAccount: at(FillAccount.makerInputTokenAccount),
    takerOutputTokenAccount: at(FillAccount.takerOutputTokenAccount),
    makerOutputTokenAccount: at(FillAccount.makerOutputTokenAccount),
    inputMint: at(FillAccount.inputMint),
    inputTokenProgram: at(FillAccount.inputTokenProgram),
    outputMint: at(FillAccount.outputMint),
    outputTokenProgram: at(FillAccount.outputTokenProgram),
    systemProgram: at(FillAccount.systemProgram),
  };
  const pda = a[FillAccount.temporaryWsolTokenAccount];
  if (pda) named.temporaryWsolTokenAccount = pda;
  return named;
}

/** Base58 of an account, or a marker for lookup-table accounts (for messages and logs). */
export function describeAccount(a: AccountRef): string {
  return a.key ? a.key.toBase58() : `lookup-table account #${a.index}`;
}

/**
 * The local chain's stand-in for the Lighthouse assertion program
 * (L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95), whose binary is not available here.
 *
 * A wallet appends Lighthouse assertions after the fill to make the transaction fail unless the
 * accounts end up as it expects (docs/contract.md, "The operator's order and execute API"). The emulation
 * decodes the instruction exactly as lighthouse-sdk encodes it (borsh: discriminator, log level, then
 * the assertion enum; "Multi" variants carry a compact-u64 (LEB128) count) and evaluates it as the
 * program does (Jac0xb/lighthouse, types/assert/*.rs), against the state the account has at that
 * point of the transaction; local/index.ts supplies that state and fails the transaction, as the
 * program would, exactly when an assertion is false.
 *
 * Emulated: AssertAccountInfo (5) and AssertAccountInfoMulti (6): lamports, data length, owner, known
 * owner, rent epoch, is-signer, is-writable, executable; AssertMintAccount (7, 8): mint authority,
 * supply, decimals, is-initialized, freeze authority; AssertTokenAccount (9, 10): mint, owner,
 * amount, delegate, state, is-native, delegated amount, close authority, owner-is-derived (ATA).
 * Every operator: Equal, NotEqual, GreaterThan, LessThan, GreaterThanOrEqual, LessThanOrEqual,
 * Contains ((actual & v) == v) and DoesNotContain ((actual & v) == 0), on the little-endian bytes as
 * the program compares them.
 *
 * Not emulated (the transaction is refused as unsupported, never run with the assertion dropped):
 * every other Lighthouse instruction, and AssertAccountInfo's VerifyDatahash (keccak, not in node).
 */
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { SYSTEM_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../program/layout.ts";

/** An account as an assertion sees it mid-transaction. */
export interface AssertedAccount {
  owner: PublicKey;
  lamports: bigint;
  data: Uint8Array;
  executable: boolean;
  rentEpoch: bigint;
}

/** The program's error code for a false assertion (lighthouse-sdk: LIGHTHOUSE_ERROR__ASSERTION_FAILED). */
export const LIGHTHOUSE_ASSERTION_FAILED = 6001;

export type LighthouseVerdict =
  | { kind: "pass" }
  /** The program fails: an assertion is false, or the account or instruction is not as required. */
  | { kind: "fail"; error: string }
  /** An instruction the emulation does not model. */
  | { kind: "unsupported"; error: string };

const KNOWN_PROGRAMS = [
  SYSTEM_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  new PublicKey("SysvarRent111111111111111111111111111111111"),
  new PublicKey("Stake11111111111111111111111111111111111111"),
  new PublicKey("Vote111111111111111111111111111111111111111"),
  new PublicKey("BPFLoader2111111111111111111111111111111111"),
  new PublicKey("BPFLoaderUpgradeab1e11111111111111111111111"),
  new PublicKey("Config1111111111111111111111111111111111111"),
];

const INTEGER_OPERATORS = [
  "Equal",
  "NotEqual",
  "GreaterThan",
  "LessThan",
  "GreaterThanOrEqual",
  "LessThanOrEqual",
  "Contains",
  "DoesNotContain",
] as const;
type Operator = (typeof INTEGER_OPERATORS)[number];

class Malformed extends Error {}

/** A borsh reader over instruction data; running out of bytes is the program failing to deserialize. */
class Reader {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}
  take(n: number): Uint8Array {
    if (this.at + n > this.bytes.length) throw new Malformed("instruction data too short");
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  u8(): number {
    return this.take(1)[0] as number;
  }
  bool(): boolean {
    const b = this.u8();
    if (b > 1) throw new Malformed(`bool byte ${b}`);
    return b === 1;
  }
  /** Little-endian bytes of a fixed-width integer (kept as bytes: the program compares bytes). */
  le(n: number): Uint8Array {
    return this.take(n);
  }
  pubkey(): Uint8Array {
    return this.take(32);
  }
  option<T>(inner: () => T): T | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag === 1) return inner();
    throw new Malformed(`option tag ${tag}`);
  }
  /** CompactU64: unsigned LEB128. */
  compactU64(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = this.u8();
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
      shift += 7;
      if (shift > 63) throw new Malformed("compact u64 too long");
    }
  }
  integerOperator(): Operator {
    const op = INTEGER_OPERATORS[this.u8()];
    if (!op) throw new Malformed("unknown integer operator");
    return op;
  }
  equatableOperator(): Operator {
    const b = this.u8();
    if (b > 1) throw new Malformed("unknown equatable operator");
    return INTEGER_OPERATORS[b] as Operator;
  }
  done(): void {
    if (this.at !== this.bytes.length) throw new Malformed("trailing instruction data");
  }
}

const leBytes = (v: bigint, n: number): Uint8Array => {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Number((v >> BigInt(8 * i)) & 0xffn);
  return out;
};

/** Unsigned little-endian comparison, as the program's compare_unsigned_bytes (equal lengths). */
function compareLe(a: Uint8Array, b: Uint8Array): number {
  for (let i = a.length - 1; i >= 0; i--) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** evaluate_bytes: the program's one comparison, on equal-length little-endian byte strings. */
function evaluateBytes(actual: Uint8Array, expected: Uint8Array, op: Operator): boolean {
  if (actual.length !== expected.length) return op === "NotEqual";
  switch (op) {
    case "Equal":
      return compareLe(actual, expected) === 0;
    case "NotEqual":
      return compareLe(actual, expected) !== 0;
    case "GreaterThan":
      return compareLe(actual, expected) > 0;
    case "LessThan":
      return compareLe(actual, expected) < 0;
    case "GreaterThanOrEqual":
      return compareLe(actual, expected) >= 0;
    case "LessThanOrEqual":
      return compareLe(actual, expected) <= 0;
    case "Contains":
      return actual.every((a, i) => (a & (expected[i] as number)) === expected[i]);
    case "DoesNotContain":
      return actual.every((a, i) => (a & (expected[i] as number)) === 0);
  }
}

/** Option<T> == / != as the program compares them (None equals only None). */
function evaluateOption(actual: Uint8Array | null, expected: Uint8Array | null, op: Operator): boolean {
  const equal =
    actual === null || expected === null ? actual === expected : compareLe(actual, expected) === 0;
  return op === "Equal" ? equal : !equal;
}

/** One comparison to make: a name for the error, and its outcome given the account. */
type Check = (
  account: AssertedAccount,
  meta: { isSigner: boolean; isWritable: boolean },
  key: PublicKey,
) => string | undefined;

const fail = (what: string, op: Operator) => `${what} ${op} assertion failed`;

/** Reads a field from account data, failing (as the program does) when the data is too short. */
function field(data: Uint8Array, offset: number, n: number, what: string): Uint8Array {
  if (offset + n > data.length) throw new Malformed(`${what}: account data too short`);
  return data.subarray(offset, offset + n);
}

/** A COption<T> in SPL account data: a u32 tag, then the value. */
function cOption(data: Uint8Array, offset: number, n: number, what: string): Uint8Array | null {
  const tag = field(data, offset, 4, what);
  const t = new DataView(tag.buffer, tag.byteOffset, 4).getInt32(0, true);
  if (t === 0) return null;
  if (t === 1) return field(data, offset + 4, n, what);
  throw new Malformed(`${what}: bad option tag`);
}

function accountInfoCheck(r: Reader): Check | "unsupported" {
  const variant = r.u8();
  switch (variant) {
    case 0: {
      const v = r.le(8);
      const op = r.integerOperator();
      return (a) => (evaluateBytes(leBytes(a.lamports, 8), v, op) ? undefined : fail("Lamports", op));
    }
    case 1: {
      const v = r.le(8);
      const op = r.integerOperator();
      return (a) =>
        evaluateBytes(leBytes(BigInt(a.data.length), 8), v, op) ? undefined : fail("DataLength", op);
    }
    case 2: {
      const v = r.pubkey();
      const op = r.equatableOperator();
      return (a) => (evaluateBytes(a.owner.toBytes(), v, op) ? undefined : fail("Owner", op));
    }
    case 3: {
      const program = KNOWN_PROGRAMS[r.u8()];
      if (!program) throw new Malformed("unknown known program");
      const op = r.equatableOperator();
      return (a) =>
        evaluateBytes(a.owner.toBytes(), program.toBytes(), op) ? undefined : fail("KnownOwner", op);
    }
    case 4: {
      const v = r.le(8);
      const op = r.integerOperator();
      return (a) => (evaluateBytes(leBytes(a.rentEpoch, 8), v, op) ? undefined : fail("RentEpoch", op));
    }
    case 5:
    case 6:
    case 7: {
      const v = r.bool();
      const op = r.equatableOperator();
      const name = ["IsSigner", "IsWritable", "Executable"][variant - 5] as string;
      return (a, meta) => {
        const actual = variant === 5 ? meta.isSigner : variant === 6 ? meta.isWritable : a.executable;
        return (actual === v) === (op === "Equal") ? undefined : fail(name, op);
      };
    }
    case 8:
      return "unsupported";
    default:
      throw new Malformed(`unknown account info assertion ${variant}`);
  }
}

function splOwnerCheck(a: AssertedAccount): string | undefined {
  return a.owner.equals(TOKEN_PROGRAM_ID) || a.owner.equals(TOKEN_2022_PROGRAM_ID)
    ? undefined
    : "AccountOwnerMismatch: not owned by a token program";
}

function mintCheck(r: Reader): Check {
  const variant = r.u8();
  const optionKey = (offset: number, name: string): Check => {
    const v = r.option(() => r.pubkey());
    const op = r.equatableOperator();
    return (a) => (evaluateOption(cOption(a.data, offset, 32, name), v, op) ? undefined : fail(name, op));
  };
  switch (variant) {
    case 0:
      return optionKey(0, "MintAuthority");
    case 1: {
      const v = r.le(8);
      const op = r.integerOperator();
      return (a) => (evaluateBytes(field(a.data, 36, 8, "Supply"), v, op) ? undefined : fail("Supply", op));
    }
    case 2: {
      const v = r.le(1);
      const op = r.integerOperator();
      return (a) =>
        evaluateBytes(field(a.data, 44, 1, "Decimals"), v, op) ? undefined : fail("Decimals", op);
    }
    case 3: {
      const v = r.bool();
      const op = r.equatableOperator();
      return (a) => {
        const actual = (field(a.data, 45, 1, "IsInitialized")[0] as number) !== 0;
        return (actual === v) === (op === "Equal") ? undefined : fail("IsInitialized", op);
      };
    }
    case 4:
      return optionKey(46, "FreezeAuthority");
    default:
      throw new Malformed(`unknown mint assertion ${variant}`);
  }
}

function tokenCheck(r: Reader): Check {
  const variant = r.u8();
  const key = (offset: number, name: string): Check => {
    const v = r.pubkey();
    const op = r.equatableOperator();
    return (a) => (evaluateBytes(field(a.data, offset, 32, name), v, op) ? undefined : fail(name, op));
  };
  const optionKey = (offset: number, name: string): Check => {
    const v = r.option(() => r.pubkey());
    const op = r.equatableOperator();
    return (a) => (evaluateOption(cOption(a.data, offset, 32, name), v, op) ? undefined : fail(name, op));
  };
  const u64 = (offset: number, name: string): Check => {
    const v = r.le(8);
    const op = r.integerOperator();
    return (a) => (evaluateBytes(field(a.data, offset, 8, name), v, op) ? undefined : fail(name, op));
  };
  switch (variant) {
    case 0:
      return key(0, "Mint");
    case 1:
      return key(32, "Owner");
    case 2:
      return u64(64, "Amount");
    case 3:
      return optionKey(72, "Delegate");
    case 4: {
      const v = r.le(1);
      const op = r.integerOperator();
      return (a) => (evaluateBytes(field(a.data, 108, 1, "State"), v, op) ? undefined : fail("State", op));
    }
    case 5: {
      const v = r.option(() => r.le(8));
      const op = r.equatableOperator();
      return (a) =>
        evaluateOption(cOption(a.data, 109, 8, "IsNative"), v, op) ? undefined : fail("IsNative", op);
    }
    case 6:
      return u64(121, "DelegatedAmount");
    case 7:
      return optionKey(129, "CloseAuthority");
    case 8:
      return (a, _meta, k) => {
        const mint = new PublicKey(field(a.data, 0, 32, "Mint"));
        const owner = new PublicKey(field(a.data, 32, 32, "Owner"));
        const ata = getAssociatedTokenAddressSync(mint, owner, true, a.owner);
        return ata.equals(k) ? undefined : "TokenAccountOwnerIsDerived assertion failed";
      };
    default:
      throw new Malformed(`unknown token account assertion ${variant}`);
  }
}

/** What one Lighthouse instruction asks: its target and its checks (in order), or why not emulated. */
export type DecodedLighthouse =
  | { kind: "assert"; target: PublicKey; checks: Check[]; splOwned: boolean }
  | { kind: "malformed"; error: string }
  | { kind: "unsupported"; error: string };

/** Decodes a Lighthouse instruction as the program deserializes it. */
export function decodeLighthouse(ix: TransactionInstruction): DecodedLighthouse {
  const disc = ix.data[0];
  if (disc === undefined || disc < 5 || disc > 10) {
    return { kind: "unsupported", error: `Lighthouse instruction ${disc ?? "(empty)"} is not emulated` };
  }
  const target = ix.keys[0]?.pubkey;
  if (!target) return { kind: "malformed", error: "Lighthouse: NotEnoughAccounts" };
  const r = new Reader(ix.data);
  try {
    r.u8();
    if (r.u8() > 6) throw new Malformed("unknown log level");
    const multi = disc === 6 || disc === 8 || disc === 10;
    const one = disc <= 6 ? () => accountInfoCheck(r) : disc <= 8 ? () => mintCheck(r) : () => tokenCheck(r);
    const count = multi ? r.compactU64() : 1;
    const checks: Check[] = [];
    for (let i = 0; i < count; i++) {
      const c = one();
      if (c === "unsupported") {
        return { kind: "unsupported", error: "Lighthouse VerifyDatahash (keccak) is not emulated" };
      }
      checks.push(c);
    }
    r.done();
    return { kind: "assert", target, checks, splOwned: disc >= 7 };
  } catch (e) {
    if (e instanceof Malformed) return { kind: "malformed", error: `Lighthouse: ${e.message}` };
    throw e;
  }
}

/** Evaluates a decoded assertion against the account's state at that point of the transaction. */
export function evaluateLighthouse(
  decoded: Extract<DecodedLighthouse, { kind: "assert" }>,
  account: AssertedAccount,
  meta: { isSigner: boolean; isWritable: boolean },
): LighthouseVerdict {
  if (decoded.splOwned) {
    const wrongOwner = splOwnerCheck(account);
    if (wrongOwner) return { kind: "fail", error: `Lighthouse: ${wrongOwner}` };
  }
  try {
    for (const [i, check] of decoded.checks.entries()) {
      const failed = check(account, meta, decoded.target);
      if (failed) {
        const at = decoded.checks.length > 1 ? ` (assertion ${i})` : "";
        return { kind: "fail", error: `Lighthouse: ${failed}${at} on ${decoded.target.toBase58()}` };
      }
    }
  } catch (e) {
    if (e instanceof Malformed) return { kind: "fail", error: `Lighthouse: ${e.message}` };
    throw e;
  }
  return { kind: "pass" };
}

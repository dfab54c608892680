/**
 * How src/program/smart-account.ts reads a smart-account (Squads) envelope: the vault it derives, the
 * parts it names (members, remaining accounts, the inner instructions with the flags the program's CPI
 * gives them) and, with their words (the validator passes them on as INVALID_SMART_ACCOUNT), the
 * envelopes whose bytes or accounts do not read exactly. Messages are built byte by byte here; the
 * SDK's own wrapping of real fills is test/fill/smart-account-attacks.ts.
 */
import { Keypair, MessageV0, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { type DecodedFillTx, decodeFillTransaction } from "../../src/program/decode.ts";
import { COMPUTE_BUDGET_PROGRAM_ID, SYSTEM_PROGRAM_ID } from "../../src/program/layout.ts";
import {
  decodeSmartAccountEnvelope,
  type EnvelopeDecode,
  EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR,
  SMART_ACCOUNT_PROGRAM_ID,
  smartAccountVault,
} from "../../src/program/smart-account.ts";

describe("smartAccountVault", () => {
  it("is the PDA of 'smart_account', the settings, 'smart_account' and the account index", () => {
    const settings = new PublicKey(Buffer.alloc(32, 1));
    expect(smartAccountVault(settings, 0).toBase58()).toBe("34F9rHfJPm9ffGCuEHWb9BbZDveLVnonDwxy29DLsXNC");
    expect(smartAccountVault(settings, 3).toBase58()).toBe("8P1a1ZNGWHG2RyGpdRqucQ8D4NykLQ5gGt1iBXVoJwfE");
  });
});

const SETTINGS = Keypair.generate().publicKey;
const MEMBER = Keypair.generate().publicKey;
const OTHER = Keypair.generate().publicKey;
const VAULT = smartAccountVault(SETTINGS, 0);
/**
 * Static keys: 0 the member (fee payer, the one signer), 1 the settings, 2 the vault, 3 another
 * account (1 to 3 writable), 4 the smart-account program, 5 ComputeBudget, 6 System (readonly); 7 is
 * the first account of the lookup table when one is given.
 */
const KEYS = [
  MEMBER,
  SETTINGS,
  VAULT,
  OTHER,
  SMART_ACCOUNT_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
];
/** The execute's accounts: settings, program, the member, then the remaining: System, vault, other, ComputeBudget. */
const ACCOUNTS = [1, 4, 0, 6, 2, 3, 5];
const LIMIT_DATA = [2, 0x40, 0x42, 0x0f, 0];

interface InnerIx {
  program: number;
  accounts: number[];
  data: number[];
}
/** A payload: the count (the instructions' own unless given), then each instruction. */
function payload(ixs: InnerIx[], count = ixs.length): number[] {
  const out = [count];
  for (const ix of ixs) {
    out.push(
      ix.program,
      ix.accounts.length,
      ...ix.accounts,
      ix.data.length & 0xff,
      ix.data.length >> 8,
      ...ix.data,
    );
  }
  return out;
}
/** executeTransactionSyncV2 data around `body`: the payload length is the body's unless given. */
function executeData(
  body: number[],
  o: { accountIndex?: number; numSigners?: number; padding?: number; length?: number } = {},
): number[] {
  const length = Buffer.alloc(4);
  length.writeUInt32LE(o.length ?? body.length);
  return [
    ...EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR,
    o.accountIndex ?? 0,
    o.numSigners ?? 1,
    o.padding ?? 0,
    ...length,
    ...body,
  ];
}
/** System instruction on the vault and the other account, then a compute-unit limit: the honest inner pair. */
const HONEST = payload([
  { program: 0, accounts: [1, 2], data: [2, 0, 0, 0] },
  { program: 3, accounts: [], data: LIMIT_DATA },
]);

/**
 * The message's decoding: a compute-unit limit at position 0, then the smart-account instruction(s)
 * given (`data` and `accounts` of each); `lookup`: one lookup table of one writable account (index 7).
 */
function decoded(calls: { data: number[]; accounts?: number[] }[], lookup = false): DecodedFillTx {
  const message = new MessageV0({
    header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 3 },
    staticAccountKeys: KEYS,
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    compiledInstructions: [
      { programIdIndex: 5, accountKeyIndexes: [], data: Uint8Array.from(LIMIT_DATA) },
      ...calls.map((c) => ({
        programIdIndex: 4,
        accountKeyIndexes: c.accounts ?? ACCOUNTS,
        data: Uint8Array.from(c.data),
      })),
    ],
    addressTableLookups: lookup
      ? [{ accountKey: Keypair.generate().publicKey, writableIndexes: [0], readonlyIndexes: [] }]
      : [],
  });
  const tx = new VersionedTransaction(message);
  const r = decodeFillTransaction(tx);
  if (!r.ok) throw new Error(r.problem);
  return r.decoded;
}
const envelope = (data: number[], accounts?: number[], lookup = false): EnvelopeDecode =>
  decodeSmartAccountEnvelope(decoded([{ data, ...(accounts ? { accounts } : {}) }], lookup));
const problem = (data: number[], accounts?: number[], lookup = false): string => {
  const e = envelope(data, accounts, lookup);
  return e.kind === "malformed" ? e.problem : e.kind;
};

describe("decodeSmartAccountEnvelope: a well-formed envelope", () => {
  it("names the execute's position, header bytes, settings, program, members, remaining accounts and vault", () => {
    const e = envelope(executeData(HONEST));
    expect(e.kind).toBe("envelope");
    if (e.kind !== "envelope") return;
    const env = e.envelope;
    expect([env.position, env.accountIndex, env.numSigners, env.padding]).toEqual([1, 0, 1, 0]);
    expect(env.settings).toEqual({ index: 1, key: SETTINGS, signer: false, writable: true });
    expect(env.program).toEqual({ index: 4, key: SMART_ACCOUNT_PROGRAM_ID, signer: false, writable: false });
    expect(env.members).toEqual([{ index: 0, key: MEMBER, signer: true, writable: true }]);
    expect(env.remaining.map((a) => a.index)).toEqual([6, 2, 3, 5]);
    expect(env.vault.equals(VAULT)).toBe(true);
  });

  it("reads the account index and padding bytes as given, and derives the vault of that index", () => {
    const e = envelope(executeData(HONEST, { accountIndex: 3, padding: 7 }));
    expect(e.kind === "envelope" && [e.envelope.accountIndex, e.envelope.padding]).toEqual([3, 7]);
    expect(e.kind === "envelope" && e.envelope.vault.equals(smartAccountVault(SETTINGS, 3))).toBe(true);
  });

  it("decodes the inner instructions as a plain fill's, at the execute's position, the vault a signer by CPI", () => {
    const e = envelope(executeData(HONEST));
    if (e.kind !== "envelope") throw new Error(e.kind);
    const [transfer, limit] = e.envelope.inner;
    expect(e.envelope.inner).toHaveLength(2);
    expect(transfer).toMatchObject({ kind: "other", position: 1, inner: 0, programIndex: 6 });
    expect(transfer?.programId.equals(SYSTEM_PROGRAM_ID)).toBe(true);
    expect([...(transfer?.data ?? [])]).toEqual([2, 0, 0, 0]);
    expect(transfer?.accounts).toEqual([
      { index: 2, key: VAULT, signer: true, writable: true },
      { index: 3, key: OTHER, signer: false, writable: true },
    ]);
    expect(limit).toMatchObject({
      kind: "computeUnitLimit",
      units: 1_000_000,
      position: 1,
      inner: 1,
      programIndex: 5,
      accounts: [],
    });
  });

  it("gives the members by num_signers, the accounts after them the remaining ones", () => {
    const e = envelope(executeData(payload([{ program: 0, accounts: [0], data: [] }]), { numSigners: 2 }));
    if (e.kind !== "envelope") throw new Error(e.kind);
    expect(e.envelope.members.map((a) => a.index)).toEqual([0, 6]);
    expect(e.envelope.remaining.map((a) => a.index)).toEqual([2, 3, 5]);
    expect(e.envelope.inner[0]?.accounts.map((a) => [a.index, a.signer])).toEqual([[2, true]]);
  });

  it("reads an instruction with no data that ends the payload", () => {
    const e = envelope(executeData(payload([{ program: 0, accounts: [2], data: [] }])));
    expect(e.kind === "envelope" && e.envelope.inner.map((i) => [...i.data])).toEqual([[]]);
  });

  it("reads a payload of no instruction", () => {
    const e = envelope(executeData([0]));
    expect(e.kind === "envelope" && e.envelope.inner).toEqual([]);
  });

  it("keeps a lookup-table account inside the payload as it is, not as the vault", () => {
    const e = envelope(
      executeData(payload([{ program: 0, accounts: [4], data: [] }])),
      [...ACCOUNTS, 7],
      true,
    );
    if (e.kind !== "envelope") throw new Error(e.kind);
    expect(e.envelope.inner[0]?.accounts).toEqual([
      { index: 7, key: undefined, signer: false, writable: true },
    ]);
  });

  it("calls a message without a smart-account instruction plain", () => {
    expect(decodeSmartAccountEnvelope(decoded([]))).toEqual({ kind: "plain" });
  });
});

describe("decodeSmartAccountEnvelope: malformed envelopes, with their words", () => {
  it("refuses two smart-account instructions, counting them", () => {
    const data = executeData(HONEST);
    expect(decodeSmartAccountEnvelope(decoded([{ data }, { data }]))).toEqual({
      kind: "malformed",
      problem: "the message calls the smart-account program 2 times",
    });
  });

  it.each([
    ["a discriminator whose first byte differs", [EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR[0]! ^ 1]],
    [
      "a discriminator whose last byte differs",
      [...EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR.slice(0, 7), 0],
    ],
  ])("refuses %s as not executeTransactionSyncV2", (_name, head) => {
    const data = executeData(HONEST);
    data.splice(0, head.length, ...head);
    expect(problem(data)).toBe("the smart-account instruction is not executeTransactionSyncV2");
  });

  it("refuses data shorter than the discriminator, and empty data, as not executeTransactionSyncV2", () => {
    expect(problem([...EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR.slice(0, 7)])).toBe(
      "the smart-account instruction is not executeTransactionSyncV2",
    );
    expect(problem([])).toBe("the smart-account instruction is not executeTransactionSyncV2");
  });

  it("reads the bare discriminator as an execute shorter than its header", () => {
    expect(problem([...EXECUTE_TRANSACTION_SYNC_V2_DISCRIMINATOR])).toBe(
      "executeTransactionSyncV2 data is 8 bytes, shorter than its header",
    );
  });

  it("refuses data one byte shorter than the execute's header", () => {
    expect(problem(executeData([]).slice(0, 14))).toBe(
      "executeTransactionSyncV2 data is 14 bytes, shorter than its header",
    );
  });

  it("refuses a header with no payload after it as an empty payload", () => {
    expect(problem(executeData([]))).toBe("the smart-account payload is empty");
  });

  it("refuses a payload length one more or one less than the bytes that follow", () => {
    expect(problem(executeData(HONEST, { length: HONEST.length + 1 }))).toBe(
      `executeTransactionSyncV2 says its payload is ${HONEST.length + 1} bytes, but ${HONEST.length} follow`,
    );
    expect(problem(executeData(HONEST, { length: HONEST.length - 1 }))).toBe(
      `executeTransactionSyncV2 says its payload is ${HONEST.length - 1} bytes, but ${HONEST.length} follow`,
    );
  });

  it("refuses fewer accounts than the settings, the program and num_signers members, and takes exactly that many", () => {
    const empty = executeData([0], { numSigners: 2 });
    expect(problem(empty, [1, 4, 0])).toBe(
      "executeTransactionSyncV2 names 3 accounts, fewer than its settings, program and 2 members",
    );
    expect(problem(empty, [1, 4, 0, 6])).toBe("envelope");
  });

  it("refuses settings from a lookup table", () => {
    expect(problem(executeData(HONEST), [7, 4, 0, 6, 2, 3, 5], true)).toBe(
      "the smart account's settings come from a lookup table",
    );
  });

  it("refuses an instruction cut short before its program index, its account count or its data length", () => {
    expect(problem(executeData([1]))).toBe("inner instruction 0 is cut short");
    expect(problem(executeData([1, 0]))).toBe("inner instruction 0 is cut short");
    expect(problem(executeData([1, 0, 0]))).toBe("inner instruction 0 is cut short");
    expect(problem(executeData([1, 0, 0, 0]))).toBe("inner instruction 0 is cut short");
    expect(problem(executeData([1, 0, 2, 1, 2, 0]))).toBe("inner instruction 0 is cut short");
  });

  it("refuses a second instruction the count announces but the payload lacks, naming it", () => {
    const one = payload([{ program: 0, accounts: [], data: [] }], 2);
    expect(problem(executeData(one))).toBe("inner instruction 1 is cut short");
  });

  it("refuses data one byte shorter than its length says", () => {
    const ix = payload([{ program: 0, accounts: [], data: [1, 2, 3] }]);
    expect(problem(executeData(ix.slice(0, -1)))).toBe("inner instruction 0's data is cut short");
  });

  it("refuses a program index past the remaining accounts, or onto a lookup-table account", () => {
    expect(problem(executeData(payload([{ program: 4, accounts: [], data: [] }])))).toBe(
      "inner instruction 0 names program index 4, not a remaining account",
    );
    expect(
      problem(executeData(payload([{ program: 4, accounts: [], data: [] }])), [...ACCOUNTS, 7], true),
    ).toBe("inner instruction 0 names program index 4, not a remaining account");
  });

  it("refuses an account index past the remaining accounts, naming it", () => {
    expect(problem(executeData(payload([{ program: 0, accounts: [1, 4], data: [] }])))).toBe(
      "inner instruction 0 names account index 4, not a remaining account",
    );
  });

  it("refuses bytes after the payload's instructions, counting them", () => {
    expect(problem(executeData([...HONEST, 0, 0]))).toBe(
      "the smart-account payload has 2 bytes after its instructions",
    );
  });
});

/**
 * How src/program/decode.ts names a fill transaction's parts and which unreadable messages it reports
 * as problems (with the problem's words: the validator passes them on to the operator). Instructions
 * are classified one by one through `classifyInstruction`; whole messages are built with MessageV0.
 */
import { Keypair, MessageV0, type PublicKey, VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import {
  type AccountRef,
  classifyInstruction,
  decodeFillTransaction,
  describeAccount,
  deserializeFillTransaction,
  type InstructionBase,
} from "../../src/program/decode.ts";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  encodeFillData,
  FILL_DISCRIMINATOR,
  LIGHTHOUSE_PROGRAM_ID,
  ORDER_ENGINE_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
} from "../../src/program/layout.ts";
import { acceptanceFixtureBytes } from "../fill/fixture.ts";

const refs = (n: number): AccountRef[] =>
  Array.from({ length: n }, (_, index) => ({
    index,
    key: Keypair.generate().publicKey,
    signer: false,
    writable: false,
  }));
const base = (
  programId: PublicKey,
  data: number[] | Uint8Array,
  accounts: AccountRef[] = [],
): InstructionBase => ({
  position: 0,
  programIndex: 0,
  programId,
  accounts,
  data: Uint8Array.from(data),
});
const FILL_DATA = encodeFillData({
  inputAmount: 5n,
  outputAmount: 7n,
  expireAt: 100n,
  feeBps: 10,
  exactOut: false,
});

describe("classifyInstruction: ComputeBudget", () => {
  it("reads a unit limit only from tag 2 with exactly 4 bytes after it", () => {
    const ix = classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, [2, 0x40, 0x42, 0x0f, 0]));
    expect(ix).toMatchObject({ kind: "computeUnitLimit", units: 1_000_000 });
    expect(classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, [2, 1, 0, 0, 0, 0]))).toMatchObject({
      kind: "computeBudgetOther",
      tag: 2,
    });
  });

  it("reads a unit price only from tag 3 with exactly 8 bytes after it", () => {
    const ix = classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, [3, 0x10, 0x27, 0, 0, 0, 0, 0, 1]));
    expect(ix).toMatchObject({ kind: "computeUnitPrice", microLamports: (1n << 56n) + 10_000n });
    expect(classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, [3, 1, 0, 0, 0, 0, 0, 0]))).toMatchObject({
      kind: "computeBudgetOther",
      tag: 3,
    });
    expect(classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, [2, 1, 0, 0, 0, 0, 0, 0, 0]))).toMatchObject({
      kind: "computeBudgetOther",
      tag: 2,
    });
  });

  it("names any other ComputeBudget instruction by its tag, undefined for empty data", () => {
    expect(classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, [1, 0, 0, 0, 0]))).toMatchObject({
      kind: "computeBudgetOther",
      tag: 1,
    });
    const empty = classifyInstruction(base(COMPUTE_BUDGET_PROGRAM_ID, []));
    expect(empty.kind === "computeBudgetOther" && empty.tag).toBeUndefined();
  });
});

describe("classifyInstruction: Associated Token", () => {
  it("names the six accounts of a CreateIdempotent in order", () => {
    const a = refs(6);
    const ix = classifyInstruction(base(ASSOCIATED_TOKEN_PROGRAM_ID, [1], a));
    expect(ix.kind).toBe("ataCreateIdempotent");
    expect(ix.kind === "ataCreateIdempotent" && ix.named).toEqual({
      payer: a[0],
      ata: a[1],
      owner: a[2],
      mint: a[3],
      systemProgram: a[4],
      tokenProgram: a[5],
    });
  });

  it.each([5, 7])("leaves a CreateIdempotent with %i accounts unnamed", (n) => {
    const ix = classifyInstruction(base(ASSOCIATED_TOKEN_PROGRAM_ID, [1], refs(n)));
    expect(ix.kind).toBe("ataCreateIdempotent");
    expect(ix.kind === "ataCreateIdempotent" && ix.named).toBeUndefined();
  });

  it.each([[[]], [[0]], [[2]], [[1, 0]]])("calls data %j another ATA instruction", (data) => {
    expect(classifyInstruction(base(ASSOCIATED_TOKEN_PROGRAM_ID, data, refs(6))).kind).toBe("ataOther");
  });
});

describe("classifyInstruction: order engine", () => {
  it("names the eleven fill accounts in the contract's order, without the wSOL account", () => {
    const a = refs(11);
    const ix = classifyInstruction(base(ORDER_ENGINE_PROGRAM_ID, FILL_DATA, a));
    expect(ix.kind).toBe("fill");
    if (ix.kind !== "fill") return;
    // Strict: no temporaryWsolTokenAccount key at all, not one set to undefined.
    expect(ix.named).toStrictEqual({
      taker: a[0],
      maker: a[1],
      takerInputTokenAccount: a[2],
      makerInputTokenAccount: a[3],
      takerOutputTokenAccount: a[4],
      makerOutputTokenAccount: a[5],
      inputMint: a[6],
      inputTokenProgram: a[7],
      outputMint: a[8],
      outputTokenProgram: a[9],
      systemProgram: a[10],
    });
    expect(ix.args).toEqual({
      inputAmount: 5n,
      outputAmount: 7n,
      expireAt: 100n,
      feeBps: 10,
      exactOut: false,
    });
    expect(ix.dataProblem).toBeUndefined();
  });

  it("names a 12th account as the temporary wSOL account", () => {
    const a = refs(12);
    const ix = classifyInstruction(base(ORDER_ENGINE_PROGRAM_ID, FILL_DATA, a));
    expect(ix.kind === "fill" && ix.named?.temporaryWsolTokenAccount).toBe(a[11]);
  });

  it.each([10, 13])("leaves a fill with %i accounts unnamed", (n) => {
    const ix = classifyInstruction(base(ORDER_ENGINE_PROGRAM_ID, FILL_DATA, refs(n)));
    expect(ix.kind).toBe("fill");
    expect(ix.kind === "fill" && ix.named).toBeUndefined();
  });

  it("calls the bare discriminator a fill whose data problem gives its length", () => {
    const ix = classifyInstruction(base(ORDER_ENGINE_PROGRAM_ID, FILL_DISCRIMINATOR, refs(11)));
    expect(ix.kind).toBe("fill");
    if (ix.kind !== "fill") return;
    expect(ix.args).toBeUndefined();
    expect(ix.dataProblem).toBe("the fill data is 8 bytes, a fill is exactly 35");
  });

  it("calls data that does not start with the fill discriminator another order-engine instruction", () => {
    const other = Uint8Array.from(FILL_DATA);
    other[7] = (other[7] ?? 0) ^ 1;
    expect(classifyInstruction(base(ORDER_ENGINE_PROGRAM_ID, other, refs(11))).kind).toBe("orderEngineOther");
    expect(classifyInstruction(base(ORDER_ENGINE_PROGRAM_ID, FILL_DISCRIMINATOR.slice(0, 7))).kind).toBe(
      "orderEngineOther",
    );
  });
});

describe("classifyInstruction: Lighthouse and the rest", () => {
  it("gives a Lighthouse instruction's first byte as its discriminator", () => {
    expect(classifyInstruction(base(LIGHTHOUSE_PROGRAM_ID, [9, 1, 2]))).toMatchObject({
      kind: "lighthouse",
      discriminator: 9,
    });
    const empty = classifyInstruction(base(LIGHTHOUSE_PROGRAM_ID, []));
    expect(empty.kind === "lighthouse" && empty.discriminator).toBeUndefined();
  });

  it("calls any other program's instruction other", () => {
    expect(classifyInstruction(base(SYSTEM_PROGRAM_ID, [2, 0, 0, 0])).kind).toBe("other");
  });
});

describe("describeAccount", () => {
  it("gives a static account's key and a lookup-table account's index", () => {
    const [a] = refs(1);
    expect(describeAccount(a!)).toBe(a!.key!.toBase58());
    expect(describeAccount({ index: 14, key: undefined, signer: false, writable: true })).toBe(
      "lookup-table account #14",
    );
  });
});

describe("deserializeFillTransaction problems", () => {
  it("names an empty body, garbage and trailing bytes", () => {
    expect(deserializeFillTransaction(new Uint8Array())).toEqual({
      ok: false,
      problem: "the transaction is empty",
    });
    expect(deserializeFillTransaction("")).toEqual({ ok: false, problem: "the transaction is empty" });
    const garbage = deserializeFillTransaction(Buffer.from([1, 2, 3]));
    expect(!garbage.ok && garbage.problem).toMatch(/^the transaction bytes do not parse: ./);
    const trailing = deserializeFillTransaction(
      Buffer.concat([acceptanceFixtureBytes(), Buffer.from([0, 0])]),
    );
    expect(trailing).toEqual({ ok: false, problem: "the transaction has 2 unexpected trailing bytes" });
  });

  it("refuses a transaction larger than a packet: its bytes parse but do not serialize again", () => {
    // A v0 message of one signer and one instruction carrying 1,500 bytes of data (over 1,232 in all).
    const message = Buffer.concat([
      Buffer.from([0x80, 1, 0, 1, 2]),
      Keypair.generate().publicKey.toBuffer(),
      Keypair.generate().publicKey.toBuffer(),
      Buffer.alloc(32, 9),
      Buffer.from([1, 1, 0, 0xdc, 0x0b]), // one instruction: program 1, no account, 1,500 (shortvec) bytes
      Buffer.alloc(1_500, 7),
      Buffer.from([0]),
    ]);
    const wire = Buffer.concat([Buffer.from([1]), Buffer.alloc(64), message]);
    expect(VersionedTransaction.deserialize(wire).message.compiledInstructions[0]?.data).toHaveLength(1_500);
    const r = deserializeFillTransaction(wire);
    expect(!r.ok && r.problem).toMatch(/^the transaction does not re-serialize: ./);
  });

  it("reads base64 and bytes alike", () => {
    const bytes = acceptanceFixtureBytes();
    const a = deserializeFillTransaction(bytes.toString("base64"));
    const b = deserializeFillTransaction(bytes);
    expect(a.ok && Buffer.from(a.tx.serialize()).equals(bytes)).toBe(true);
    expect(b.ok && Buffer.from(b.tx.serialize()).equals(bytes)).toBe(true);
  });
});

/** A message of `keys` fresh static keys; instruction 0 calls key `program` with `accounts`. */
function tx(opts: {
  keys: number;
  header: MessageV0["header"];
  accounts?: number[];
  program?: number;
  lookups?: MessageV0["addressTableLookups"];
  extra?: MessageV0["compiledInstructions"];
  staticKeys?: PublicKey[];
  signatures?: number;
}): VersionedTransaction {
  const staticAccountKeys =
    opts.staticKeys ?? Array.from({ length: opts.keys }, () => Keypair.generate().publicKey);
  const t = new VersionedTransaction(
    new MessageV0({
      header: opts.header,
      staticAccountKeys,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
      compiledInstructions: [
        {
          programIdIndex: opts.program ?? opts.keys - 1,
          accountKeyIndexes: opts.accounts ?? [],
          data: new Uint8Array(),
        },
        ...(opts.extra ?? []),
      ],
      addressTableLookups: opts.lookups ?? [],
    }),
  );
  t.signatures = Array.from(
    { length: opts.signatures ?? opts.header.numRequiredSignatures },
    () => new Uint8Array(64),
  );
  return t;
}
const header = (
  numRequiredSignatures: number,
  numReadonlySignedAccounts: number,
  numReadonlyUnsignedAccounts: number,
) => ({
  numRequiredSignatures,
  numReadonlySignedAccounts,
  numReadonlyUnsignedAccounts,
});
const problem = (t: VersionedTransaction) => {
  const r = decodeFillTransaction(t);
  return r.ok ? "ok" : r.problem;
};

describe("decodeFillTransaction: the header against the keys", () => {
  it("accepts every key a signer, and signers plus readonly unsigned filling the keys exactly", () => {
    expect(problem(tx({ keys: 3, header: header(3, 0, 0) }))).toBe("ok");
    expect(problem(tx({ keys: 3, header: header(1, 0, 2) }))).toBe("ok");
  });

  it("refuses more signers than keys", () => {
    expect(problem(tx({ keys: 3, header: header(4, 0, 0), program: 2 }))).toBe(
      "the header requires more signers than there are account keys",
    );
  });

  it("refuses more signers and readonly unsigned than keys", () => {
    expect(problem(tx({ keys: 3, header: header(1, 0, 3) }))).toBe(
      "the header counts more accounts than there are account keys",
    );
  });

  it("refuses a header whose every signer is readonly, and accepts one writable signer", () => {
    expect(problem(tx({ keys: 3, header: header(2, 2, 0) }))).toBe(
      "the header marks every signer readonly, the fee payer included",
    );
    expect(problem(tx({ keys: 3, header: header(2, 1, 0) }))).toBe("ok");
  });

  it("accepts a message with no signer at all", () => {
    expect(problem(tx({ keys: 3, header: header(0, 0, 0) }))).toBe("ok");
  });

  it("names a key that appears twice", () => {
    const k = Keypair.generate().publicKey;
    const other = Keypair.generate().publicKey;
    expect(problem(tx({ keys: 3, header: header(1, 0, 0), staticKeys: [other, k, k] }))).toBe(
      `account key ${k.toBase58()} appears twice`,
    );
  });

  it("names the signature count against the header's", () => {
    expect(problem(tx({ keys: 3, header: header(1, 0, 0), signatures: 0 }))).toBe(
      "the transaction carries 0 signatures but its message requires 1",
    );
  });
});

describe("decodeFillTransaction: account indexes", () => {
  const lookups = [
    { accountKey: Keypair.generate().publicKey, writableIndexes: [0, 1], readonlyIndexes: [2, 3, 4] },
  ];

  it("accepts an index into a lookup table's accounts (3 keys + 2 writable + 3 readonly: 0 to 7)", () => {
    const r = decodeFillTransaction(tx({ keys: 3, header: header(1, 0, 0), accounts: [0, 7], lookups }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.decoded.addressTableLookups).toBe(1);
    const [, fromTable] = r.decoded.instructions[0]!.accounts;
    expect(fromTable).toEqual({ index: 7, key: undefined, signer: false, writable: false });
  });

  it("refuses the first index past the static keys and the tables' accounts", () => {
    expect(problem(tx({ keys: 3, header: header(1, 0, 0), accounts: [0, 8], lookups }))).toBe(
      "instruction 0 names account index 8, not a key",
    );
    expect(problem(tx({ keys: 3, header: header(1, 0, 0), accounts: [3] }))).toBe(
      "instruction 0 names account index 3, not a key",
    );
  });

  it("refuses a program index into a lookup table: programs must be static keys", () => {
    expect(problem(tx({ keys: 3, header: header(1, 0, 0), program: 3, lookups }))).toBe(
      "instruction 0 names program index 3, not a key",
    );
  });

  it("gives each account its index, signer and writable flags from the header", () => {
    const r = decodeFillTransaction(
      tx({ keys: 4, header: header(2, 1, 1), accounts: [0, 1, 2, 3], program: 3 }),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const ix = r.decoded.instructions[0]!;
    expect(ix.accounts.map(({ index, signer, writable }) => ({ index, signer, writable }))).toEqual([
      { index: 0, signer: true, writable: true },
      { index: 1, signer: true, writable: false },
      { index: 2, signer: false, writable: true },
      { index: 3, signer: false, writable: false },
    ]);
    expect(ix.accounts[2]!.key?.equals(r.decoded.staticKeys[2]!)).toBe(true);
  });
});

describe("decodeFillTransaction: grouping", () => {
  it("groups instructions by kind, keeping their message positions", () => {
    const keys = [
      Keypair.generate().publicKey,
      COMPUTE_BUDGET_PROGRAM_ID,
      LIGHTHOUSE_PROGRAM_ID,
      SYSTEM_PROGRAM_ID,
      ASSOCIATED_TOKEN_PROGRAM_ID,
      ORDER_ENGINE_PROGRAM_ID,
    ];
    const ci = (programIdIndex: number, data: number[] | Uint8Array, accountKeyIndexes: number[] = []) => ({
      programIdIndex,
      accountKeyIndexes,
      data: Uint8Array.from(data),
    });
    const t = tx({
      keys: 6,
      staticKeys: keys,
      header: header(1, 0, 5),
      program: 1,
      extra: [
        ci(2, [5]),
        ci(3, [2, 0, 0, 0]),
        ci(4, [1], [0, 0, 0, 0, 0, 0]),
        ci(5, FILL_DATA, Array(11).fill(0)),
        ci(5, [1, 2, 3]),
        ci(4, [0]),
        ci(1, [3, 1, 0, 0, 0, 0, 0, 0, 0]),
      ],
    });
    const r = decodeFillTransaction(t);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const d = r.decoded;
    expect(d.instructions.map((i) => [i.position, i.kind, i.programIndex])).toEqual([
      [0, "computeBudgetOther", 1],
      [1, "lighthouse", 2],
      [2, "other", 3],
      [3, "ataCreateIdempotent", 4],
      [4, "fill", 5],
      [5, "orderEngineOther", 5],
      [6, "ataOther", 4],
      [7, "computeUnitPrice", 1],
    ]);
    expect(d.computeBudget.map((i) => i.position)).toEqual([0, 7]);
    expect(d.lighthouse.map((i) => i.position)).toEqual([1]);
    expect(d.ataCreations.map((i) => i.position)).toEqual([3]);
    expect(d.fills.map((i) => i.position)).toEqual([4]);
    expect(d.others.map((i) => i.position)).toEqual([2, 5, 6]);
    expect([...d.instructions[2]!.data]).toEqual([2, 0, 0, 0]);
    expect(d.version).toBe(0);
    expect(d.signatures).toHaveLength(1);
    expect(d.recentBlockhash).toBe(t.message.recentBlockhash);
    expect(d.addressTableLookups).toBe(0);
  });
});

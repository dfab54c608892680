/**
 * The rebalancer's shape check (src/rebalance/shape.ts) on its own, as attacks on the order's
 * transaction: each refused by its rule, with its code and the detail the operator's log shows, and
 * the honest shapes of router_2 (one order-engine fill) and of a router whose swap programs are
 * configured accepted. test/rebalance/hostile-order-api.security.test.ts runs the same rules end to end
 * against a hostile order API.
 */
import {
  AccountLayout,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  AuthorityType,
  createApproveCheckedInstruction,
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createSetAuthorityInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import {
  Keypair,
  MessageV0,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import {
  fillInstruction,
  setComputeUnitLimitInstruction,
  setComputeUnitPriceInstruction,
} from "../../sandbox/fill/builder.ts";
import type { AccountSnapshot } from "../../src/chain/interface.ts";
import type { SwapOrder } from "../../src/operator-api/wire.ts";
import { SYSTEM_PROGRAM_ID, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { checkShape, type ShapeResult } from "../../src/rebalance/shape.ts";
import { MINT, testConfig } from "../support/config.ts";

const AMM = Keypair.generate().publicKey;
const config = testConfig({}, (f: FileConfig) => ({
  ...f,
  rebalance: { ...f.rebalance, swapPrograms: { router_1: [{ name: "amm", programId: AMM.toBase58() }] } },
}));
const me = Keypair.generate().publicKey;
const cp = Keypair.generate().publicKey;
const stranger = Keypair.generate().publicKey;
const [USDC, JUP, USDT] = [new PublicKey(MINT.USDC), new PublicKey(MINT.JUP), new PublicKey(MINT.USDT)];
const ata = (mint: PublicKey, owner: PublicKey, program = TOKEN_PROGRAM_ID) =>
  getAssociatedTokenAddressSync(mint, owner, true, program);
const ATA_PROGRAM = ASSOCIATED_TOKEN_PROGRAM_ID;
const blockhash = Keypair.generate().publicKey.toBase58();

/** The order: the maker pays 1,000 USDC units for 500 JUP units from `cp`. */
function order(over: Partial<SwapOrder> = {}): SwapOrder {
  return {
    router: "router_2",
    maker: cp.toBase58(),
    inputMint: MINT.USDC,
    outputMint: MINT.JUP,
    inAmount: "1000",
    outAmount: "500",
    ...over,
  } as SwapOrder;
}

/** The order-engine fill with the maker as its taker and `cp` as its maker. */
function fill(
  over: {
    taker?: PublicKey;
    maker?: PublicKey;
    in?: PublicKey;
    out?: PublicKey;
    inAmount?: bigint;
    outAmount?: bigint;
  } = {},
) {
  return fillInstruction({
    maker: over.maker ?? cp,
    taker: over.taker ?? me,
    inputMint: over.in ?? USDC,
    outputMint: over.out ?? JUP,
    inputTokenProgram: TOKEN_PROGRAM_ID,
    outputTokenProgram: TOKEN_PROGRAM_ID,
    inputAmount: over.inAmount ?? 1000n,
    outputAmount: over.outAmount ?? 500n,
    expireAt: 2_000_000_000n,
    feeBps: 0,
    exactOut: false,
    computeUnitLimit: 0,
    computeUnitPrice: 0n,
    recentBlockhash: blockhash,
    createTakerOutputAta: false,
  });
}

const budget = () => [setComputeUnitPriceInstruction(1n), setComputeUnitLimitInstruction(200_000)];
const ammCall = () =>
  new TransactionInstruction({
    programId: AMM,
    keys: [
      { pubkey: ata(USDC, me), isSigner: false, isWritable: true },
      { pubkey: ata(JUP, me), isSigner: false, isWritable: true },
    ],
    data: Buffer.from([1]),
  });
const createAta = (payer: PublicKey, owner: PublicKey, mint: PublicKey) =>
  createAssociatedTokenAccountIdempotentInstruction(payer, ata(mint, owner), owner, mint);

const txOf = (ixs: TransactionInstruction[], payer = me) =>
  new VersionedTransaction(
    new TransactionMessage({
      payerKey: payer,
      recentBlockhash: blockhash,
      instructions: ixs,
    }).compileToV0Message(),
  );

/** A token account of `mint` owned by `owner`, with a delegate and close authority if given. */
function tokenAccount(
  mint: PublicKey,
  owner: PublicKey,
  delegate?: PublicKey,
  close?: PublicKey,
): AccountSnapshot {
  const data = Buffer.alloc(AccountLayout.span);
  AccountLayout.encode(
    {
      mint,
      owner,
      amount: 5n,
      delegateOption: delegate ? 1 : 0,
      delegate: delegate ?? PublicKey.default,
      state: 1,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: close ? 1 : 0,
      closeAuthority: close ?? PublicKey.default,
    },
    data,
  );
  return {
    owner: TOKEN_PROGRAM_ID,
    lamports: 2_039_280n,
    data,
    executable: false,
  } as unknown as AccountSnapshot;
}

function judge(
  tx: VersionedTransaction,
  o: SwapOrder = order(),
  accounts: (key: PublicKey) => AccountSnapshot | null = () => null,
): ShapeResult {
  return checkShape({
    tx,
    order: o,
    maker: me,
    config,
    accounts: tx.message.staticAccountKeys.map(accounts),
  });
}
const no = (code: string, context: string) => ({ ok: false, code, context });
/** The position of the instruction running `program` in the compiled message. */
const where = (tx: VersionedTransaction, program: PublicKey, nth = 0) => {
  const m = tx.message;
  const positions = m.compiledInstructions.flatMap((ix, i) =>
    m.staticAccountKeys[ix.programIdIndex]?.equals(program) ? [i] : [],
  );
  return `instruction ${positions[nth]} (${program.toBase58()})`;
};

describe("checkShape: the honest shapes", () => {
  it("accepts router_2's one order-engine fill as ordered, with the maker's own ATA created", () => {
    expect(judge(txOf([...budget(), createAta(me, me, JUP), fill()]))).toEqual({ ok: true });
  });
  it("accepts the fill taking exactly inAmount and delivering exactly outAmount, or better for the maker", () => {
    expect(judge(txOf([fill({ inAmount: 999n, outAmount: 501n })]))).toEqual({ ok: true });
  });
  it("accepts a router_1 route through its configured swap program, and the maker's token-2022 ATA of a traded mint", () => {
    const ata2022 = createAssociatedTokenAccountIdempotentInstruction(
      me,
      ata(JUP, me, TOKEN_2022_PROGRAM_ID),
      me,
      JUP,
      TOKEN_2022_PROGRAM_ID,
    );
    expect(judge(txOf([...budget(), ata2022, ammCall()]), order({ router: "router_1" }))).toEqual({
      ok: true,
    });
  });
  it("accepts a stranger creating its own ATA (the maker neither pays nor owns it)", () => {
    const tx = txOf([createAta(stranger, stranger, USDT), fill()]);
    expect(judge(tx)).toEqual({ ok: true });
  });
});

describe("checkShape: refused", () => {
  it("a message it cannot decode (MALFORMED_TRANSACTION)", () => {
    const m = txOf([fill()]).message as MessageV0;
    const broken = new MessageV0({ ...m, header: { ...m.header, numRequiredSignatures: 40 } });
    expect(judge(new VersionedTransaction(broken))).toMatchObject({
      ok: false,
      code: "MALFORMED_TRANSACTION",
    });
  });

  it("accounts loaded from lookup tables (LOOKUP_TABLES_NOT_SUPPORTED)", () => {
    const m = txOf([fill()]).message as MessageV0;
    const withTable = new MessageV0({
      header: m.header,
      staticAccountKeys: m.staticAccountKeys,
      recentBlockhash: m.recentBlockhash,
      compiledInstructions: m.compiledInstructions,
      addressTableLookups: [{ accountKey: stranger, writableIndexes: [], readonlyIndexes: [0] }],
    });
    expect(judge(new VersionedTransaction(withTable))).toEqual(
      no(
        "LOOKUP_TABLES_NOT_SUPPORTED",
        "the transaction loads accounts from lookup tables, which these checks cannot watch",
      ),
    );
  });

  it("a transaction the maker does not sign, named or not (MAKER_NOT_SIGNER)", () => {
    const f = fill();
    const unsigned = new TransactionInstruction({
      ...f,
      keys: f.keys.map((k, i) => (i === 0 ? { ...k, isSigner: false } : k)),
    });
    const notSigner = no("REBALANCE_MAKER_NOT_SIGNER", "the maker is not a signer of this transaction");
    expect(judge(txOf([unsigned], cp))).toEqual(notSigner);
    expect(judge(txOf([fill({ taker: stranger })], stranger))).toEqual(notSigner);
  });

  it("System Assign, AssignWithSeed, Allocate and AllocateWithSeed (WALLET_OWNER_CHANGED), a 4-byte Assign too", () => {
    const system = (tag: number, length = 4, keys = [me]) => {
      const data = Buffer.alloc(length);
      data.writeUInt32LE(tag, 0);
      return new TransactionInstruction({
        programId: SYSTEM_PROGRAM_ID,
        keys: keys.map((pubkey) => ({ pubkey, isSigner: true, isWritable: true })),
        data,
      });
    };
    for (const [tag, name] of [
      [1, "Assign"],
      [10, "AssignWithSeed"],
      [8, "Allocate"],
      [9, "AllocateWithSeed"],
    ] as const) {
      const tx = txOf([fill(), system(tag, 40)]);
      expect(judge(tx)).toEqual(
        no(
          "REBALANCE_WALLET_OWNER_CHANGED",
          `${where(tx, SYSTEM_PROGRAM_ID)} is System ${name} of ${me.toBase58()}`,
        ),
      );
    }
    const short = txOf([fill(), system(1)]);
    expect(judge(short)).toMatchObject({ code: "REBALANCE_WALLET_OWNER_CHANGED" });
    const nobody = txOf([fill(), system(1, 4, [])]);
    expect(judge(nobody)).toEqual(
      no("REBALANCE_WALLET_OWNER_CHANGED", `${where(nobody, SYSTEM_PROGRAM_ID)} is System Assign of ?`),
    );
    // Under 4 bytes it has no tag, and a transfer is not an owner change: the allowlist refuses both.
    const tagless = new TransactionInstruction({
      programId: SYSTEM_PROGRAM_ID,
      keys: [],
      data: Buffer.from([1, 0, 0]),
    });
    expect(judge(txOf([fill(), tagless]))).toMatchObject({ code: "REBALANCE_INSTRUCTION_NOT_ALLOWED" });
    const transfer = SystemProgram.transfer({ fromPubkey: me, toPubkey: stranger, lamports: 1 });
    expect(judge(txOf([fill(), transfer]))).toMatchObject({ code: "REBALANCE_INSTRUCTION_NOT_ALLOWED" });
  });

  it("SetAuthority, Approve and ApproveChecked under either token program (AUTHORITY_HANDED_AWAY)", () => {
    const acct = ata(USDC, me);
    const cases: [TransactionInstruction, string, PublicKey][] = [
      [
        createSetAuthorityInstruction(acct, me, AuthorityType.AccountOwner, stranger),
        "SetAuthority",
        TOKEN_PROGRAM_ID,
      ],
      [createApproveInstruction(acct, stranger, me, 1n), "Approve", TOKEN_PROGRAM_ID],
      [
        createApproveCheckedInstruction(acct, USDC, stranger, me, 1n, 6, [], TOKEN_2022_PROGRAM_ID),
        "ApproveChecked",
        TOKEN_2022_PROGRAM_ID,
      ],
    ];
    for (const [ix, name, program] of cases) {
      const tx = txOf([fill(), ix]);
      expect(judge(tx)).toEqual(
        no("REBALANCE_AUTHORITY_HANDED_AWAY", `${where(tx, program)} is ${name} on ${acct.toBase58()}`),
      );
    }
    const bare = new TransactionInstruction({
      programId: TOKEN_PROGRAM_ID,
      keys: [],
      data: Buffer.from([4]),
    });
    const tx = txOf([fill(), bare]);
    expect(judge(tx)).toEqual(
      no("REBALANCE_AUTHORITY_HANDED_AWAY", `${where(tx, TOKEN_PROGRAM_ID)} is Approve on ?`),
    );
    // A transfer is not an authority change (the allowlist refuses it).
    expect(judge(txOf([fill(), createTransferInstruction(acct, stranger, me, 1n)]))).toMatchObject({
      code: "REBALANCE_INSTRUCTION_NOT_ALLOWED",
    });
  });

  it("CloseAccount to anyone but the maker (CLOSE_TO_STRANGER); to the maker it is left to the allowlist", () => {
    const acct = ata(USDC, me);
    const tx = txOf([fill(), createCloseAccountInstruction(acct, stranger, me)]);
    expect(judge(tx)).toEqual(
      no(
        "REBALANCE_CLOSE_TO_STRANGER",
        `${where(tx, TOKEN_PROGRAM_ID)} closes ${acct.toBase58()} to ${stranger.toBase58()}, not the maker`,
      ),
    );
    const bare = new TransactionInstruction({
      programId: TOKEN_2022_PROGRAM_ID,
      keys: [],
      data: Buffer.from([9]),
    });
    const noKeys = txOf([fill(), bare]);
    expect(judge(noKeys)).toEqual(
      no(
        "REBALANCE_CLOSE_TO_STRANGER",
        `${where(noKeys, TOKEN_2022_PROGRAM_ID)} closes ? to ?, not the maker`,
      ),
    );
    expect(judge(txOf([fill(), createCloseAccountInstruction(acct, me, me)]))).toMatchObject({
      code: "REBALANCE_INSTRUCTION_NOT_ALLOWED",
    });
  });

  it("a router without its route program: none configured, no fill or two for router_2, no swap program call (ROUTE_PROGRAM_MISSING)", () => {
    expect(judge(txOf([fill()]), order({ router: "router_3" }))).toEqual(
      no(
        "REBALANCE_ROUTE_PROGRAM_MISSING",
        "router_3 has no swap programs configured (rebalance.swapPrograms.router_3)",
      ),
    );
    expect(judge(txOf(budget()))).toEqual(
      no(
        "REBALANCE_ROUTE_PROGRAM_MISSING",
        "router_2 needs exactly one order-engine fill; the transaction has 0",
      ),
    );
    expect(judge(txOf([fill(), fill({ inAmount: 1n })]))).toEqual(
      no(
        "REBALANCE_ROUTE_PROGRAM_MISSING",
        "router_2 needs exactly one order-engine fill; the transaction has 2",
      ),
    );
    expect(judge(txOf(budget()), order({ router: "router_1" }))).toEqual(
      no("REBALANCE_ROUTE_PROGRAM_MISSING", "router_1's route calls none of its swap programs (amm)"),
    );
  });

  it("an instruction off the router's allowlist (INSTRUCTION_NOT_ALLOWED)", () => {
    const tx = txOf([fill(), ammCall()]);
    expect(judge(tx)).toEqual(
      no("REBALANCE_INSTRUCTION_NOT_ALLOWED", `${where(tx, AMM)} (other) is not on router_2's allowlist`),
    );
    const withFill = txOf([ammCall(), fill()]);
    expect(judge(withFill, order({ router: "router_1" }))).toMatchObject({
      code: "REBALANCE_INSTRUCTION_NOT_ALLOWED",
      context: expect.stringContaining("(fill) is not on router_1's allowlist"),
    });
  });

  it("a router_2 fill not as ordered (FILL_NOT_AS_ORDERED), each difference named", () => {
    const wrong = (ix: TransactionInstruction, o = order(), payer = me) => judge(txOf([ix], payer), o);
    const as = (detail: string) => no("REBALANCE_FILL_NOT_AS_ORDERED", `the order-engine fill: ${detail}`);
    expect(wrong(fill({ maker: stranger }))).toEqual(
      as(`its maker is ${stranger.toBase58()}, not the order's counterparty ${cp.toBase58()}`),
    );
    expect(wrong(fill({ maker: me }))).toEqual(
      as(`its maker is ${me.toBase58()}, not the order's counterparty ${cp.toBase58()}`),
    );
    expect(wrong(fill({ maker: me }), order({ maker: me.toBase58() }))).toEqual(
      as(`its maker is ${me.toBase58()}, not the order's counterparty ${me.toBase58()}`),
    );
    expect(wrong(fill(), order({ maker: undefined }))).toEqual(
      as(`its maker is ${cp.toBase58()}, not the order's counterparty (none)`),
    );
    expect(wrong(fill({ in: USDT }))).toEqual(
      as(`it swaps ${MINT.USDT} -> ${MINT.JUP}, not the order's mints`),
    );
    expect(wrong(fill({ out: USDT }))).toEqual(
      as(`it swaps ${MINT.USDC} -> ${MINT.USDT}, not the order's mints`),
    );
    expect(wrong(fill({ inAmount: 1001n }))).toEqual(
      as("it takes 1001, more than the order's inAmount 1000"),
    );
    expect(wrong(fill({ outAmount: 499n }))).toEqual(
      as("it delivers 499, less than the order's outAmount 500"),
    );
    expect(wrong(fill({ taker: stranger }))).toEqual(
      as(`its taker is ${stranger.toBase58()}, not this maker`),
    );
  });

  it("a router_2 fill whose data or accounts do not decode (FILL_NOT_AS_ORDERED)", () => {
    const f = fill();
    const short = new TransactionInstruction({ ...f, data: f.data.subarray(0, 20) });
    expect(judge(txOf([short]))).toMatchObject({
      code: "REBALANCE_FILL_NOT_AS_ORDERED",
      context: expect.stringMatching(/^the fill does not decode: .+/),
    });
    expect(judge(txOf([short]))).not.toMatchObject({ context: "the fill does not decode: accounts" });
    const fewer = new TransactionInstruction({ ...f, keys: f.keys.slice(0, 5) });
    expect(judge(txOf([fewer]))).toEqual(
      no("REBALANCE_FILL_NOT_AS_ORDERED", "the fill does not decode: accounts"),
    );
  });

  it("an ATA created with the maker paying or owning, other than its own ATA of a traded mint (INVALID_MAKER_ACCOUNT_USE)", () => {
    const other = txOf([createAta(me, me, USDT), fill()]);
    const p = where(other, ATA_PROGRAM);
    expect(judge(other)).toEqual(
      no(
        "INVALID_MAKER_ACCOUNT_USE",
        `${p} creates ${ata(USDT, me).toBase58()} (owner ${me.toBase58()}) with the maker paying its rent: only the maker's own ATA of the order's mints may be`,
      ),
    );
    const forStranger = txOf([createAta(me, stranger, JUP), fill()]);
    expect(judge(forStranger)).toEqual(
      no(
        "INVALID_MAKER_ACCOUNT_USE",
        `${p} creates ${ata(JUP, stranger).toBase58()} (owner ${stranger.toBase58()}) with the maker paying its rent: only the maker's own ATA of the order's mints may be`,
      ),
    );
    const owned = txOf([createAta(stranger, me, USDT), fill()], stranger);
    expect(judge(owned)).toMatchObject({
      code: "INVALID_MAKER_ACCOUNT_USE",
      context: expect.stringContaining("with the maker as owner: only"),
    });
    const c = createAta(me, me, JUP);
    const cut = txOf([new TransactionInstruction({ ...c, keys: c.keys.slice(0, 5) }), fill()]);
    expect(judge(cut)).toEqual(
      no(
        "INVALID_MAKER_ACCOUNT_USE",
        `${where(cut, ATA_PROGRAM)}: CreateIdempotent without its six accounts`,
      ),
    );
  });

  it("a maker token account writable beyond the trade's own: owned, delegated or closable by the maker (EXTRA_WRITABLE_MAKER_ACCOUNT)", () => {
    const extra = Keypair.generate().publicKey;
    const touch = new TransactionInstruction({
      programId: AMM,
      keys: [
        { pubkey: ata(USDC, me), isSigner: false, isWritable: true },
        { pubkey: extra, isSigner: false, isWritable: true },
      ],
      data: Buffer.from([1]),
    });
    const tx = txOf([touch]);
    const run = (acc: AccountSnapshot) =>
      judge(tx, order({ router: "router_1" }), (k) => (k.equals(extra) ? acc : null));
    expect(run(tokenAccount(USDT, me))).toEqual(
      no(
        "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
        `the maker's token account ${extra.toBase58()} (mint ${MINT.USDT}) is writable, and the order trades neither its mint nor through it`,
      ),
    );
    expect(run(tokenAccount(USDT, stranger, me))).toMatchObject({
      code: "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
    });
    expect(run(tokenAccount(USDT, stranger, undefined, me))).toMatchObject({
      code: "REBALANCE_EXTRA_WRITABLE_MAKER_ACCOUNT",
    });
    expect(run(tokenAccount(USDT, stranger, stranger, stranger))).toEqual({ ok: true });
    // The same account read-only is no concern.
    const ro = txOf([
      new TransactionInstruction({
        ...touch,
        keys: touch.keys.map((k) => ({ ...k, isWritable: k.pubkey.equals(extra) ? false : k.isWritable })),
      }),
    ]);
    expect(
      judge(ro, order({ router: "router_1" }), (k) => (k.equals(extra) ? tokenAccount(USDT, me) : null)),
    ).toEqual({ ok: true });
  });
});

describe("checkShape: each rule reads only what it names", () => {
  const ammWith = (data: number[]) =>
    new TransactionInstruction({ programId: AMM, keys: ammCall().keys, data: Buffer.from(data) });

  it("accepts a swap program's data that starts like a System owner change or a token authority or close (the tag is the System or token program's only)", () => {
    for (const data of [
      [1, 0, 0, 0],
      [10, 0, 0, 0],
      [8, 0, 0, 0],
      [9, 0, 0, 0],
      [6, 0, 0, 0],
      [4, 0, 0, 0],
      [13, 0, 0, 0],
    ]) {
      expect(judge(txOf([...budget(), ammWith(data)]), order({ router: "router_1" }))).toEqual({ ok: true });
    }
  });

  it("names every configured swap program when a route calls none of them", () => {
    const DEX = Keypair.generate().publicKey;
    const two = testConfig({}, (f: FileConfig) => ({
      ...f,
      rebalance: {
        ...f.rebalance,
        swapPrograms: {
          router_4: [
            { name: "amm", programId: AMM.toBase58() },
            { name: "dex", programId: DEX.toBase58() },
          ],
        },
      },
    }));
    const tx = txOf(budget());
    expect(
      checkShape({
        tx,
        order: order({ router: "router_4" }),
        maker: me,
        config: two,
        accounts: tx.message.staticAccountKeys.map(() => null),
      }),
    ).toEqual(
      no("REBALANCE_ROUTE_PROGRAM_MISSING", "router_4's route calls none of its swap programs (amm, dex)"),
    );
  });

  it("refuses an order-engine instruction other than the fill beside router_2's one fill (INSTRUCTION_NOT_ALLOWED)", () => {
    const f = fill();
    const other = new TransactionInstruction({ ...f, data: Buffer.from([0, 1, 2, 3, 4, 5, 6, 7]) });
    const tx = txOf([fill(), other]);
    expect(judge(tx)).toEqual(
      no(
        "REBALANCE_INSTRUCTION_NOT_ALLOWED",
        `${where(tx, f.programId, 1)} (orderEngineOther) is not on router_2's allowlist`,
      ),
    );
  });

  it("refuses the maker paying for a CreateIdempotent that names its own ATA's address with a stranger as owner (INVALID_MAKER_ACCOUNT_USE)", () => {
    const honest = createAta(me, me, JUP);
    // The same instruction, its owner account swapped for a stranger: the address stays the maker's ATA.
    const forged = new TransactionInstruction({
      ...honest,
      keys: honest.keys.map((k, i) => (i === 2 ? { ...k, pubkey: stranger } : k)),
    });
    const tx = txOf([forged, fill()]);
    expect(judge(tx)).toEqual(
      no(
        "INVALID_MAKER_ACCOUNT_USE",
        `${where(tx, ATA_PROGRAM)} creates ${ata(JUP, me).toBase58()} (owner ${stranger.toBase58()}) with the maker paying its rent: only the maker's own ATA of the order's mints may be`,
      ),
    );
    expect(judge(txOf([honest, fill()]))).toEqual({ ok: true });
  });

  it("accepts the maker's wallet and its token accounts of the traded mints writable, as the chain holds them", () => {
    const held = (k: PublicKey) =>
      k.equals(ata(USDC, me))
        ? tokenAccount(USDC, me)
        : k.equals(ata(JUP, me))
          ? tokenAccount(JUP, me)
          : k.equals(me)
            ? tokenAccount(USDT, me)
            : null;
    expect(judge(txOf([...budget(), ammCall()]), order({ router: "router_1" }), held)).toEqual({ ok: true });
  });
});

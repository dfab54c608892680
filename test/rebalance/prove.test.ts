/**
 * The rebalancer's proof (src/rebalance/prove.ts) against a chain port whose accounts before and after
 * the simulation are written here, so every comparison is met at its edge: the wallet's owner and data,
 * each watched token account's owner, delegate and close authority, the input, output and other mints,
 * the maker's SOL against what the order moves and the fees it declares (capped), and what a
 * simulation that cannot run or fails answers. test/rebalance/prove.security.test.ts runs the same
 * checks on the local chain's real simulation.
 */
import { AccountLayout, getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { AccountSnapshot, Chain } from "../../src/chain/interface.ts";
import type { SwapOrder } from "../../src/operator-api/wire.ts";
import { NATIVE_MINT, TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { declaredMakerFees, type OrderAmounts, proveTransaction } from "../../src/rebalance/prove.ts";
import { MINT, testConfig } from "../support/config.ts";

const config = testConfig();
const maker = Keypair.generate().publicKey;
const me = maker.toBase58();
const stranger = Keypair.generate().publicKey;
const ata = (mint: string, owner = maker) => getAssociatedTokenAddressSync(new PublicKey(mint), owner, true);
/** An account the message names that no configured ATA covers: a token account of another mint. */
const odd = Keypair.generate().publicKey;
const ODD_MINT = Keypair.generate().publicKey.toBase58();

const wallet = (lamports: bigint, over: Partial<AccountSnapshot> = {}): AccountSnapshot => ({
  owner: SystemProgram.programId,
  lamports,
  data: new Uint8Array(),
  executable: false,
  ...over,
});

function token(
  mint: string,
  amount: bigint,
  o: { owner?: PublicKey; delegate?: PublicKey; close?: PublicKey; lamports?: bigint } = {},
): AccountSnapshot {
  const data = Buffer.alloc(AccountLayout.span);
  AccountLayout.encode(
    {
      mint: new PublicKey(mint),
      owner: o.owner ?? maker,
      amount,
      delegateOption: o.delegate ? 1 : 0,
      delegate: o.delegate ?? PublicKey.default,
      state: 1,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: o.close ? 1 : 0,
      closeAuthority: o.close ?? PublicKey.default,
    },
    data,
  );
  return { owner: TOKEN_PROGRAM_ID, lamports: o.lamports ?? 2_000_000n, data, executable: false };
}

type State = Map<string, AccountSnapshot | null>;
const state = (entries: [PublicKey, AccountSnapshot | null][]): State =>
  new Map(entries.map(([k, v]) => [k.toBase58(), v]));

/** The maker's wallet and its USDC and JUP accounts, before anything happens. */
const BEFORE = (): [PublicKey, AccountSnapshot | null][] => [
  [maker, wallet(10_000_000n)],
  [ata(MINT.USDC), token(MINT.USDC, 5_000n)],
  [ata(MINT.JUP), token(MINT.JUP, 0n)],
];

const tx = new VersionedTransaction(
  new TransactionMessage({
    payerKey: stranger,
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    instructions: [
      new TransactionInstruction({
        programId: SystemProgram.programId,
        keys: [{ pubkey: odd, isSigner: false, isWritable: true }],
        data: Buffer.alloc(0),
      }),
    ],
  }).compileToV0Message(),
);

function chainOf(pre: State, post: State | { error: string }): Chain {
  const read = (s: State, keys: readonly PublicKey[]) => keys.map((k) => s.get(k.toBase58()) ?? null);
  return {
    description: "scripted",
    getAccounts: async (keys: PublicKey[]) => read(pre, keys),
    simulateUnsigned: async (_tx: VersionedTransaction, watch: readonly PublicKey[]) =>
      "error" in post
        ? { ok: false as const, error: post.error, logs: [] }
        : { ok: true as const, unitsConsumed: 1n, logs: [], post: read(post, watch) },
  } as unknown as Chain;
}

const ORDER: OrderAmounts = {
  inputMint: MINT.USDC,
  outputMint: MINT.JUP,
  inAmount: 1_000n,
  outAmount: 500n,
  declaredFeeLamports: 0n,
};

/** Proves the change from BEFORE to BEFORE with `after` laid over it. */
function prove(
  after: [PublicKey, AccountSnapshot | null][],
  order: Partial<OrderAmounts> = {},
  max = 5_000n,
  before = BEFORE(),
) {
  const pre = state(before);
  const post = new Map([...pre, ...state(after)]);
  return proveTransaction({
    tx,
    order: { ...ORDER, ...order },
    maker,
    config,
    chain: chainOf(pre, post),
    maxFeeLamports: max,
  });
}
const no = (code: string, context: string) => ({ ok: false, code, context });
/** The honest trade: 1,000 USDC units out, 500 JUP units in. */
const TRADED: [PublicKey, AccountSnapshot][] = [
  [ata(MINT.USDC), token(MINT.USDC, 4_000n)],
  [ata(MINT.JUP), token(MINT.JUP, 500n)],
];

describe("proveTransaction: what it accepts", () => {
  it("the order exactly, answering the maker's change per mint and in SOL", async () => {
    expect(await prove(TRADED)).toEqual({
      ok: true,
      deltas: new Map([
        [MINT.USDC, -1_000n],
        [MINT.JUP, 500n],
      ]),
      lamportsDelta: 0n,
    });
  });

  it("counts a token account created for the maker, and its rent, in the maker's change", async () => {
    const r = await prove(
      [
        [ata(MINT.USDC), token(MINT.USDC, 4_000n)],
        [ata(MINT.JUP), token(MINT.JUP, 500n, { lamports: 2_000_000n })],
      ],
      {},
      5_000n,
      [
        [maker, wallet(10_000_000n)],
        [ata(MINT.USDC), token(MINT.USDC, 5_000n)],
        [ata(MINT.JUP), null],
      ],
    );
    expect(r).toEqual({
      ok: true,
      deltas: new Map([
        [MINT.USDC, -1_000n],
        [MINT.JUP, 500n],
      ]),
      lamportsDelta: 2_000_000n,
    });
  });

  it("fees up to what the order declares, capped at maxFeeLamports", async () => {
    const paid = (lamports: bigint) =>
      [...TRADED, [maker, wallet(10_000_000n - lamports)]] as [PublicKey, AccountSnapshot][];
    expect(await prove(paid(3_000n), { declaredFeeLamports: 3_000n })).toMatchObject({
      ok: true,
      lamportsDelta: -3_000n,
    });
    expect(await prove(paid(5_000n), { declaredFeeLamports: 9_000n })).toMatchObject({ ok: true });
    expect(await prove(paid(5_001n), { declaredFeeLamports: 9_000n })).toEqual(
      no(
        "REBALANCE_SOL_LEFT_MAKER",
        "the maker's SOL (wallet and token accounts) changes by -5001 lamports: 5001 leave it beyond what the order moves of SOL, and the order declares 9000 of fees for the maker (capped at rebalance.maxFeeLamports, 5000)",
      ),
    );
    expect(await prove(paid(3_001n), { declaredFeeLamports: 3_000n })).toEqual(
      no(
        "REBALANCE_SOL_LEFT_MAKER",
        "the maker's SOL (wallet and token accounts) changes by -3001 lamports: 3001 leave it beyond what the order moves of SOL, and the order declares 3000 of fees for the maker",
      ),
    );
  });

  it("a token account of another owner, or another mint not the maker's, whatever it does", async () => {
    const theirs = token(ODD_MINT, 9n, { owner: stranger });
    expect(
      await prove([...TRADED, [odd, token(ODD_MINT, 1n, { owner: stranger })]], {}, 5_000n, [
        ...BEFORE(),
        [odd, theirs],
      ]),
    ).toMatchObject({
      ok: true,
    });
  });

  it("a stranger's account the maker is neither owner, delegate nor close authority of may change all three", async () => {
    const third = Keypair.generate().publicKey;
    const lent = token(ODD_MINT, 9n, { owner: stranger, delegate: third, close: third });
    const handed = token(ODD_MINT, 9n, { owner: third, delegate: stranger, close: stranger });
    expect(await prove([...TRADED, [odd, handed]], {}, 5_000n, [...BEFORE(), [odd, lent]])).toMatchObject({
      ok: true,
    });
  });

  it("a mint that moves by nothing, and the maker's wrapped SOL as SOL", async () => {
    const before = [
      ...BEFORE(),
      [odd, token(ODD_MINT, 9n)],
      [ata(MINT.SOL), token(NATIVE_MINT.toBase58(), 0n)],
    ] as [PublicKey, AccountSnapshot][];
    const r = await prove(
      [
        ...TRADED,
        [ata(MINT.SOL), token(NATIVE_MINT.toBase58(), 700n, { lamports: 2_000_700n })],
        [maker, wallet(9_999_300n)],
      ],
      {},
      5_000n,
      before,
    );
    expect(r).toMatchObject({ ok: true, lamportsDelta: 0n });
  });
});

describe("proveTransaction: refused", () => {
  it("a chain that cannot simulate (SIMULATION_UNAVAILABLE), a failed simulation (SIMULATION_FAILED)", async () => {
    const blind = { description: "blind rpc", getAccounts: async () => [] } as unknown as Chain;
    const args = { tx, order: ORDER, maker, config, maxFeeLamports: 1n };
    expect(await proveTransaction({ ...args, chain: blind })).toEqual(
      no("REBALANCE_SIMULATION_UNAVAILABLE", "the chain (blind rpc) cannot simulate with post-state"),
    );
    expect(
      await proveTransaction({
        ...args,
        chain: chainOf(state(BEFORE()), { error: "custom program error: 0x1" }),
      }),
    ).toEqual(no("SIMULATION_FAILED", "custom program error: 0x1"));
  });

  it("the wallet closed, assigned, or given data (WALLET_OWNER_CHANGED)", async () => {
    expect(await prove([[maker, null]])).toEqual(
      no("REBALANCE_WALLET_OWNER_CHANGED", "the maker's wallet is emptied and closed"),
    );
    expect(await prove([[maker, wallet(10_000_000n, { owner: stranger })]])).toEqual(
      no("REBALANCE_WALLET_OWNER_CHANGED", `the maker's wallet is assigned to ${stranger.toBase58()}`),
    );
    expect(await prove([[maker, wallet(10_000_000n, { data: new Uint8Array(3) })]])).toEqual(
      no("REBALANCE_WALLET_OWNER_CHANGED", "the maker's wallet gets 3 bytes of data"),
    );
    // A wallet already owned by another program before stays refused: it is not a plain wallet.
    const owned = wallet(10_000_000n, { owner: stranger });
    expect(await prove([[maker, owned]], {}, 5_000n, [[maker, owned], ...BEFORE().slice(1)])).toMatchObject({
      code: "REBALANCE_WALLET_OWNER_CHANGED",
    });
  });

  it("a wallet owned by another program before, handed to the System program (WALLET_OWNER_CHANGED)", async () => {
    const owned = wallet(10_000_000n, { owner: stranger });
    expect(
      await prove([[maker, wallet(10_000_000n)]], {}, 5_000n, [[maker, owned], ...BEFORE().slice(1)]),
    ).toEqual(
      no(
        "REBALANCE_WALLET_OWNER_CHANGED",
        `the maker's wallet is assigned to ${SystemProgram.programId.toBase58()}`,
      ),
    );
  });

  it("a wallet the transaction creates: refused assigned to a program or given data, accepted as a plain wallet (its lamports the maker's)", async () => {
    const none = BEFORE().slice(1);
    expect(await prove([[maker, wallet(1_000n, { owner: TOKEN_PROGRAM_ID })]], {}, 5_000n, none)).toEqual(
      no(
        "REBALANCE_WALLET_OWNER_CHANGED",
        `the maker's wallet is assigned to ${TOKEN_PROGRAM_ID.toBase58()}`,
      ),
    );
    expect(await prove([[maker, wallet(1_000n, { data: new Uint8Array(5) })]], {}, 5_000n, none)).toEqual(
      no("REBALANCE_WALLET_OWNER_CHANGED", "the maker's wallet gets 5 bytes of data"),
    );
    expect(await prove([...TRADED, [maker, wallet(1_000n)]], {}, 5_000n, none)).toMatchObject({
      ok: true,
      lamportsDelta: 1_000n,
    });
  });

  it("a wallet's data is judged against what it had: kept, it passes", async () => {
    const withData = wallet(10_000_000n, { data: new Uint8Array(3) });
    expect(
      await prove([...TRADED, [maker, withData]], {}, 5_000n, [[maker, withData], ...BEFORE().slice(1)]),
    ).toMatchObject({
      ok: true,
    });
  });

  it("a maker without a wallet before is judged by its accounts alone", async () => {
    expect(await prove(TRADED, {}, 5_000n, BEFORE().slice(1))).toMatchObject({ ok: true, lamportsDelta: 0n });
  });

  it("a watched token account changing owner, delegate or close authority, each named", async () => {
    const usdc = ata(MINT.USDC).toBase58();
    expect(await prove([[ata(MINT.USDC), token(MINT.USDC, 5_000n, { owner: stranger })]])).toEqual(
      no(
        "REBALANCE_OWNER_CHANGED",
        `the maker's token account ${usdc} changes owner to ${stranger.toBase58()}`,
      ),
    );
    expect(await prove([[ata(MINT.USDC), token(MINT.USDC, 5_000n, { delegate: stranger })]])).toEqual(
      no(
        "REBALANCE_DELEGATE_CHANGED",
        `the maker's token account ${usdc} changes delegate from null to ${stranger.toBase58()}`,
      ),
    );
    expect(await prove([[ata(MINT.USDC), token(MINT.USDC, 5_000n, { close: stranger })]])).toEqual(
      no(
        "REBALANCE_CLOSE_AUTHORITY_CHANGED",
        `the maker's token account ${usdc} changes close authority from null to ${stranger.toBase58()}`,
      ),
    );
    // A stranger's account the maker is delegate of, handed back: the maker controlled it before.
    const lent = token(ODD_MINT, 1n, { owner: stranger, delegate: maker });
    expect(
      await prove([[odd, token(ODD_MINT, 1n, { owner: stranger })]], {}, 5_000n, [...BEFORE(), [odd, lent]]),
    ).toMatchObject({
      code: "REBALANCE_DELEGATE_CHANGED",
    });
    // One whose close authority the maker becomes.
    expect(
      await prove([[odd, token(ODD_MINT, 1n, { owner: stranger, close: maker })]], {}, 5_000n, [
        ...BEFORE(),
        [odd, token(ODD_MINT, 1n, { owner: stranger })],
      ]),
    ).toMatchObject({ code: "REBALANCE_CLOSE_AUTHORITY_CHANGED" });
  });

  it("a new maker token account that comes with someone else's delegate or close authority", async () => {
    const before = [...BEFORE(), [odd, null]] as [PublicKey, AccountSnapshot | null][];
    expect(
      await prove([...TRADED, [odd, token(ODD_MINT, 0n, { delegate: stranger })]], {}, 5_000n, before),
    ).toEqual(
      no(
        "REBALANCE_DELEGATE_CHANGED",
        `the maker's new token account ${odd.toBase58()} has delegate ${stranger.toBase58()}, close authority null`,
      ),
    );
    expect(
      await prove([...TRADED, [odd, token(ODD_MINT, 0n, { close: stranger })]], {}, 5_000n, before),
    ).toEqual(
      no(
        "REBALANCE_CLOSE_AUTHORITY_CHANGED",
        `the maker's new token account ${odd.toBase58()} has delegate null, close authority ${stranger.toBase58()}`,
      ),
    );
    // A closed maker account (after: none) is no authority change; its tokens count as moved.
    expect(
      await prove([...TRADED, [odd, null]], {}, 5_000n, [
        ...BEFORE(),
        [odd, token(ODD_MINT, 0n, { lamports: 0n })],
      ]),
    ).toMatchObject({
      ok: true,
    });
  });

  it("a stranger's new token account with the maker as delegate is no authority change, nor the maker's balance", async () => {
    const before = [...BEFORE(), [odd, null]] as [PublicKey, AccountSnapshot | null][];
    expect(
      await prove(
        [...TRADED, [odd, token(ODD_MINT, 9n, { owner: stranger, delegate: maker })]],
        {},
        5_000n,
        before,
      ),
    ).toMatchObject({ ok: true, lamportsDelta: 0n });
  });

  it("a maker token account closed to a stranger: its rent leaves the maker (SOL_LEFT_MAKER)", async () => {
    expect(
      await prove([...TRADED, [odd, null]], {}, 5_000n, [
        ...BEFORE(),
        [odd, token(ODD_MINT, 0n, { lamports: 2_000_000n })],
      ]),
    ).toEqual(
      no(
        "REBALANCE_SOL_LEFT_MAKER",
        "the maker's SOL (wallet and token accounts) changes by -2000000 lamports: 2000000 leave it beyond what the order moves of SOL, and the order declares 0 of fees for the maker",
      ),
    );
  });

  it("more than inAmount of the input mint leaving (INPUT_EXCEEDED), one unit over", async () => {
    expect(
      await prove([[ata(MINT.USDC), token(MINT.USDC, 3_999n)], TRADED[1] as [PublicKey, AccountSnapshot]]),
    ).toEqual(
      no(
        "REBALANCE_INPUT_EXCEEDED",
        `${MINT.USDC} leaves the maker by 1001, more than the order's inAmount 1000`,
      ),
    );
  });

  it("another mint moving either way (OTHER_TOKEN_MOVED)", async () => {
    const before = [...BEFORE(), [odd, token(ODD_MINT, 9n)]] as [PublicKey, AccountSnapshot][];
    expect(await prove([...TRADED, [odd, token(ODD_MINT, 8n)]], {}, 5_000n, before)).toEqual(
      no("REBALANCE_OTHER_TOKEN_MOVED", `${ODD_MINT}, not in the order, moves the maker's balance by -1`),
    );
    expect(await prove([...TRADED, [odd, token(ODD_MINT, 10n)]], {}, 5_000n, before)).toEqual(
      no("REBALANCE_OTHER_TOKEN_MOVED", `${ODD_MINT}, not in the order, moves the maker's balance by 1`),
    );
  });

  it("less than outAmount arriving (OUTPUT_BELOW_ORDER), one unit short, or none", async () => {
    expect(
      await prove([TRADED[0] as [PublicKey, AccountSnapshot], [ata(MINT.JUP), token(MINT.JUP, 499n)]]),
    ).toEqual(
      no(
        "REBALANCE_OUTPUT_BELOW_ORDER",
        `${MINT.JUP} reaches the maker by 499, less than the order's outAmount 500`,
      ),
    );
    expect(await prove([TRADED[0] as [PublicKey, AccountSnapshot]])).toEqual(
      no(
        "REBALANCE_OUTPUT_BELOW_ORDER",
        `${MINT.JUP} reaches the maker by 0, less than the order's outAmount 500`,
      ),
    );
  });

  it("SOL bought arriving short (OUTPUT_BELOW_ORDER), SOL sold leaving beyond inAmount (INPUT_EXCEEDED)", async () => {
    const sol = MINT.SOL;
    const buySol = { inputMint: MINT.USDC, outputMint: sol, inAmount: 1_000n, outAmount: 700n };
    expect(
      await prove([TRADED[0] as [PublicKey, AccountSnapshot], [maker, wallet(10_000_700n)]], buySol),
    ).toMatchObject({
      ok: true,
    });
    expect(
      await prove([TRADED[0] as [PublicKey, AccountSnapshot], [maker, wallet(10_000_699n)]], buySol),
    ).toEqual(
      no(
        "REBALANCE_OUTPUT_BELOW_ORDER",
        "the maker's SOL (wallet and token accounts) changes by 699 lamports: 1 leave it beyond what the order moves of SOL, and the order declares 0 of fees for the maker",
      ),
    );
    const sellSol = { inputMint: sol, outputMint: MINT.JUP, inAmount: 700n, outAmount: 500n };
    expect(
      await prove([TRADED[1] as [PublicKey, AccountSnapshot], [maker, wallet(9_999_300n)]], sellSol),
    ).toMatchObject({ ok: true });
    expect(
      await prove([TRADED[1] as [PublicKey, AccountSnapshot], [maker, wallet(9_999_299n)]], sellSol),
    ).toMatchObject({
      code: "REBALANCE_INPUT_EXCEEDED",
      context: expect.stringContaining("changes by -701 lamports: 1 leave it"),
    });
  });
});

describe("declaredMakerFees", () => {
  const base = {
    gasless: false,
    signatureFeeLamports: 5_000,
    signatureFeePayer: me,
    prioritizationFeeLamports: 700,
    prioritizationFeePayer: me,
    rentFeeLamports: 2_039_280,
    rentFeePayer: me,
  } as SwapOrder;
  it("sums the fees the order says the maker pays", () => {
    expect(declaredMakerFees(base, me)).toBe(2_044_980n);
  });
  it("counts none of a gasless order, none another pays, and none that is not a positive safe integer", () => {
    expect(declaredMakerFees({ ...base, gasless: true }, me)).toBe(0n);
    expect(
      declaredMakerFees({ ...base, signatureFeePayer: stranger.toBase58(), rentFeePayer: null }, me),
    ).toBe(700n);
    expect(declaredMakerFees({ ...base, signatureFeeLamports: -5, rentFeeLamports: 0 }, me)).toBe(700n);
    expect(declaredMakerFees({ ...base, signatureFeeLamports: 2 ** 53, rentFeeLamports: 1.5 }, me)).toBe(
      700n,
    );
  });
});

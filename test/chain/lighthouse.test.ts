/**
 * Lighthouse assertions on the local chain (src/chain/local/lighthouse-emulation.ts), built exactly
 * as a wallet builds them, with lighthouse-sdk on @solana/kit, and appended after a real fill. An
 * assertion sees its account as the fill left it; the transaction fails (fee charged, nothing else
 * changed) exactly when an assertion is false. Expected values are worked out here: the fill moves
 * 1,000,000 JUP from the taker and 25,000 USDC to it, into an account that held 0 before.
 */

import { type Address, address, type IInstruction, none, some } from "@solana/kit";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, PublicKey, TransactionInstruction } from "@solana/web3.js";
import {
  accountInfoAssertion,
  EquatableOperator,
  getAssertAccountInfoInstruction,
  getAssertAccountInfoMultiInstruction,
  getAssertMintAccountInstruction,
  getAssertTokenAccountInstruction,
  getAssertTokenAccountMultiInstruction,
  getMemoryWriteInstruction,
  IntegerOperator,
  KnownProgram,
  mintAccountAssertion,
  tokenAccountAssertion,
} from "lighthouse-sdk";
import { describe, expect, it } from "vitest";
import { fundTaker, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { fillFee, JUP, seededChain, signedFill, USDC } from "./helpers.ts";

const JUP_TO_USDC = { inputMint: JUP, outputMint: USDC, inputAmount: 1_000_000n, outputAmount: 25_000n };

/** A kit instruction (what lighthouse-sdk returns) as a web3.js one: same program, metas, bytes. */
function web3Ix(ix: IInstruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(ix.programAddress),
    keys: (ix.accounts ?? []).map((a) => ({
      pubkey: new PublicKey(a.address),
      isSigner: a.role >= 2,
      isWritable: a.role === 1 || a.role === 3,
    })),
    data: Buffer.from(ix.data ?? new Uint8Array()),
  });
}

const addr = (k: PublicKey): Address => address(k.toBase58());

/** A fresh chain, a taker with JUP and an empty USDC account, and the fill with `assertions` after it. */
async function fillWith(
  assertions: (ctx: { taker: PublicKey; takerUsdc: PublicKey; maker: PublicKey }) => IInstruction[],
) {
  const { chain, maker } = seededChain();
  const taker = Keypair.generate();
  fundTaker(chain, taker.publicKey, {
    sol: 100_000_000n,
    tokens: { [JUP.toBase58()]: 10_000_000n, [USDC.toBase58()]: 0n },
  });
  const takerUsdc = getAssociatedTokenAddressSync(USDC, taker.publicKey, true);
  const ixs = assertions({ taker: taker.publicKey, takerUsdc, maker: maker.publicKey }).map(web3Ix);
  const tx = await signedFill(chain, maker, taker, { ...JUP_TO_USDC, lighthouseInstructions: ixs });
  const makerSol = lamports(chain, maker.publicKey);
  const outcome = chain.submit(tx);
  const keys = tx.message.staticAccountKeys;
  const lighthouseAt = tx.message.compiledInstructions.findIndex((ix) =>
    keys[ix.programIdIndex]?.equals(new PublicKey("L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95")),
  );
  return {
    outcome,
    lighthouseAt,
    usdc: tokenBalance(chain, taker.publicKey, USDC),
    jup: tokenBalance(chain, taker.publicKey, JUP),
    makerPaid: makerSol - lamports(chain, maker.publicKey),
  };
}

/** Lands with the fill's transfers made. */
function expectLanded(r: Awaited<ReturnType<typeof fillWith>>) {
  expect(r.outcome.kind).toBe("confirmed");
  expect(r.usdc).toBe(25_000n);
  expect(r.jup).toBe(9_000_000n);
}

/** Fails on-chain: the maker pays the fee, no token moves. */
function expectFailed(r: Awaited<ReturnType<typeof fillWith>>, error: RegExp) {
  expect(r.outcome.kind).toBe("failed");
  if (r.outcome.kind === "failed") expect(r.outcome.error).toMatch(error);
  expect(r.usdc).toBe(0n);
  expect(r.jup).toBe(10_000_000n);
  expect(r.makerPaid).toBe(fillFee(2, 200_000, 10_000n));
}

const amountIs = (value: bigint, operator: IntegerOperator) => (c: { takerUsdc: PublicKey }) => [
  getAssertTokenAccountInstruction({
    targetAccount: addr(c.takerUsdc),
    assertion: tokenAccountAssertion("Amount", { value, operator }),
  }),
];

// 25,000 = 0b110_0001_1010_1000: contains 0x6000, not bit 0; bit 3 is set.
const OPERATOR_CASES: [keyof typeof IntegerOperator, bigint, bigint][] = [
  ["Equal", 25_000n, 24_999n],
  ["NotEqual", 24_999n, 25_000n],
  ["GreaterThan", 24_999n, 25_000n],
  ["LessThan", 25_001n, 25_000n],
  ["GreaterThanOrEqual", 25_000n, 25_001n],
  ["LessThanOrEqual", 25_000n, 24_999n],
  ["Contains", 0x6000n, 0x0001n],
  ["DoesNotContain", 0x0001n, 0x0008n],
];

describe("Lighthouse token-account Amount after the fill, every integer operator", () => {
  it.each(OPERATOR_CASES)("%s %i holds: the transaction lands", async (op, holds) => {
    expectLanded(await fillWith(amountIs(holds, IntegerOperator[op])));
  });
  it.each(OPERATOR_CASES)(
    "%s fails with %i: the transaction fails, fee charged, no token moved",
    async (op, _h, fails) => {
      expectFailed(await fillWith(amountIs(fails, IntegerOperator[op])), /Amount .* assertion failed/);
    },
  );
});

describe("Lighthouse's own error", () => {
  it("a false assertion fails the transaction with the program's AssertionFailed (Custom 6001) at the assertion's index", async () => {
    const r = await fillWith(amountIs(25_001n, IntegerOperator.GreaterThanOrEqual));
    expectFailed(r, /Amount GreaterThanOrEqual assertion failed/);
    expect(r.lighthouseAt).toBeGreaterThan(0);
    if (r.outcome.kind === "failed") {
      expect(r.outcome.errJson).toEqual({ InstructionError: [r.lighthouseAt, { Custom: 6001 }] });
    }
  });
});

describe("Lighthouse AssertAccountInfo", () => {
  it("holds the operator's own example (maker lamports > 5,000,000) and fails when asked for more than the maker has", async () => {
    expectLanded(
      await fillWith((c) => [
        getAssertAccountInfoInstruction({
          targetAccount: addr(c.maker),
          assertion: accountInfoAssertion("Lamports", {
            value: 5_000_000n,
            operator: IntegerOperator.GreaterThan,
          }),
        }),
      ]),
    );
    expectFailed(
      await fillWith((c) => [
        getAssertAccountInfoInstruction({
          targetAccount: addr(c.maker),
          assertion: accountInfoAssertion("Lamports", {
            value: 10n ** 18n,
            operator: IntegerOperator.GreaterThan,
          }),
        }),
      ]),
      /Lamports GreaterThan assertion failed/,
    );
  });

  it("sees the fee already charged: the maker's lamports equal their balance before less the fee", async () => {
    const { chain, maker } = seededChain();
    const before = lamports(chain, maker.publicKey);
    const after = before - fillFee(2, 200_000, 10_000n);
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, {
      sol: 100_000_000n,
      tokens: { [JUP.toBase58()]: 10_000_000n, [USDC.toBase58()]: 0n },
    });
    const exact = (value: bigint) =>
      web3Ix(
        getAssertAccountInfoInstruction({
          targetAccount: addr(maker.publicKey),
          assertion: accountInfoAssertion("Lamports", { value, operator: IntegerOperator.Equal }),
        }),
      );
    const ok = await signedFill(chain, maker, taker, {
      ...JUP_TO_USDC,
      lighthouseInstructions: [exact(after)],
    });
    expect(chain.submit(ok).kind).toBe("confirmed");
  });

  it.each([
    ["Owner Equal System program (taker wallet)", "owner-eq", true],
    ["Owner NotEqual System program (taker wallet)", "owner-ne", false],
    ["KnownOwner Equal Token (taker USDC account)", "known-token", true],
    ["KnownOwner Equal Token2022 (taker USDC account)", "known-2022", false],
    ["DataLength Equal 165 (taker USDC account)", "len-165", true],
    ["DataLength GreaterThan 165", "len-gt", false],
    // Signer and writable flags are the message's: the taker signs and is writable there.
    ["IsSigner Equal false on the taker (a signer of the message)", "signer-false", false],
    ["IsWritable Equal true on the taker (writable in the message)", "writable-true", true],
    ["Executable Equal false", "exec-false", true],
    ["RentEpoch LessThan 1", "rent-epoch", true],
  ] as const)("%s: holds = %s", async (_name, which, holds) => {
    const r = await fillWith((c) => {
      const t = addr(which.startsWith("known") || which.startsWith("len") ? c.takerUsdc : c.taker);
      const a = {
        "owner-eq": accountInfoAssertion("Owner", {
          value: address("11111111111111111111111111111111"),
          operator: EquatableOperator.Equal,
        }),
        "owner-ne": accountInfoAssertion("Owner", {
          value: address("11111111111111111111111111111111"),
          operator: EquatableOperator.NotEqual,
        }),
        "known-token": accountInfoAssertion("KnownOwner", {
          value: KnownProgram.Token,
          operator: EquatableOperator.Equal,
        }),
        "known-2022": accountInfoAssertion("KnownOwner", {
          value: KnownProgram.Token2022,
          operator: EquatableOperator.Equal,
        }),
        "len-165": accountInfoAssertion("DataLength", { value: 165n, operator: IntegerOperator.Equal }),
        "len-gt": accountInfoAssertion("DataLength", { value: 165n, operator: IntegerOperator.GreaterThan }),
        "signer-false": accountInfoAssertion("IsSigner", { value: false, operator: EquatableOperator.Equal }),
        "writable-true": accountInfoAssertion("IsWritable", {
          value: true,
          operator: EquatableOperator.Equal,
        }),
        "exec-false": accountInfoAssertion("Executable", { value: false, operator: EquatableOperator.Equal }),
        "rent-epoch": accountInfoAssertion("RentEpoch", { value: 1n, operator: IntegerOperator.LessThan }),
      }[which];
      return [getAssertAccountInfoInstruction({ targetAccount: t, assertion: a })];
    });
    if (holds) expectLanded(r);
    else expectFailed(r, /assertion failed/);
  });

  it("evaluates every assertion of AssertAccountInfoMulti and fails on the one that is false", async () => {
    const multi = (secondHolds: boolean) => (c: { taker: PublicKey }) => [
      getAssertAccountInfoMultiInstruction({
        targetAccount: addr(c.taker),
        assertions: [
          accountInfoAssertion("Lamports", { value: 0n, operator: IntegerOperator.GreaterThan }),
          accountInfoAssertion("DataLength", {
            value: secondHolds ? 0n : 1n,
            operator: IntegerOperator.Equal,
          }),
        ],
      }),
    ];
    expectLanded(await fillWith(multi(true)));
    expectFailed(await fillWith(multi(false)), /DataLength Equal assertion failed \(assertion 1\)/);
  });
});

describe("Lighthouse token-account and mint-account assertions", () => {
  it.each([
    [
      "Mint Equal USDC",
      true,
      () => tokenAccountAssertion("Mint", { value: addr(USDC), operator: EquatableOperator.Equal }),
    ],
    [
      "Mint Equal JUP",
      false,
      () => tokenAccountAssertion("Mint", { value: addr(JUP), operator: EquatableOperator.Equal }),
    ],
    [
      "Owner Equal the taker",
      true,
      (c: { taker: PublicKey }) =>
        tokenAccountAssertion("Owner", { value: addr(c.taker), operator: EquatableOperator.Equal }),
    ],
    [
      "Owner NotEqual the taker",
      false,
      (c: { taker: PublicKey }) =>
        tokenAccountAssertion("Owner", { value: addr(c.taker), operator: EquatableOperator.NotEqual }),
    ],
    [
      "Delegate Equal none",
      true,
      () => tokenAccountAssertion("Delegate", { value: none(), operator: EquatableOperator.Equal }),
    ],
    [
      "Delegate Equal some(the taker)",
      false,
      (c: { taker: PublicKey }) =>
        tokenAccountAssertion("Delegate", { value: some(addr(c.taker)), operator: EquatableOperator.Equal }),
    ],
    [
      "State Equal 1 (initialized)",
      true,
      () => tokenAccountAssertion("State", { value: 1, operator: IntegerOperator.Equal }),
    ],
    [
      "State Equal 2 (frozen)",
      false,
      () => tokenAccountAssertion("State", { value: 2, operator: IntegerOperator.Equal }),
    ],
    [
      "IsNative Equal none (USDC)",
      true,
      () => tokenAccountAssertion("IsNative", { value: none(), operator: EquatableOperator.Equal }),
    ],
    [
      "IsNative NotEqual none",
      false,
      () => tokenAccountAssertion("IsNative", { value: none(), operator: EquatableOperator.NotEqual }),
    ],
    [
      "DelegatedAmount Equal 0",
      true,
      () => tokenAccountAssertion("DelegatedAmount", { value: 0n, operator: IntegerOperator.Equal }),
    ],
    [
      "CloseAuthority NotEqual some(the taker)",
      true,
      (c: { taker: PublicKey }) =>
        tokenAccountAssertion("CloseAuthority", {
          value: some(addr(c.taker)),
          operator: EquatableOperator.NotEqual,
        }),
    ],
    ["TokenAccountOwnerIsDerived (an ATA)", true, () => tokenAccountAssertion("TokenAccountOwnerIsDerived")],
  ] as const)("token account %s: holds = %s", async (_n, holds, make) => {
    const r = await fillWith((c) => [
      getAssertTokenAccountInstruction({ targetAccount: addr(c.takerUsdc), assertion: make(c as never) }),
    ]);
    if (holds) expectLanded(r);
    else expectFailed(r, /assertion failed/);
  });

  it("fails a token-account assertion aimed at an account no token program owns", async () => {
    const r = await fillWith((c) => [
      getAssertTokenAccountInstruction({
        targetAccount: addr(c.taker),
        assertion: tokenAccountAssertion("Amount", {
          value: 0n,
          operator: IntegerOperator.GreaterThanOrEqual,
        }),
      }),
    ]);
    expectFailed(r, /AccountOwnerMismatch/);
  });

  it("fails AssertTokenAccountMulti on its first false assertion", async () => {
    const r = await fillWith((c) => [
      getAssertTokenAccountMultiInstruction({
        targetAccount: addr(c.takerUsdc),
        assertions: [
          tokenAccountAssertion("Amount", { value: 25_000n, operator: IntegerOperator.Equal }),
          tokenAccountAssertion("Owner", { value: addr(c.maker), operator: EquatableOperator.Equal }),
        ],
      }),
    ]);
    expectFailed(r, /Owner Equal assertion failed \(assertion 1\)/);
  });

  it.each([
    [
      "Decimals Equal 6",
      true,
      mintAccountAssertion("Decimals", { value: 6, operator: IntegerOperator.Equal }),
    ],
    [
      "Decimals Equal 9",
      false,
      mintAccountAssertion("Decimals", { value: 9, operator: IntegerOperator.Equal }),
    ],
    [
      "Supply GreaterThan 0",
      true,
      mintAccountAssertion("Supply", { value: 0n, operator: IntegerOperator.GreaterThan }),
    ],
    [
      "IsInitialized Equal true",
      true,
      mintAccountAssertion("IsInitialized", { value: true, operator: EquatableOperator.Equal }),
    ],
    [
      "IsInitialized Equal false",
      false,
      mintAccountAssertion("IsInitialized", { value: false, operator: EquatableOperator.Equal }),
    ],
    [
      "FreezeAuthority Equal some(a random key)",
      false,
      mintAccountAssertion("FreezeAuthority", {
        value: some(addr(Keypair.generate().publicKey)),
        operator: EquatableOperator.Equal,
      }),
    ],
    [
      "MintAuthority NotEqual some(a random key)",
      true,
      mintAccountAssertion("MintAuthority", {
        value: some(addr(Keypair.generate().publicKey)),
        operator: EquatableOperator.NotEqual,
      }),
    ],
  ] as const)("USDC mint %s: holds = %s", async (_n, holds, assertion) => {
    const r = await fillWith(() => [
      getAssertMintAccountInstruction({ targetAccount: addr(USDC), assertion }),
    ]);
    if (holds) expectLanded(r);
    else expectFailed(r, /assertion failed/);
  });
});

describe("Lighthouse instructions the local chain does not emulate", () => {
  it("refuses MemoryWrite outright (dropped, nothing charged) rather than running it or skipping it", async () => {
    const r = await fillWith((c) => [
      getMemoryWriteInstruction({
        payer: { address: addr(c.taker) } as never,
        sourceAccount: addr(c.taker),
        memory: addr(Keypair.generate().publicKey),
        memoryId: 0,
        memoryBump: 255,
        writeOffset: 0,
        writeType: { __kind: "AccountInfoField", fields: [0] } as never,
      }),
    ]);
    expect(r.outcome).toMatchObject({ kind: "dropped", reason: "unsupported" });
    expect(r.makerPaid).toBe(0n);
    expect(r.usdc).toBe(0n);
  });

  it("refuses VerifyDatahash (keccak is not emulated)", async () => {
    const r = await fillWith((c) => [
      getAssertAccountInfoInstruction({
        targetAccount: addr(c.taker),
        assertion: accountInfoAssertion("VerifyDatahash", {
          expectedHash: new Uint8Array(32),
          start: 0,
          length: 0,
        }),
      }),
    ]);
    expect(r.outcome).toMatchObject({ kind: "dropped", reason: "unsupported" });
  });
});

/**
 * RFQ v2 swaps (SWAP_AVAILABLE) judged before the maker co-signs: the honest swap built as the operator
 * builds it is accepted with the program's own amounts; each tampering below is an attack that must be
 * refused with its code.
 */
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, MessageV0, PublicKey, TransactionInstruction, VersionedTransaction } from "@solana/web3.js";
import { beforeAll, describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import { QuotingBook } from "../../pricing/book.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { StaticPriceSource } from "../../pricing/static.ts";
import { buildV2SwapTransaction, routeV2Instruction, type V2SwapParams } from "../../sandbox/rfq-v2/build.ts";
import { AGGREGATOR_PROGRAM, RFQ_V2_PROGRAM, sweep } from "../../src/program/rfq-v2.ts";
import { FillRejectCode, type RefusalCode, V2RejectCode } from "../../src/refusal/codes.ts";
import { type PairLevels, pairLevels } from "../../src/rfq-v2/levels.ts";
import { StreamedLevels } from "../../src/rfq-v2/streamed.ts";
import {
  checkV2Route,
  checkV2Swap,
  decodeSwapTransaction,
  type V2Pair,
} from "../../src/rfq-v2/swap-checks.ts";
import { MINT, testConfig } from "../support/config.ts";

const NOW = Date.parse("2030-01-01T00:00:00Z");
const LOT = 100_000n;
const maker = Keypair.generate().publicKey;
const taker = Keypair.generate().publicKey;
const TOKEN = new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
let levels: PairLevels;
let pairs: Map<string, V2Pair>;
let streamed: StreamedLevels;

beforeAll(() => {
  const config = testConfig();
  const source = config.file.priceSources.static;
  if (source?.kind !== "static") throw new Error("static prices expected");
  const book = new QuotingBook(
    config,
    new Map<string, PriceSource>([["static", new StaticPriceSource("static", source.prices)]]),
  );
  const l = book.ladders("SOL/USDC");
  if (!l.ok) throw new Error(l.context);
  levels = pairLevels(l, () => true);
  pairs = new Map([[`${MINT.SOL}/${MINT.USDC}`, { pairKey: "SOL/USDC", base: l.base, quote: l.quote }]]);
  streamed = new StreamedLevels(() => NOW);
  streamed.add({
    pairKey: "SOL/USDC",
    sequence: 7n,
    lotSizeBase: LOT,
    bids: levels.bids,
    asks: levels.asks,
    sentAtMs: NOW - 5_000,
    validUntilMs: NOW + 25_000,
  });
});

/** An honest Bid (the taker pays 1,000 USDC for SOL) against the streamed asks, as the operator builds it. */
function honest(over: Partial<V2SwapParams> = {}): V2SwapParams {
  return {
    taker,
    maker,
    baseMint: new PublicKey(MINT.SOL),
    quoteMint: new PublicKey(MINT.USDC),
    baseTokenProgram: TOKEN,
    quoteTokenProgram: TOKEN,
    takerSide: "bid",
    inAmount: 1_000_000_000n,
    quotedOutAmount: 5_000_000_000n,
    expireAt: BigInt(NOW / 1000 + 20),
    tickSizeQpb: 1n,
    lotSizeBase: LOT,
    levels: levels.asks.slice(0, 2).map((a) => ({ pxTicks: a.perLot, qtyLots: a.lots })),
    recentBlockhash: "11111111111111111111111111111111",
    ...over,
  };
}

function judge(tx: VersionedTransaction, nowMs = NOW, set = streamed) {
  return checkV2Swap({
    tx,
    accountKeys: tx.message.staticAccountKeys,
    maker,
    pairs,
    streamed: (k) => set.valid(k, nowMs),
    nowMs,
  });
}
const code = (r: ReturnType<typeof judge>) => (r.ok ? "accepted" : r.code);
/** A refusal's detail with the maker, the taker and any other key named by role or as <key>. */
const elideKeys = (detail: string) =>
  detail
    .replaceAll(maker.toBase58(), "<maker>")
    .replaceAll(taker.toBase58(), "<taker>")
    .replace(/[1-9A-HJ-NP-Za-km-z]{32,44}/g, "<key>");

/** The same transaction with one account index of the route instruction pointed at another key. */
function repoint(tx: VersionedTransaction, position: number, to: PublicKey): VersionedTransaction {
  const keys = tx.message.staticAccountKeys;
  let idx = keys.findIndex((k) => k.equals(to));
  if (idx < 0) {
    keys.push(to);
    idx = keys.length - 1;
  }
  const route = tx.message.compiledInstructions.find(
    (ix) => keys[ix.programIdIndex]!.toBase58() === "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4",
  )!;
  route.accountKeyIndexes[position] = idx;
  return tx;
}

describe("an honest RFQ v2 swap", () => {
  it("is accepted with the amounts the program's walk of the streamed levels gives", () => {
    const r = judge(buildV2SwapTransaction(honest()));
    expect(code(r)).toBe("accepted");
    if (!r.ok) return;
    const walk = sweep("bid", 1_000_000_000n, levels.asks.slice(0, 2), LOT);
    expect(r.amountIn).toBe(walk.spent);
    expect(r.amountOut).toBe(walk.out);
    expect(r.baseAmount).toBe(walk.out);
    expect(r.pair.pairKey).toBe("SOL/USDC");
    expect(r.set.sequence).toBe(7n);
  });

  it("is accepted on the maker's bids when the taker sells base (Ask)", () => {
    const p = honest({
      takerSide: "ask",
      inAmount: 2_000_000_000n,
      levels: levels.bids.slice(0, 1).map((b) => ({ pxTicks: b.perLot, qtyLots: b.lots })),
    });
    const r = judge(buildV2SwapTransaction(p));
    expect(code(r)).toBe("accepted");
    if (r.ok) expect(r.amountOut).toBe((2_000_000_000n / LOT) * levels.bids[0]!.perLot);
  });

  it("accepts a worse price for the taker and fewer lots than streamed (the operator may trim)", () => {
    const a = levels.asks[0]!;
    expect(
      code(
        judge(buildV2SwapTransaction(honest({ levels: [{ pxTicks: a.perLot + 3n, qtyLots: a.lots - 1n }] }))),
      ),
    ).toBe("accepted");
  });
});

describe("attacks on an RFQ v2 swap, each refused", () => {
  const a0 = () => levels.asks[0]!;
  const cases: [string, () => VersionedTransaction, RefusalCode, number?][] = [
    [
      "a level one quote atom per lot better for the taker than streamed",
      () => buildV2SwapTransaction(honest({ levels: [{ pxTicks: a0().perLot - 1n, qtyLots: a0().lots }] })),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "one lot more than the level streamed",
      () => buildV2SwapTransaction(honest({ levels: [{ pxTicks: a0().perLot, qtyLots: a0().lots + 1n }] })),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "a tick size that makes every lot cheaper (price per lot = px x tick)",
      () =>
        buildV2SwapTransaction(
          honest({ tickSizeQpb: 1n, levels: [{ pxTicks: a0().perLot / 2n, qtyLots: a0().lots }] }),
        ),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "a lot size the maker never streamed",
      () => buildV2SwapTransaction(honest({ lotSizeBase: LOT * 10n })),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "levels out of order (the second-best level first)",
      () =>
        buildV2SwapTransaction(
          honest({
            levels: [levels.asks[1]!, levels.asks[0]!].map((l) => ({ pxTicks: l.perLot, qtyLots: l.lots })),
          }),
        ),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "the maker's bids offered to a taker who buys base",
      () => buildV2SwapTransaction(honest({ levels: [{ pxTicks: levels.bids[0]!.perLot, qtyLots: 1n }] })),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "no level at all",
      () => buildV2SwapTransaction(honest({ levels: [] })),
      V2RejectCode.V2_LEVELS_NOT_STREAMED,
    ],
    [
      "expire_at already past",
      () => buildV2SwapTransaction(honest({ expireAt: BigInt(NOW / 1000) })),
      V2RejectCode.V2_EXPIRED,
    ],
    [
      "expire_at after the streamed levels' validity",
      () => buildV2SwapTransaction(honest({ expireAt: BigInt(NOW / 1000 + 26) })),
      V2RejectCode.V2_EXPIRED,
    ],
    [
      "half of the route's input routed elsewhere (bps 5,000)",
      () => buildV2SwapTransaction(honest({ bps: 5_000 })),
      V2RejectCode.V2_INVALID_AMOUNTS,
    ],
    [
      "the leg fed from a mid-route output (input index 1)",
      () => buildV2SwapTransaction(honest({ inputIndex: 1 })),
      V2RejectCode.V2_INVALID_AMOUNTS,
    ],
    [
      "an input that buys no whole lot",
      () => buildV2SwapTransaction(honest({ inAmount: a0().perLot - 1n })),
      V2RejectCode.V2_INVALID_AMOUNTS,
    ],
    [
      "a pair the maker does not stream (JUP/USDC)",
      () => buildV2SwapTransaction(honest({ baseMint: new PublicKey(MINT.JUP) })),
      V2RejectCode.V2_PAIR_NOT_STREAMED,
    ],
    [
      "a Token-2022 program for a classic mint",
      () => buildV2SwapTransaction(honest({ baseTokenProgram: new PublicKey(TOKEN_2022_PROGRAM) })),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "the leg's fill authority another key (the maker signs elsewhere)",
      () => repoint(buildV2SwapTransaction(honest()), 12, Keypair.generate().publicKey),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "the maker's base account swapped for the taker's",
      () =>
        repoint(
          buildV2SwapTransaction(honest()),
          15,
          getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), taker),
        ),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "the leg's program a look-alike of RFQ v2",
      () => repoint(buildV2SwapTransaction(honest()), 10, Keypair.generate().publicKey),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "the instructions sysvar replaced",
      () => repoint(buildV2SwapTransaction(honest()), 21, Keypair.generate().publicKey),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "the route's source mint not the quote mint the taker pays with",
      () => repoint(buildV2SwapTransaction(honest()), 3, new PublicKey(MINT.USDT)),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "another taker named in the leg than the fee payer",
      () => repoint(buildV2SwapTransaction(honest()), 11, Keypair.generate().publicKey),
      V2RejectCode.V2_INVALID_ACCOUNTS,
    ],
    [
      "the maker's USDC account as the route's destination (the taker's output goes... from the maker)",
      () =>
        repoint(
          buildV2SwapTransaction(honest()),
          2,
          getAssociatedTokenAddressSync(new PublicKey(MINT.USDC), maker),
        ),
      FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    ],
    [
      "a transfer out of the maker's SOL account beside the route, signed by the maker's key",
      () =>
        buildV2SwapTransaction(honest(), {
          after: [
            createTransferCheckedInstruction(
              getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), maker),
              new PublicKey(MINT.SOL),
              getAssociatedTokenAddressSync(new PublicKey(MINT.SOL), taker),
              maker,
              1n,
              9,
            ),
          ],
        }),
      FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
    ],
    [
      "levels from a set that expired",
      () => buildV2SwapTransaction(honest()),
      V2RejectCode.V2_PAIR_NOT_STREAMED,
      NOW + 25_000,
    ],
  ];
  it.each(cases)("refuses %s", (_name, build, expected, now) => {
    const tx = build();
    const r = judge(tx, now ?? NOW);
    expect(code(r)).toBe(expected);
    // The detail the operator's log shows, pinned (keys elided: they are made per run).
    expect(r.ok ? "accepted" : elideKeys(r.context)).toMatchSnapshot();
  });

  it("refuses every swap of a pair withdrawn (paused, switched off, stale) even while its set is valid", () => {
    const s = new StreamedLevels(() => NOW);
    s.add({
      pairKey: "SOL/USDC",
      sequence: 8n,
      lotSizeBase: LOT,
      bids: levels.bids,
      asks: levels.asks,
      sentAtMs: NOW,
      validUntilMs: NOW + 30_000,
    });
    expect(code(judge(buildV2SwapTransaction(honest()), NOW, s))).toBe("accepted");
    s.withdraw("SOL/USDC");
    expect(code(judge(buildV2SwapTransaction(honest()), NOW, s))).toBe(V2RejectCode.V2_PAIR_NOT_STREAMED);
  });

  it("refuses a route with a second RFQ v2 step or another swap than RFQ v2, and two route instructions", () => {
    const tx = buildV2SwapTransaction(honest());
    const route = tx.message.compiledInstructions.find((ix) => ix.data.length > 100)!;
    // The same RFQ step twice: step count 2, the step's bytes repeated.
    const data = Buffer.from(route.data);
    const twoSteps = Buffer.concat([data.subarray(0, 34), data.subarray(34), data.subarray(34)]);
    twoSteps.writeUInt32LE(2, 30);
    route.data = twoSteps;
    expect(code(judge(tx))).toBe(V2RejectCode.V2_ROUTE_NOT_FOUND);
    // A readable plan whose one step is another swap (Raydium, tag 7, no payload).
    const other = buildV2SwapTransaction(honest());
    const r2 = other.message.compiledInstructions.find((ix) => ix.data.length > 100)!;
    r2.data = Buffer.concat([Buffer.from(r2.data).subarray(0, 34), Buffer.from([7, 0x10, 0x27, 0, 1])]);
    expect(code(judge(other))).toBe(V2RejectCode.V2_ROUTE_NOT_FOUND);
    const twice = buildV2SwapTransaction(honest(), { after: [routeV2Instruction(honest())] });
    expect(code(judge(twice))).toBe(V2RejectCode.V2_ROUTE_NOT_FOUND);
  });

  it("refuses unreadable bytes, route data with bytes after its step, and a maker not the read-only signer at slot 1", () => {
    expect(decodeSwapTransaction("not base64 at all")).toMatchObject({
      code: FillRejectCode.MALFORMED_TRANSACTION,
    });
    const tx = buildV2SwapTransaction(honest());
    const route = tx.message.compiledInstructions.find((ix) => ix.data.length > 100)!;
    route.data = Uint8Array.from([...route.data, 0]);
    expect(code(judge(tx))).toBe(FillRejectCode.MALFORMED_TRANSACTION);
    const other = Keypair.generate().publicKey;
    const stranger = buildV2SwapTransaction(honest({ maker: other }));
    expect(code(judge(stranger))).toBe(V2RejectCode.V2_INVALID_SIGNERS);
    const writable = buildV2SwapTransaction(honest());
    writable.message.header.numReadonlySignedAccounts = 0;
    expect(code(judge(writable))).toBe(V2RejectCode.V2_INVALID_SIGNERS);
  });

  it("refuses the maker at slot 1 of the resolved keys when it is loaded from a lookup table, not the static signer", () => {
    const honestTx = buildV2SwapTransaction(honest());
    const keys = honestTx.message.staticAccountKeys;
    expect(code(judge(honestTx))).toBe("accepted");
    // The same resolved key list, but only the taker static: the rest (the maker first) loaded from a table.
    const writable = 1 + keys.slice(2).findIndex((_k, i) => !honestTx.message.isAccountWritable(i + 2));
    const m = new MessageV0({
      header: honestTx.message.header,
      staticAccountKeys: [taker],
      recentBlockhash: honestTx.message.recentBlockhash,
      compiledInstructions: honestTx.message.compiledInstructions,
      addressTableLookups: [
        {
          accountKey: Keypair.generate().publicKey,
          writableIndexes: Array.from({ length: writable }, (_v, i) => i),
          readonlyIndexes: Array.from({ length: keys.length - 1 - writable }, (_v, i) => writable + i),
        },
      ],
    });
    const r = checkV2Swap({
      tx: new VersionedTransaction(m),
      accountKeys: keys,
      maker,
      pairs,
      streamed: (k) => streamed.valid(k, NOW),
      nowMs: NOW,
    });
    expect(code(r)).toBe(V2RejectCode.V2_INVALID_SIGNERS);
  });

  it("refuses a key loaded twice (a lookup table repeating a static key), also the maker's named by the fill-authority slot", () => {
    const tx = buildV2SwapTransaction(honest());
    const keys = tx.message.staticAccountKeys;
    const judgeKeys = (accountKeys: PublicKey[]) =>
      checkV2Swap({ tx, accountKeys, maker, pairs, streamed: (k) => streamed.valid(k, NOW), nowMs: NOW });
    expect(code(judgeKeys([...keys, keys[5]!]))).toBe(FillRejectCode.MALFORMED_TRANSACTION);
    // The route's fill authority pointed at a second copy of the maker's key (not the signer's slot).
    const copy = buildV2SwapTransaction(honest());
    const route = copy.message.compiledInstructions.find((ix) => ix.data.length > 100)!;
    route.accountKeyIndexes[12] = keys.length;
    const r = checkV2Swap({
      tx: copy,
      accountKeys: [...copy.message.staticAccountKeys, maker],
      maker,
      pairs,
      streamed: (k) => streamed.valid(k, NOW),
      nowMs: NOW,
    });
    expect(r.ok || r.context).toBe(`account ${maker.toBase58()} appears twice among the message's keys`);
  });

  it("knows the RFQ v2 program it checks against", () => {
    expect(RFQ_V2_PROGRAM).toBe("fd3nMFYTQjX1yr5ER8u7tPdHJB7qt8RpDpNtLQX2Br5");
  });
});

/** The route instruction of a transaction built by buildV2SwapTransaction. */
const routeIx = (tx: VersionedTransaction) =>
  tx.message.compiledInstructions.find(
    (ix) => tx.message.staticAccountKeys[ix.programIdIndex]!.toBase58() === AGGREGATOR_PROGRAM,
  )!;
/** The refusal as the maker reads it: code and context, keys elided; "accepted" otherwise. */
const said = (r: ReturnType<typeof judge>) => (r.ok ? "accepted" : `${r.code}: ${elideKeys(r.context)}`);
/** The index of `k` among the message's static keys, appended when absent. */
function indexOf(tx: VersionedTransaction, k: PublicKey): number {
  const keys = tx.message.staticAccountKeys;
  const at = keys.findIndex((x) => x.equals(k));
  if (at >= 0) return at;
  keys.push(k);
  return keys.length - 1;
}
const makerAta = (mint: string) => getAssociatedTokenAddressSync(new PublicKey(mint), maker);

describe("the transaction's bytes", () => {
  it("reads the operator's base64 back into the same transaction", () => {
    const tx = buildV2SwapTransaction(honest());
    const back = decodeSwapTransaction(Buffer.from(tx.serialize()).toString("base64"));
    expect(back).toBeInstanceOf(VersionedTransaction);
    expect(Buffer.from((back as VersionedTransaction).serialize())).toEqual(Buffer.from(tx.serialize()));
  });

  it("refuses no bytes at all, and bytes that end before the transaction, saying why", () => {
    expect(decodeSwapTransaction("")).toEqual({
      code: FillRejectCode.MALFORMED_TRANSACTION,
      context: "cannot read the transaction: empty",
    });
    expect(decodeSwapTransaction("AAAA")).toEqual({
      code: FillRejectCode.MALFORMED_TRANSACTION,
      context: "cannot read the transaction: Reached end of buffer unexpectedly",
    });
  });

  it("refuses an instruction whose program or account index is past the message's keys", () => {
    const program = buildV2SwapTransaction(honest());
    program.message.compiledInstructions[0]!.programIdIndex = program.message.staticAccountKeys.length;
    expect(said(judge(program))).toBe(
      "MALFORMED_TRANSACTION: an instruction names an account beyond the message's keys",
    );
    const account = buildV2SwapTransaction(honest());
    const accs = routeIx(account).accountKeyIndexes;
    accs[accs.length - 1] = account.message.staticAccountKeys.length;
    expect(said(judge(account))).toBe(
      "MALFORMED_TRANSACTION: an instruction names an account beyond the message's keys",
    );
  });
});

describe("the signers", () => {
  it("refuses a third required signature or a writable maker, naming the header it read", () => {
    const three = buildV2SwapTransaction(honest());
    three.message.header.numRequiredSignatures = 3;
    expect(said(judge(three))).toBe(
      "V2_INVALID_SIGNERS: 3 required signatures, 1 read-only: expected 2 and 1 (the maker at slot 1)",
    );
    const writable = buildV2SwapTransaction(honest());
    writable.message.header.numReadonlySignedAccounts = 0;
    expect(said(judge(writable))).toBe(
      "V2_INVALID_SIGNERS: 2 required signatures, 0 read-only: expected 2 and 1 (the maker at slot 1)",
    );
  });

  it("refuses another key than the maker at slot 1, of the static keys or of the resolved ones", () => {
    const slot1 =
      "V2_INVALID_SIGNERS: the maker is not the static signer at slot 1 (a key loaded from a lookup table cannot sign)";
    expect(said(judge(buildV2SwapTransaction(honest({ maker: Keypair.generate().publicKey }))))).toBe(slot1);
    const tx = buildV2SwapTransaction(honest());
    const keys = tx.message.staticAccountKeys;
    const resolved = (accountKeys: PublicKey[]) =>
      checkV2Swap({ tx, accountKeys, maker, pairs, streamed: (k) => streamed.valid(k, NOW), nowMs: NOW });
    const other = [keys[0]!, Keypair.generate().publicKey, ...keys.slice(2)];
    expect(said(resolved(other))).toBe(slot1);
    expect(said(resolved([taker]))).toBe(slot1);
    expect(said(resolved(keys))).toBe("accepted");
  });

  it("accepts the two signers as the only static keys, every other key loaded from a table", () => {
    const honestTx = buildV2SwapTransaction(honest());
    const keys = honestTx.message.staticAccountKeys;
    const writable = keys.slice(2).findIndex((_k, i) => !honestTx.message.isAccountWritable(i + 2));
    const m = new MessageV0({
      header: { numRequiredSignatures: 2, numReadonlySignedAccounts: 1, numReadonlyUnsignedAccounts: 0 },
      staticAccountKeys: [taker, maker],
      recentBlockhash: honestTx.message.recentBlockhash,
      compiledInstructions: honestTx.message.compiledInstructions,
      addressTableLookups: [
        {
          accountKey: Keypair.generate().publicKey,
          writableIndexes: Array.from({ length: writable }, (_v, i) => i),
          readonlyIndexes: Array.from({ length: keys.length - 2 - writable }, (_v, i) => writable + i),
        },
      ],
    });
    const r = checkV2Swap({
      tx: new VersionedTransaction(m),
      accountKeys: keys,
      maker,
      pairs,
      streamed: (k) => streamed.valid(k, NOW),
      nowMs: NOW,
    });
    expect(said(r)).toBe("accepted");
  });
});

describe("the route instruction", () => {
  it("counts only the aggregator's instructions that start with route_v2's discriminator", () => {
    const data = routeV2Instruction(honest()).data;
    const aggregatorCall = (bytes: number[]) =>
      new TransactionInstruction({
        programId: new PublicKey(AGGREGATOR_PROGRAM),
        keys: [],
        data: Buffer.from(bytes),
      });
    const lookAlike = new TransactionInstruction({ programId: Keypair.generate().publicKey, keys: [], data });
    expect(
      said(judge(buildV2SwapTransaction(honest(), { after: [aggregatorCall([1, 2, 3, 4, 5, 6, 7, 8])] }))),
    ).toBe("accepted");
    // The discriminator's first three bytes only: shorter than it, so not route_v2.
    expect(
      said(judge(buildV2SwapTransaction(honest(), { after: [aggregatorCall([...data.subarray(0, 3)])] }))),
    ).toBe("accepted");
    expect(said(judge(buildV2SwapTransaction(honest(), { before: [lookAlike] })))).toBe("accepted");
  });

  it("refuses no route_v2 instruction and two, counting them", () => {
    const none = buildV2SwapTransaction(honest());
    const route = routeIx(none);
    route.data = Uint8Array.from([0, ...route.data.subarray(1)]);
    expect(said(judge(none))).toBe("V2_ROUTE_NOT_FOUND: 0 route_v2 instructions: expected exactly one");
    const two = buildV2SwapTransaction(honest(), { after: [routeV2Instruction(honest())] });
    expect(said(judge(two))).toBe("V2_ROUTE_NOT_FOUND: 2 route_v2 instructions: expected exactly one");
  });

  it("gives the leg, its taker and mints, and the route instruction's index", () => {
    const tx = buildV2SwapTransaction(honest());
    const r = checkV2Route({ tx, accountKeys: tx.message.staticAccountKeys, maker, pairs });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.routeIndex).toBe(3);
    expect(tx.message.compiledInstructions[r.routeIndex]).toBe(routeIx(tx));
    expect([r.leg.taker, r.leg.baseMint, r.leg.quoteMint].map((k) => k.toBase58())).toEqual([
      taker.toBase58(),
      MINT.SOL,
      MINT.USDC,
    ]);
    expect([r.leg.input, r.leg.inAmount, r.leg.routeInAmount]).toEqual([
      "first",
      1_000_000_000n,
      1_000_000_000n,
    ]);
    expect(r.pair.pairKey).toBe("SOL/USDC");
  });
});

describe("the lone leg's block", () => {
  /** The route's accounts with `k` inserted at `pos`. */
  const insert = (tx: VersionedTransaction, pos: number, k: PublicKey) => {
    const idx = indexOf(tx, k);
    routeIx(tx).accountKeyIndexes.splice(pos, 0, idx);
    return tx;
  };

  it("refuses the block moved by an account before it, and an account more after it", () => {
    const before = insert(buildV2SwapTransaction(honest()), 10, Keypair.generate().publicKey);
    expect(said(judge(before))).toBe(
      "V2_INVALID_ACCOUNTS: the lone leg's block starts at 11 of 24 accounts: expected at 10 of 23",
    );
    const after = insert(buildV2SwapTransaction(honest()), 23, Keypair.generate().publicKey);
    expect(said(judge(after))).toBe(
      "V2_INVALID_ACCOUNTS: the lone leg's block starts at 10 of 24 accounts: expected at 10 of 23",
    );
  });

  it("refuses the block moved by an account before it with the route's last account dropped (the count right)", () => {
    const tx = insert(buildV2SwapTransaction(honest()), 10, Keypair.generate().publicKey);
    routeIx(tx).accountKeyIndexes.pop();
    expect(said(judge(tx))).toBe(
      "V2_INVALID_ACCOUNTS: the lone leg's block starts at 11 of 23 accounts: expected at 10 of 23",
    );
  });

  it("starts after the platform fee account when the route takes a fee, and is refused over it", () => {
    const withFee = insert(
      buildV2SwapTransaction(honest({ platformFeeBps: 10 })),
      10,
      Keypair.generate().publicKey,
    );
    expect(said(judge(withFee))).toBe("accepted");
    expect(said(judge(buildV2SwapTransaction(honest({ platformFeeBps: 10 }))))).toBe(
      "V2_INVALID_ACCOUNTS: the lone leg's block starts at 10 of 23 accounts: expected at 11 of 24",
    );
  });
});

describe("the accounts of the route and of the leg", () => {
  it("refuses a route authority that is the leg's user but not the fee payer", () => {
    const other = Keypair.generate().publicKey;
    const tx = repoint(repoint(buildV2SwapTransaction(honest()), 0, other), 11, other);
    expect(said(judge(tx))).toBe(
      "V2_INVALID_ACCOUNTS: the route's authority, the leg's user and the fee payer are not one taker",
    );
  });

  it.each([
    ["event authority", 8],
    ["program account", 9],
  ])("refuses the route's %s replaced", (_name, position) => {
    const tx = repoint(buildV2SwapTransaction(honest()), position, Keypair.generate().publicKey);
    expect(said(judge(tx))).toBe(
      "V2_INVALID_ACCOUNTS: the route's event authority or program account is not the aggregator's",
    );
  });

  it("refuses a Token-2022 program for the classic quote mint", () => {
    const tx = buildV2SwapTransaction(honest({ quoteTokenProgram: new PublicKey(TOKEN_2022_PROGRAM) }));
    expect(said(judge(tx))).toBe("V2_INVALID_ACCOUNTS: SOL/USDC: a token program is not the configured one");
  });

  it("refuses a lone leg's route destination mint other than the base the taker buys", () => {
    const tx = repoint(buildV2SwapTransaction(honest()), 4, new PublicKey(MINT.USDT));
    expect(said(judge(tx))).toBe(
      "V2_INVALID_ACCOUNTS: the route's source and destination mints do not match the leg's side",
    );
  });

  it("refuses an Ask whose route source mint is the quote mint (the taker pays base)", () => {
    const ask = () =>
      buildV2SwapTransaction(
        honest({
          takerSide: "ask",
          inAmount: 2_000_000_000n,
          levels: levels.bids.slice(0, 1).map((b) => ({ pxTicks: b.perLot, qtyLots: b.lots })),
        }),
      );
    expect(said(judge(ask()))).toBe("accepted");
    expect(said(judge(repoint(ask(), 3, new PublicKey(MINT.USDC))))).toBe(
      "V2_INVALID_ACCOUNTS: the route's source and destination mints do not match the leg's side",
    );
  });

  it("refuses the maker's quote account swapped for the taker's", () => {
    const tx = repoint(
      buildV2SwapTransaction(honest()),
      16,
      getAssociatedTokenAddressSync(new PublicKey(MINT.USDC), taker),
    );
    expect(said(judge(tx))).toBe(
      "V2_INVALID_ACCOUNTS: the leg's maker token accounts are not the maker's associated accounts",
    );
  });
});

describe("the maker's accounts, only in the leg's slots", () => {
  it("refuses an instruction that runs the maker's token account as its program", () => {
    const run = new TransactionInstruction({
      programId: makerAta(MINT.USDC),
      keys: [],
      data: Buffer.from([1]),
    });
    expect(said(judge(buildV2SwapTransaction(honest(), { after: [run] })))).toBe(
      "INVALID_MAKER_ACCOUNT_USE: instruction 4 runs a maker account as a program",
    );
  });

  it("refuses another instruction naming a maker account at the position the leg's slot has in the route", () => {
    const ro = (pubkey: PublicKey) => ({ pubkey, isSigner: false, isWritable: false });
    const keys = Array.from({ length: 16 }, () => ro(new PublicKey(MINT.SOL)));
    const echo = new TransactionInstruction({
      programId: Keypair.generate().publicKey,
      keys: [...keys, ro(makerAta(MINT.USDC))],
      data: Buffer.from([1]),
    });
    expect(said(judge(buildV2SwapTransaction(honest(), { after: [echo] })))).toBe(
      "INVALID_MAKER_ACCOUNT_USE: instruction 4 names a maker account at position 16",
    );
  });
});

describe("the levels and their validity", () => {
  it("refuses a level of no lots at the streamed price", () => {
    const a = levels.asks[0]!;
    const tx = buildV2SwapTransaction(honest({ levels: [{ pxTicks: a.perLot, qtyLots: 0n }] }));
    expect(said(judge(tx))).toBe(
      "V2_LEVELS_NOT_STREAMED: SOL/USDC: lot 100000 and 1 level(s) match no streamed set still valid",
    );
  });

  it("refuses a second level better for the taker than the streamed one, after a first level as streamed", () => {
    const [a, b] = [levels.asks[0]!, levels.asks[1]!];
    const tx = buildV2SwapTransaction(
      honest({
        levels: [
          { pxTicks: a.perLot, qtyLots: a.lots },
          { pxTicks: b.perLot - 1n, qtyLots: b.lots },
        ],
      }),
    );
    expect(said(judge(tx))).toBe(
      "V2_LEVELS_NOT_STREAMED: SOL/USDC: lot 100000 and 2 level(s) match no streamed set still valid",
    );
  });

  it("refuses one level more than the side streamed, at a worse price", () => {
    const more = [...levels.asks, { lots: 1n, perLot: levels.asks.at(-1)!.perLot + 1n }];
    const tx = buildV2SwapTransaction(
      honest({ inAmount: 1_000n, levels: more.map((a) => ({ pxTicks: a.perLot, qtyLots: a.lots })) }),
    );
    expect(said(judge(tx))).toBe(
      `V2_LEVELS_NOT_STREAMED: SOL/USDC: lot 100000 and ${more.length} level(s) match no streamed set still valid`,
    );
  });

  it("refuses an Ask (the taker sells base) at a price per lot one atom above the streamed bid, accepts one below", () => {
    const b = levels.bids[0]!;
    const ask = (perLot: bigint) =>
      buildV2SwapTransaction(
        honest({
          takerSide: "ask",
          inAmount: 2_000_000_000n,
          levels: [{ pxTicks: perLot, qtyLots: b.lots }],
        }),
      );
    expect(said(judge(ask(b.perLot + 1n)))).toBe(
      "V2_LEVELS_NOT_STREAMED: SOL/USDC: lot 100000 and 1 level(s) match no streamed set still valid",
    );
    expect(said(judge(ask(b.perLot - 1n)))).toBe("accepted");
  });

  it("judges against the latest of the sets still valid", () => {
    const s = new StreamedLevels(() => NOW);
    for (const sequence of [8n, 9n])
      s.add({
        pairKey: "SOL/USDC",
        sequence,
        lotSizeBase: LOT,
        bids: levels.bids,
        asks: levels.asks,
        sentAtMs: NOW - 1_000,
        validUntilMs: NOW + 29_000,
      });
    const r = judge(buildV2SwapTransaction(honest()), NOW, s);
    expect(r.ok && r.set.sequence).toBe(9n);
  });

  it("accepts expire_at exactly at the end of the levels' validity, and a clock inside a second", () => {
    expect(said(judge(buildV2SwapTransaction(honest({ expireAt: BigInt(NOW / 1000 + 25) }))))).toBe(
      "accepted",
    );
    expect(said(judge(buildV2SwapTransaction(honest({ expireAt: BigInt(NOW / 1000 + 1) })), NOW + 999))).toBe(
      "accepted",
    );
  });
});

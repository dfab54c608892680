/**
 * RFQ v2 swaps (SWAP_AVAILABLE) judged before the maker co-signs: the honest swap built as the operator
 * builds it is accepted with the program's own amounts; each tampering below is an attack that must be
 * refused with its code.
 */
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, MessageV0, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { beforeAll, describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM } from "../../config/schema.ts";
import { QuotingBook } from "../../pricing/book.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { StaticPriceSource } from "../../pricing/static.ts";
import { buildV2SwapTransaction, routeV2Instruction, type V2SwapParams } from "../../sandbox/rfq-v2/build.ts";
import { RFQ_V2_PROGRAM, sweep } from "../../src/program/rfq-v2.ts";
import { FillRejectCode, type RefusalCode, V2RejectCode } from "../../src/refusal/codes.ts";
import { type PairLevels, pairLevels } from "../../src/rfq-v2/levels.ts";
import { StreamedLevels } from "../../src/rfq-v2/streamed.ts";
import { checkV2Swap, decodeSwapTransaction, type V2Pair } from "../../src/rfq-v2/swap-checks.ts";
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

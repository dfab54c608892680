/**
 * Multi-leg routes, judged on the seven mainnet samples the operator's SDK publishes
 * (test/fixtures/rfq-v2-mainnet-samples.ts): the readable ones (TX1, TX3, TX4, and the lone-leg TX2)
 * accepted on their structure, with the sample's maker as the maker, its pair streamed and a level set
 * streamed that matches the sample's; TX5-TX7 refused as unreadable (steps 154, 151, 146 are not in the
 * published enum). Then attacks built on the readable ones, each refused with its code.
 */
import { createHash } from "node:crypto";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey, VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import {
  decodeRouteV2,
  RFQ_V2_PROGRAM,
  ROUTE_V2_DISCRIMINATOR,
  startsWith,
} from "../../src/program/rfq-v2.ts";
import { FillRejectCode, V2RejectCode } from "../../src/refusal/codes.ts";
import type { StreamedSet } from "../../src/rfq-v2/streamed.ts";
import { checkV2Swap, type V2Pair } from "../../src/rfq-v2/swap-checks.ts";
import { MAINNET_SAMPLES, type MainnetSample } from "../fixtures/rfq-v2-mainnet-samples.ts";

const MINTS = {
  SOL: "So11111111111111111111111111111111111111112",
  USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  USDT: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  A3QA: "A3QAoKnf3jFcCfTGvEpE7KVBMZqXQJwvwt6Uc4UExkDp",
};
/** The pair each sample fills, as its maker streams it. */
const PAIRS: Record<string, [keyof typeof MINTS, keyof typeof MINTS]> = {
  TX1: ["SOL", "USDC"],
  TX2: ["A3QA", "USDC"],
  TX3: ["USDC", "USDT"],
  TX4: ["SOL", "USDC"],
  TX5: ["USDC", "USDT"],
  TX6: ["SOL", "USDC"],
  TX7: ["SOL", "USDC"],
};

const sample = (name: string) => MAINNET_SAMPLES.find((s) => s.name === name) as MainnetSample;
const fresh = (s: MainnetSample) => VersionedTransaction.deserialize(Buffer.from(s.base64, "base64"));
/** A distinct stand-in for a table entry the samples do not name. */
const standIn = (table: string, i: number) =>
  new PublicKey(createHash("sha256").update(`stand-in ${table}:${i}`).digest());

/** The resolved key list: statics, then every table's writable entries, then its read-only ones. */
function resolve(s: MainnetSample, tx: VersionedTransaction): PublicKey[] {
  const lookups = tx.message.addressTableLookups;
  const entry = (table: PublicKey, i: number) => {
    const known = s.tables[table.toBase58()]?.[i];
    return known ? new PublicKey(known) : standIn(table.toBase58(), i);
  };
  return [
    ...tx.message.staticAccountKeys,
    ...lookups.flatMap((l) => l.writableIndexes.map((i) => entry(l.accountKey, i))),
    ...lookups.flatMap((l) => l.readonlyIndexes.map((i) => entry(l.accountKey, i))),
  ];
}

const routeOf = (tx: VersionedTransaction, keys: readonly PublicKey[]) =>
  tx.message.compiledInstructions.find(
    (ix) =>
      keys[ix.programIdIndex]?.toBase58() === "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4" &&
      startsWith(ix.data, ROUTE_V2_DISCRIMINATOR),
  )!;

interface Judged {
  tx: VersionedTransaction;
  keys: PublicKey[];
}

/** Judges a sample (tampered by `change`) with a streamed set matching its own levels. */
function judge(name: string, change?: (j: Judged) => void) {
  const s = sample(name);
  const tx = fresh(s);
  const keys = resolve(s, tx);
  const [b, q] = PAIRS[name]!;
  const token = (symbol: keyof typeof MINTS) => ({
    mint: MINTS[symbol],
    symbol,
    decimals: symbol === "SOL" ? 9 : 6,
    tokenProgram: TOKEN_PROGRAM,
    permissioned: false,
    stable: false,
  });
  const pair = { pairKey: `${b}/${q}`, base: token(b), quote: token(q) } as V2Pair;
  const pairs = new Map([[`${MINTS[b]}/${MINTS[q]}`, pair]]);
  // The streamed set is the untampered sample's: its lot and its levels on the side it consumes.
  const original = decodeRouteV2(routeOf(tx, keys).data);
  const leg = original.ok ? original.leg : undefined;
  const expiryMs = Number(leg?.expireAt ?? 2_000_000_000n) * 1000;
  const set: StreamedSet = {
    pairKey: pair.pairKey,
    sequence: 1n,
    lotSizeBase: leg?.lotSizeBase ?? 1n,
    bids: leg?.takerSide === "ask" ? leg.levels : [],
    asks: leg?.takerSide === "bid" ? leg.levels : [],
    sentAtMs: expiryMs - 30_000,
    validUntilMs: expiryMs,
  };
  change?.({ tx, keys });
  return checkV2Swap({
    tx,
    accountKeys: keys,
    maker: new PublicKey(s.maker),
    pairs,
    streamed: (k) => (k === pair.pairKey ? [set] : []),
    nowMs: expiryMs - 10_000,
  });
}
const code = (r: ReturnType<typeof judge>) => (r.ok ? "accepted" : r.code);

/** Where the RFQ block starts in the route's accounts. */
const blockOf = (j: Judged) => {
  const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
  return accs.findIndex((i) => j.keys[i]?.toBase58() === RFQ_V2_PROGRAM);
};
/** The route's data with its plan's steps replaced (the header kept). */
function withSteps(j: Judged, steps: (old: Buffer[]) => Buffer[]) {
  const route = routeOf(j.tx, j.keys);
  const data = Buffer.from(route.data);
  const decoded = decodeRouteV2(data);
  if (!decoded.ok) throw new Error(decoded.detail);
  // Cut the plan into its steps by the lengths the reader found (RFQ: 6 + fill + 4; others re-read).
  const bodies: Buffer[] = [];
  let at = 34;
  for (const s of decoded.leg.steps) {
    const len = s.rfq ? 2 + 4 + s.rfq.fillData.length + 4 : stepLength(data, at);
    bodies.push(data.subarray(at, at + len));
    at += len;
  }
  const next = steps(bodies);
  const count = Buffer.alloc(4);
  count.writeUInt32LE(next.length);
  route.data = Buffer.concat([data.subarray(0, 30), count, ...next]);
}
/** The byte length of a known non-RFQ step at `at` (tag, payload, bps, indexes), found by decoding it alone. */
function stepLength(data: Buffer, at: number): number {
  for (let len = 5; len < 200; len++) {
    const one = Buffer.concat([data.subarray(0, 30), Buffer.from([1, 0, 0, 0]), data.subarray(at, at + len)]);
    const r = decodeRouteV2(one);
    if (!r.ok && r.problem === "not-found") return len;
  }
  throw new Error("step length not found");
}

describe("the published mainnet samples", () => {
  it("decodes all seven as route_v2 with the maker a read-only signer at slot 1", () => {
    expect(MAINNET_SAMPLES.map((s) => s.name)).toEqual(["TX1", "TX2", "TX3", "TX4", "TX5", "TX6", "TX7"]);
    for (const s of MAINNET_SAMPLES) {
      const tx = fresh(s);
      expect(tx.message.header.numRequiredSignatures).toBe(2);
      expect(tx.message.staticAccountKeys[1]?.toBase58()).toBe(s.maker);
      expect(routeOf(tx, resolve(s, tx))).toBeDefined();
    }
  });

  it("accepts TX1 (RFQ Ask first, then AlphaQ and RaydiumClmm; fee account at 10): in_amount x 10,000 bps walked", () => {
    const r = judge("TX1");
    expect(code(r)).toBe("accepted");
    if (!r.ok) return;
    expect(r.leg.steps.map((s) => s.tag)).toEqual([120, 104, 26]);
    expect(r.leg.input).toBe("first");
    expect(r.leg.platformFeeBps).toBe(10);
    // 20,000,000 lamports in, lot 1,000, one level 99 per lot: 20,000 lots, 1,980,000 USDC atoms out.
    expect([r.leg.routeInAmount, r.leg.inAmount, r.amountIn, r.amountOut]).toEqual([
      20_000_000n,
      20_000_000n,
      20_000_000n,
      1_980_000n,
    ]);
    expect(r.baseAmount).toBe(20_000_000n);
  });

  it("accepts TX2 (the lone RFQ Ask) with the on-chain amounts: 4,000,000 in, 799,960 out", () => {
    const r = judge("TX2");
    expect(code(r)).toBe("accepted");
    if (!r.ok) return;
    expect([r.amountIn, r.amountOut, r.leg.input]).toEqual([4_000_000n, 799_960n, "first"]);
  });

  it("accepts TX3 (RFQ Bid first, then TesseraV; fee account at 10): 10 lots of USDC for 9,997,920 USDT atoms", () => {
    const r = judge("TX3");
    expect(code(r)).toBe("accepted");
    if (!r.ok) return;
    expect(r.leg.steps.map((s) => s.tag)).toEqual([120, 89]);
    expect(r.leg.platformFeeBps).toBe(2);
    expect([r.leg.inAmount, r.amountIn, r.amountOut]).toEqual([9_999_000n, 9_997_920n, 10_000_000n]);
  });

  it("accepts TX4 (RFQ Bid mid-chain, input index 2) priced at the worst case: the whole ladder", () => {
    const r = judge("TX4");
    expect(code(r)).toBe("accepted");
    if (!r.ok) return;
    expect(r.leg.steps.map((s) => s.tag)).toEqual([47, 26, 120, 105]);
    expect(r.leg.input).toBe("mid-chain");
    expect(r.leg.inputIndex).toBe(2);
    expect(r.leg.inAmount).toBe(9_529_900n); // the leg's input: every lot at its price
    // 10 lots of 10,000,000 lamports at 952,990 USDC atoms each: all of it reserved.
    expect([r.amountIn, r.amountOut, r.baseAmount]).toEqual([9_529_900n, 100_000_000n, 100_000_000n]);
  });

  it.each([
    ["TX5", 154, 3],
    ["TX6", 151, 0],
    ["TX7", 146, 1],
  ])("refuses %s as unreadable: step tag %i is not in the published enum", (name, tag, at) => {
    const r = judge(name);
    expect(code(r)).toBe(V2RejectCode.V2_ROUTE_UNREADABLE);
    expect(r.ok || r.context).toBe(
      `route plan: step ${at} is swap ${tag}, not in the published enum (0-125): its length is unknown`,
    );
  });
});

describe("attacks on multi-leg routes, each refused", () => {
  const MAKER_SLOTS = [
    ["fill authority", 2],
    ["maker base account", 5],
    ["maker quote account", 6],
  ] as const;

  it.each(MAKER_SLOTS)("refuses the %s's index repeated in the next leg's accounts (TX3)", (_n, offset) => {
    const r = judge("TX3", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      const block = blockOf(j);
      accs[block + 13] = accs[block + offset] as number;
    });
    expect(code(r)).toBe(FillRejectCode.INVALID_MAKER_ACCOUNT_USE);
  });

  it.each(MAKER_SLOTS)(
    "refuses the %s's index in an earlier leg's accounts (TX4, RFQ mid-chain)",
    (_n, offset) => {
      const r = judge("TX4", (j) => {
        const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
        accs[12] = accs[blockOf(j) + offset] as number;
      });
      expect(code(r)).toBe(FillRejectCode.INVALID_MAKER_ACCOUNT_USE);
    },
  );

  it("refuses a maker account as the platform fee account (route position 10)", () => {
    const r = judge("TX1", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      accs[10] = accs[blockOf(j) + 6] as number;
    });
    expect(code(r)).toBe(FillRejectCode.INVALID_MAKER_ACCOUNT_USE);
  });

  it("refuses the maker block shifted by one against the RFQ v2 program, either way", () => {
    const right = judge("TX3", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      accs.splice(blockOf(j) + 1, 0, accs[accs.length - 1] as number);
    });
    expect(code(right)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    const left = judge("TX3", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      const [user] = accs.splice(blockOf(j) + 1, 1);
      accs.splice(accs.length - 1, 0, user as number);
    });
    expect(code(left)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
  });

  it("refuses two RFQ v2 legs in the plan (TX1's RFQ step twice)", () => {
    const r = judge("TX1", (j) => withSteps(j, ([rfq, ...rest]) => [rfq!, rfq!, ...rest]));
    expect(code(r)).toBe(V2RejectCode.V2_ROUTE_NOT_FOUND);
  });

  it("refuses an RFQ leg whose program id is absent from the route's accounts, or named twice", () => {
    const absent = judge("TX3", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      accs[blockOf(j)] = accs[accs.length - 1] as number;
    });
    expect(code(absent)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    expect(absent.ok || absent.context).toBe(
      "the route names the RFQ v2 program 0 times: expected once, at the head of the leg's block",
    );
    const twice = judge("TX3", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      accs[blockOf(j) + 12] = accs[blockOf(j)] as number;
    });
    expect(code(twice)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    expect(twice.ok || twice.context).toBe(
      "the route names the RFQ v2 program 2 times: expected once, at the head of the leg's block",
    );
  });

  it("refuses the RFQ block over the platform fee account, and running into the route's last account", () => {
    const overFee = judge("TX1", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      accs.splice(10, 1);
    });
    expect(code(overFee)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    expect(overFee.ok || overFee.context).toBe(
      "the RFQ leg's block (10-21) is not among the legs (11-49; the last account is the route's)",
    );
    const atEnd = judge("TX3", (j) => {
      const route = routeOf(j.tx, j.keys);
      route.accountKeyIndexes = route.accountKeyIndexes.slice(0, blockOf(j) + 12);
    });
    expect(code(atEnd)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    expect(atEnd.ok || atEnd.context).toBe(
      "the RFQ leg's block (11-22) is not among the legs (11-21; the last account is the route's)",
    );
    // The same with the route's last account kept: the block then ends right before it (accepted shape).
    const justFits = judge("TX3", (j) => {
      const route = routeOf(j.tx, j.keys);
      const last = route.accountKeyIndexes[route.accountKeyIndexes.length - 1] as number;
      route.accountKeyIndexes = [...route.accountKeyIndexes.slice(0, blockOf(j) + 12), last];
    });
    expect(code(justFits)).toBe("accepted");
  });

  it("refuses a maker key loaded by a second lookup-table entry, in another leg or in the RFQ block", () => {
    // An entry the TesseraV leg names resolves to the maker's base account.
    const other = judge("TX3", (j) => {
      const accs = routeOf(j.tx, j.keys).accountKeyIndexes;
      const block = blockOf(j);
      const statics = j.tx.message.staticAccountKeys.length;
      const loaded = accs.slice(block + 12).find((i) => i >= statics) as number;
      j.keys[loaded] = j.keys[accs[block + 5] as number] as PublicKey;
    });
    expect(code(other)).toBe(FillRejectCode.INVALID_MAKER_ACCOUNT_USE);
    // The RFQ block's fill authority slot pointed at one more table entry that resolves to the maker.
    const inBlock = judge("TX3", (j) => {
      j.keys.push(j.keys[1] as PublicKey);
      routeOf(j.tx, j.keys).accountKeyIndexes[blockOf(j) + 2] = j.keys.length - 1;
    });
    expect(code(inBlock)).toBe(FillRejectCode.MALFORMED_TRANSACTION);
  });

  it("refuses an RFQ-looking byte pattern inside another leg's payload: the plan has no RFQ step", () => {
    const r = judge("TX3", (j) =>
      withSteps(j, ([rfq, ...rest]) => {
        // MeteoraDlmmSwapV2 (75) whose remaining-accounts slices are the RFQ step's bytes (an even length).
        expect(rfq!.length % 2).toBe(0);
        const count = Buffer.alloc(4);
        count.writeUInt32LE(rfq!.length / 2);
        return [Buffer.concat([Buffer.from([75]), count, rfq!, Buffer.from([0x10, 0x27, 0, 1])]), ...rest];
      }),
    );
    expect(code(r)).toBe(V2RejectCode.V2_ROUTE_NOT_FOUND);
    // The bytes are still there for a scanner to find: tag 120, side, the fill data's length.
    const data = Buffer.from(fresh(sample("TX3")).message.compiledInstructions[4]!.data);
    expect(data.indexOf(Buffer.from([120, 0, 44, 0, 0, 0]))).toBeGreaterThan(0);
  });

  it("refuses a readable sample made unreadable: AlphaQ's a_to_b byte 2 (TX1)", () => {
    const r = judge("TX1", (j) =>
      withSteps(j, ([rfq, alphaQ, clmm]) => {
        const bad = Buffer.from(alphaQ!);
        bad[1] = 2;
        return [rfq!, bad, clmm!];
      }),
    );
    expect(code(r)).toBe(V2RejectCode.V2_ROUTE_UNREADABLE);
  });

  it("prices a first leg fed by a later step's output as mid-chain (worst case), and refuses bps 0 or above 10,000", () => {
    const fed = judge("TX1", (j) =>
      withSteps(j, ([rfq, alphaQ, clmm]) => {
        const back = Buffer.from(clmm!);
        back[back.length - 1] = 0; // RaydiumClmm's output index 0: the RFQ leg's input grows at run time
        return [rfq!, alphaQ!, back];
      }),
    );
    expect(code(fed)).toBe("accepted");
    if (fed.ok) {
      expect(fed.leg.input).toBe("mid-chain");
      expect(fed.leg.inAmount).toBe(1_000_000_000n); // an Ask's input: every lot's base
      // The whole ladder: 1,000,000 lots of 1,000 lamports at 99 per lot.
      expect([fed.amountIn, fed.amountOut]).toEqual([1_000_000_000n, 99_000_000n]);
    }
    const bps = (v: number) =>
      judge("TX3", (j) =>
        withSteps(j, ([rfq, ...rest]) => {
          const b = Buffer.from(rfq!);
          b.writeUInt16LE(v, b.length - 4);
          return [b, ...rest];
        }),
      );
    const refusal = (r: ReturnType<typeof judge>) => (r.ok ? "accepted" : `${r.code}: ${r.context}`);
    expect(refusal(bps(0))).toBe("V2_INVALID_AMOUNTS: the leg takes 0 bps of its input: expected 1-10,000");
    expect(refusal(bps(10_001))).toBe(
      "V2_INVALID_AMOUNTS: the leg takes 10001 bps of its input: expected 1-10,000",
    );
    const half = bps(5_000);
    expect(code(half)).toBe("accepted");
    if (half.ok) expect([half.leg.inAmount, half.amountIn]).toEqual([4_999_500n, 4_998_960n]);
    expect(refusal(bps(1))).toBe("V2_INVALID_AMOUNTS: 999 buys no whole lot"); // its share passes, but buys no lot
    expect(code(bps(10_000))).toBe("accepted");
  });

  it("refuses a first leg whose route source mint is not the mint the leg takes (TX3: USDT)", () => {
    const r = judge("TX3", (j) => {
      const route = routeOf(j.tx, j.keys);
      route.accountKeyIndexes[3] = route.accountKeyIndexes[4] as number;
    });
    expect(code(r)).toBe(V2RejectCode.V2_INVALID_ACCOUNTS);
    // Mid-chain (TX4), the route's source mint is another leg's business: pointing it elsewhere is not checked.
    const mid = judge("TX4", (j) => {
      const route = routeOf(j.tx, j.keys);
      route.accountKeyIndexes[3] = route.accountKeyIndexes[4] as number;
    });
    expect(code(mid)).toBe("accepted");
  });

  it("resolves TX3's maker USDC account as the maker's associated account (USDC from the shared table)", () => {
    const s = sample("TX3");
    const ata = getAssociatedTokenAddressSync(new PublicKey(MINTS.USDC), new PublicKey(s.maker));
    expect(fresh(s).message.staticAccountKeys.some((k) => k.equals(ata))).toBe(true);
  });
});

/**
 * The signer's own reading of an RFQ v2 swap (src/signer/service/v2.ts) on its own: the programs an
 * offered swap may run, how far ahead its expire_at may be, whether its levels lie within the set the
 * webhook claims, what the maker pays and receives, and the pairs its bands give it. test/signer/v2.test.ts
 * shows each refusal through the service; these pin every edge to the unit.
 */
import { ASSOCIATED_TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../config/schema.ts";
import { COMPUTE_BUDGET_PROGRAM_ID } from "../../src/program/layout.ts";
import { AGGREGATOR_PROGRAM, RFQ_V2_PROGRAM } from "../../src/program/rfq-v2.ts";
import type { V2Leg } from "../../src/rfq-v2/swap-checks.ts";
import type { PairBand } from "../../src/signer/service/limits.ts";
import {
  claimProblem,
  expiryProblem,
  makerTrade,
  unexpectedProgram,
  V2_ALLOWED_PROGRAMS,
  v2PairsOf,
} from "../../src/signer/service/v2.ts";
import type { ClaimedLevelsWire } from "../../src/signing/protocol.ts";
import { MINT, testConfig } from "../support/config.ts";

const config = testConfig();
const token = (symbol: string) => {
  const t = config.tokensBySymbol.get(symbol);
  if (!t) throw new Error(`no ${symbol} in the default config`);
  return t;
};

describe("unexpectedProgram", () => {
  it("allows exactly the programs an offered swap holds", () => {
    expect([...V2_ALLOWED_PROGRAMS].sort()).toEqual(
      [
        COMPUTE_BUDGET_PROGRAM_ID.toBase58(),
        SystemProgram.programId.toBase58(),
        TOKEN_PROGRAM,
        TOKEN_2022_PROGRAM,
        ASSOCIATED_TOKEN_PROGRAM_ID.toBase58(),
        AGGREGATOR_PROGRAM,
      ].sort(),
    );
    expect(unexpectedProgram([...V2_ALLOWED_PROGRAMS].map((p) => new PublicKey(p)))).toBeUndefined();
  });

  it("names the first instruction running another program, by its index", () => {
    const stranger = Keypair.generate().publicKey;
    const rfq = new PublicKey(RFQ_V2_PROGRAM);
    expect(unexpectedProgram([COMPUTE_BUDGET_PROGRAM_ID, stranger, rfq])).toEqual({
      index: 1,
      program: stranger.toBase58(),
    });
    // The RFQ v2 program runs inside the route, never as a top-level instruction of its own.
    expect(unexpectedProgram([rfq])).toEqual({ index: 0, program: RFQ_V2_PROGRAM });
  });
});

describe("expiryProblem", () => {
  const now = 1_700_000_000_500; // 1,700,000,000 s and a half
  it("refuses an expire_at at or before now (whole seconds, floored)", () => {
    expect(expiryProblem(1_700_000_000n, now, 10, 5)).toBe("expire_at 1700000000 is past (now 1700000000)");
    expect(expiryProblem(1_699_999_999n, now, 10, 5)).toBe("expire_at 1699999999 is past (now 1700000000)");
    expect(expiryProblem(1_700_000_001n, now, 10, 5)).toBeUndefined();
  });

  it("allows up to the levels' validity plus the grace ahead, refuses one second more", () => {
    expect(expiryProblem(1_700_000_015n, now, 10, 5)).toBeUndefined();
    expect(expiryProblem(1_700_000_016n, now, 10, 5)).toBe(
      "expire_at 1700000016 is more than 15 s ahead (latest 1700000015): longer than levels stay valid",
    );
  });
});

/** A bid leg (the taker pays USDC for SOL) of two levels; only the fields the signer's reading uses. */
function leg(over: Partial<V2Leg> = {}): V2Leg {
  return {
    takerSide: "bid",
    inAmount: 1_000_000n,
    lotSizeBase: 1_000_000n,
    levels: [
      { lots: 5n, perLot: 150_000n },
      { lots: 3n, perLot: 151_000n },
    ],
    expireAt: 1_700_000_010n,
    baseMint: new PublicKey(MINT.SOL),
    quoteMint: new PublicKey(MINT.USDC),
    taker: Keypair.generate().publicKey,
    ...over,
  } as V2Leg;
}

/** The set the webhook claims: the same two levels, valid until expire_at. */
function claimed(over: Partial<ClaimedLevelsWire> = {}): ClaimedLevelsWire {
  return {
    pair: "SOL/USDC",
    sequence: "17",
    lotSizeBase: "1000000",
    validUntilMs: 1_700_000_010_000,
    levels: [
      { lots: "5", perLot: "150000" },
      { lots: "3", perLot: "151000" },
    ],
    ...over,
  };
}

describe("claimProblem", () => {
  it("accepts a swap that is the claimed set, and one shallower, smaller or worse for the taker", () => {
    expect(claimProblem(leg(), claimed())).toBeUndefined();
    expect(claimProblem(leg({ levels: [{ lots: 4n, perLot: 150_001n }] }), claimed())).toBeUndefined();
    expect(
      claimProblem(leg({ takerSide: "ask", levels: [{ lots: 5n, perLot: 149_999n }] }), claimed()),
    ).toBeUndefined();
    expect(claimProblem(leg({ takerSide: "ask" }), claimed())).toBeUndefined();
  });

  it("refuses another lot", () => {
    expect(claimProblem(leg({ lotSizeBase: 999_999n }), claimed())).toBe(
      "the swap's lot 999999 is not the claimed set's 1000000",
    );
  });

  it("refuses more levels than the claimed set holds", () => {
    expect(claimProblem(leg(), claimed({ levels: [{ lots: "5", perLot: "150000" }] }))).toBe(
      "the swap has 2 levels, the claimed set 1",
    );
  });

  it("refuses a level with more lots, or better for the taker (cheaper for a bid, dearer for an ask)", () => {
    expect(claimProblem(leg({ levels: [{ lots: 6n, perLot: 150_000n }] }), claimed())).toBe(
      "level 0 (6 lots at 150000) is larger or better for the taker than the claimed 5 at 150000",
    );
    expect(
      claimProblem(
        leg({
          levels: [
            { lots: 5n, perLot: 150_000n },
            { lots: 3n, perLot: 150_999n },
          ],
        }),
        claimed(),
      ),
    ).toBe("level 1 (3 lots at 150999) is larger or better for the taker than the claimed 3 at 151000");
    expect(claimProblem(leg({ takerSide: "ask", levels: [{ lots: 5n, perLot: 150_001n }] }), claimed())).toBe(
      "level 0 (5 lots at 150001) is larger or better for the taker than the claimed 5 at 150000",
    );
  });

  it("refuses an expire_at past the claimed set's validity, to the millisecond", () => {
    expect(claimProblem(leg(), claimed({ validUntilMs: 1_700_000_009_999 }))).toBe(
      "expire_at 1700000010 is later than the claimed set's validity (1700000009999 ms)",
    );
  });
});

describe("makerTrade", () => {
  it("a bid taker pays quote and takes base: the maker receives USDC and pays SOL by the walk", () => {
    // 1,000,000 micro-USDC: 5 lots at 150,000 and 1 at 151,000 (901,000 spent), 6,000,000 lamports out.
    expect(makerTrade(leg())).toEqual({
      mintIn: MINT.USDC,
      amountIn: 901_000n,
      mintOut: MINT.SOL,
      amountOut: 6_000_000n,
      lots: 6n,
    });
  });

  it("an ask taker pays base and takes quote: the maker receives SOL and pays USDC", () => {
    // 6,500,000 lamports: 6 lots of 1,000,000 (5 at 150,000, 1 at 151,000).
    expect(makerTrade(leg({ takerSide: "ask", inAmount: 6_500_000n }))).toEqual({
      mintIn: MINT.SOL,
      amountIn: 6_000_000n,
      mintOut: MINT.USDC,
      amountOut: 901_000n,
      lots: 6n,
    });
  });
});

describe("v2PairsOf", () => {
  it("keys every band's pair both ways round, the reverse named QUOTE/BASE with its tokens swapped", () => {
    const SOL = token("SOL");
    const USDC = token("USDC");
    const band: PairBand = { pair: "SOL/USDC", base: SOL, quote: USDC, priceSource: "own", bandBps: 50 };
    const pairs = v2PairsOf(new Map([["SOL/USDC", band]]));
    expect([...pairs.entries()]).toEqual([
      [`${SOL.mint}/${USDC.mint}`, { pairKey: "SOL/USDC", base: SOL, quote: USDC }],
      [`${USDC.mint}/${SOL.mint}`, { pairKey: "USDC/SOL", base: USDC, quote: SOL }],
    ]);
  });
});

/**
 * The route plan read exactly: every variant of the published `Swap` enum (jup-ag/rfq-v2-sdk,
 * fill-decoder/src/aggregator.rs, tags 0-125) beside an RFQ v2 step, each payload's length as the enum
 * lays it out (checked by the step's bps and indexes read right after it, and by the data ending there);
 * a tag outside the enum and a value Borsh refuses make the plan unreadable.
 */
import { describe, expect, it } from "vitest";
import { encodeV2FillData } from "../../sandbox/rfq-v2/build.ts";
import { decodeRouteV2, ROUTE_V2_DISCRIMINATOR, sweep } from "../../src/program/rfq-v2.ts";

/** Payload bytes of each fixed-size variant, as aggregator.rs declares its fields; unlisted tags: none. */
const FIXED: Record<number, number> = {
  8: 1,
  12: 1,
  15: 1,
  16: 1,
  17: 1,
  18: 1,
  21: 1,
  23: 1,
  24: 1,
  27: 1,
  28: 1,
  29: 16,
  33: 4,
  39: 1,
  41: 4,
  42: 3,
  43: 10,
  44: 5,
  45: 5,
  58: 1,
  60: 1,
  61: 1,
  64: 1,
  71: 2,
  81: 8,
  82: 8,
  85: 1,
  86: 2,
  87: 9,
  89: 1,
  94: 1,
  95: 1,
  104: 1,
  106: 1,
  107: 1,
  110: 1,
  116: 1,
  117: 1,
  118: 9,
  119: 1,
  121: 1,
  122: 16,
  123: 48,
  125: 1,
};
/** The shortest payload of each variable variant: Option None, empty Vec. */
const VARIABLE: Record<number, number[]> = {
  47: [0, 0], // WhirlpoolSwapV2: a_to_b, Option<RemainingAccountsInfo> None
  75: [0, 0, 0, 0], // MeteoraDlmmSwapV2: RemainingAccountsInfo with no slice
  103: [0, 0], // DefiTuna: a_to_b, None
  111: [0, 0, 0, 0, 0], // DynamicV1: no candidate, best_position None
};
/** Tags whose first payload byte is a bool or a JupSide (Borsh accepts 0 and 1 only). */
const FIRST_IS_BOOL_OR_SIDE = [
  8, 12, 15, 16, 17, 18, 21, 23, 24, 27, 28, 39, 47, 58, 60, 61, 64, 85, 86, 89, 94, 95, 103, 104, 106, 107,
  110, 116, 117, 119, 121, 125,
];

const u16 = (v: number) => Buffer.from([v & 0xff, v >> 8]);
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
};
const rfqStep = (): Buffer => {
  const fill = encodeV2FillData({
    expireAt: 2_000_000_000n,
    tickSizeQpb: 1n,
    lotSizeBase: 1_000n,
    levels: [{ pxTicks: 99n, qtyLots: 10n }],
  });
  return Buffer.concat([Buffer.from([120, 1]), u32(fill.length), fill, u16(10_000), Buffer.from([0, 1])]);
};
const step = (tag: number, payload: number[] | Buffer, bps = 4321, input = 1, output = 2) =>
  Buffer.concat([Buffer.from([tag]), Buffer.from(payload), u16(bps), Buffer.from([input, output])]);
function route(...steps: Buffer[]): Uint8Array {
  const head = Buffer.alloc(22);
  head.writeBigUInt64LE(5_000n, 0);
  head.writeBigUInt64LE(400n, 8);
  return Buffer.concat([Buffer.from(ROUTE_V2_DISCRIMINATOR), head, u32(steps.length), ...steps]);
}

describe("the route plan, read step by step", () => {
  const tags = Array.from({ length: 126 }, (_v, t) => t).filter((t) => t !== 120);
  it.each(tags)("reads swap %i's payload to its end beside the RFQ v2 step", (tag) => {
    const payload = VARIABLE[tag] ?? new Array<number>(FIXED[tag] ?? 0).fill(0);
    for (const steps of [
      [rfqStep(), step(tag, payload)],
      [step(tag, payload), rfqStep()],
    ]) {
      const r = decodeRouteV2(route(...steps));
      expect(r.ok || r.detail).toBe(true);
      if (!r.ok) return;
      const other = r.leg.steps.find((s) => !s.rfq);
      expect(other).toEqual({ tag, bps: 4321, inputIndex: 1, outputIndex: 2 });
      expect(r.leg.steps).toHaveLength(2);
      expect(r.leg.rfqStep).toBe(steps[0]?.[0] === 120 ? 0 : 1);
      expect(r.leg.levels).toEqual([{ perLot: 99n, lots: 10n }]);
    }
  });

  it.each(FIRST_IS_BOOL_OR_SIDE)("reads swap %i's first byte 1, and refuses 2 as unreadable", (tag) => {
    const payload = [...(VARIABLE[tag] ?? new Array<number>(FIXED[tag] ?? 0).fill(0))];
    payload[0] = 1;
    expect(decodeRouteV2(route(rfqStep(), step(tag, payload))).ok).toBe(true);
    payload[0] = 2;
    const r = decodeRouteV2(route(rfqStep(), step(tag, payload)));
    expect(r.ok ? "read" : r.problem).toBe("unreadable");
  });

  it("reads remaining-accounts slices, Some options and every candidate swap of DynamicV1", () => {
    const rai = [...u32(2), 1, 2, 3, 4];
    const candidates = [
      ...u32(3),
      0,
      ...new Array<number>(8).fill(7),
      1, // HumidiFi { swap_id, is_base_to_quote }
      1,
      1, // TesseraV { side: Ask }
      2,
      ...new Array<number>(8).fill(9),
      0, // HumidiFiV2
      1,
      5, // best_position Some(5)
    ];
    for (const [tag, payload] of [
      [75, rai],
      [47, [1, 1, ...rai]],
      [103, [0, 1, ...rai]],
      [111, candidates],
    ] as const) {
      const r = decodeRouteV2(route(rfqStep(), step(tag, [...payload])));
      expect(r.ok || r.detail).toBe(true);
      if (r.ok) expect(r.leg.steps[1]).toEqual({ tag, bps: 4321, inputIndex: 1, outputIndex: 2 });
    }
  });

  it("refuses as unreadable an Option tag 2, a candidate swap 3 and the tags the enum does not list", () => {
    const problem = (data: Uint8Array) => {
      const r = decodeRouteV2(data);
      return r.ok ? "read" : r.problem;
    };
    expect(problem(route(rfqStep(), step(47, [0, 2])))).toBe("unreadable");
    expect(problem(route(rfqStep(), step(111, [0, 0, 0, 0, 2])))).toBe("unreadable");
    expect(problem(route(rfqStep(), step(111, [...u32(1), 3, 0])))).toBe("unreadable");
    for (const tag of [126, 146, 151, 154, 255]) {
      expect(problem(route(rfqStep(), step(tag, [])))).toBe("unreadable");
      expect(problem(route(step(tag, []), rfqStep()))).toBe("unreadable");
    }
    const r = decodeRouteV2(route(rfqStep(), step(154, [])));
    expect(r.ok || r.detail).toBe(
      "route plan: step 1 is swap 154, not in the published enum (0-125): its length is unknown",
    );
  });

  it("refuses as malformed a payload cut short, a plan with fewer steps than it counts, and bytes after the last step", () => {
    const problem = (data: Uint8Array) => {
      const r = decodeRouteV2(data);
      return r.ok ? "read" : r.problem;
    };
    expect(problem(route(rfqStep(), step(29, new Array<number>(15).fill(0))))).toBe("malformed");
    const short = Buffer.from(route(rfqStep(), step(123, new Array<number>(48).fill(0))));
    expect(problem(short.subarray(0, short.length - 1))).toBe("malformed");
    const counted = Buffer.from(route(rfqStep()));
    counted.writeUInt32LE(2, 30);
    expect(problem(counted)).toBe("malformed");
    expect(problem(Buffer.concat([route(rfqStep()), Buffer.from([0])]))).toBe("malformed");
  });

  it("finds no RFQ leg in a plan without one or with two, and reads a lone RFQ step", () => {
    const none = decodeRouteV2(route(step(17, [1]), step(26, [])));
    expect(none.ok ? "read" : none.problem).toBe("not-found");
    const two = decodeRouteV2(route(rfqStep(), rfqStep()));
    expect(two.ok ? "read" : two.problem).toBe("not-found");
    expect(two.ok || two.detail).toBe(
      "the route's 2 step(s) hold 2 RFQ v2 legs (swap 120): exactly one is signed",
    );
    const lone = decodeRouteV2(route(rfqStep()));
    expect(lone.ok && lone.leg).toMatchObject({
      takerSide: "ask",
      inAmount: 5_000n,
      quotedOutAmount: 400n,
      bps: 10_000,
      inputIndex: 0,
      outputIndex: 1,
      rfqStep: 0,
      lotSizeBase: 1_000n,
    });
  });
});

describe("what the maker is told about a route it cannot read", () => {
  const detail = (data: Uint8Array) => {
    const r = decodeRouteV2(data);
    return r.ok ? "read" : `${r.problem}: ${r.detail}`;
  };
  const fillStep = (fill: Buffer, side = 1) =>
    Buffer.concat([Buffer.from([120, side]), u32(fill.length), fill, u16(10_000), Buffer.from([0, 1])]);
  const fill = (levels: { pxTicks: bigint; qtyLots: bigint }[]) =>
    encodeV2FillData({ expireAt: 2_000_000_000n, tickSizeQpb: 3n, lotSizeBase: 1_000n, levels });

  it("names another instruction than route_v2, and data too short to hold a discriminator", () => {
    const other = Buffer.from(route(rfqStep()));
    other[0] = (other[0] as number) ^ 1;
    expect(detail(other)).toBe("not-found: not route_v2");
    expect(detail(Uint8Array.from([187, 100, 250]))).toBe(
      "malformed: route data: data ends at byte 3, 8 more needed at 0",
    );
  });

  it("says where the bytes ran out, and that bytes follow the last step", () => {
    expect(detail(route(rfqStep(), step(29, new Array<number>(15).fill(0))))).toBe(
      "malformed: route data: data ends at byte 108, 1 more needed at 108",
    );
    expect(detail(Buffer.concat([route(rfqStep()), Buffer.from([0])]))).toBe(
      "malformed: route data continues after its last step",
    );
  });

  it("says which value Borsh refuses, and where", () => {
    expect(detail(route(rfqStep(), step(17, [2])))).toBe(
      "unreadable: route plan: bool 2 is not a value Borsh reads (0-1)",
    );
    expect(detail(route(rfqStep(), step(12, [3])))).toBe(
      "unreadable: route plan: side 3 is not a value Borsh reads (0-1)",
    );
    expect(detail(route(rfqStep(), step(47, [0, 2])))).toBe(
      "unreadable: route plan: Option 2 is not a value Borsh reads (0-1)",
    );
    expect(detail(route(rfqStep(), step(111, [0, 0, 0, 0, 2])))).toBe(
      "unreadable: route plan: Option 2 is not a value Borsh reads (0-1)",
    );
    expect(detail(route(rfqStep(), step(111, [...u32(1), 3, 0])))).toBe(
      "unreadable: route plan: candidate swap 3 is not a value Borsh reads (0-2)",
    );
  });

  it("counts the RFQ v2 steps of a plan without one", () => {
    expect(detail(route(step(17, [1]), step(26, [])))).toBe(
      "not-found: the route's 2 step(s) hold 0 RFQ v2 legs (swap 120): exactly one is signed",
    );
  });

  it("refuses fill data that runs on after its levels, and fill data cut inside a level", () => {
    const one = [{ pxTicks: 99n, qtyLots: 10n }];
    expect(detail(route(fillStep(Buffer.concat([fill(one), Buffer.from([0])]))))).toBe(
      "malformed: fill data continues after its levels",
    );
    const cut = fill([...one, { pxTicks: 98n, qtyLots: 5n }]);
    expect(detail(route(fillStep(cut.subarray(0, cut.length - 8))))).toBe(
      "malformed: fill data: data ends at byte 52, 8 more needed at 52",
    );
  });
});

describe("the route's head and its RFQ v2 step, read", () => {
  it("reads the fee, the Bid side and each level's price per lot as px_ticks x tick_size", () => {
    const data = Buffer.from(
      route(
        Buffer.concat([
          Buffer.from([120, 0]),
          u32(60),
          encodeV2FillData({
            expireAt: 2_000_000_000n,
            tickSizeQpb: 3n,
            lotSizeBase: 1_000n,
            levels: [
              { pxTicks: 99n, qtyLots: 10n },
              { pxTicks: 100n, qtyLots: 4n },
            ],
          }),
          u16(7_000),
          Buffer.from([2, 3]),
        ]),
      ),
    );
    data.writeUInt16LE(50, 24); // slippage_bps
    data.writeUInt16LE(12, 26); // platform_fee_bps
    data.writeUInt16LE(9, 28); // positive_slippage_bps
    // Read from inside a larger buffer, as a message's instruction data is.
    const inside = Buffer.concat([Buffer.from([9, 9, 9]), data]).subarray(3);
    const r = decodeRouteV2(inside);
    expect(r.ok && r.leg).toMatchObject({
      takerSide: "bid",
      inAmount: 5_000n,
      quotedOutAmount: 400n,
      platformFeeBps: 12,
      bps: 7_000,
      inputIndex: 2,
      outputIndex: 3,
      expireAt: 2_000_000_000n,
      tickSizeQpb: 3n,
      lotSizeBase: 1_000n,
      levels: [
        { perLot: 297n, lots: 10n },
        { perLot: 300n, lots: 4n },
      ],
    });
  });
});

describe("the program's walk of the levels", () => {
  it("walks whole lots level by level: a Bid pays per lot and gets lots of base, an Ask the reverse", () => {
    const ladder = [
      { perLot: 10n, lots: 2n },
      { perLot: 12n, lots: 5n },
    ];
    expect(sweep("bid", 45n, ladder, 100n)).toEqual({ spent: 44n, out: 400n, lots: 4n });
    expect(sweep("ask", 450n, ladder, 100n)).toEqual({ spent: 400n, out: 44n, lots: 4n });
    expect(sweep("bid", 1_000n, ladder, 100n)).toEqual({ spent: 80n, out: 700n, lots: 7n });
  });

  it("stops at a level of price 0 (or a lot of 0 base) instead of dividing by it", () => {
    const free = [
      { perLot: 0n, lots: 5n },
      { perLot: 10n, lots: 5n },
    ];
    expect(sweep("bid", 100n, free, 100n)).toEqual({ spent: 0n, out: 0n, lots: 0n });
    expect(sweep("ask", 100n, free, 0n)).toEqual({ spent: 0n, out: 0n, lots: 0n });
  });
});

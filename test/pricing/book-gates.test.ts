/**
 * The quoting book's gates and bounds, each through `price()` and, where the RFQ v2 ladders share it,
 * `ladders()`: the pause and the switches' outage, the pair switch, a missing, stale or zero price, the
 * size and u64 bounds with their edges, the notional cap at its edge, a source's own ladder, and the
 * standing ladders built from the levels. Prices come from a source whose points the test sets.
 */
import { describe, expect, it } from "vitest";
import { parseDecimal } from "../../amounts/decimal.ts";
import { U64_MAX } from "../../amounts/u64.ts";
import type { FileConfig } from "../../config/schema.ts";
import { type BookDeps, QuotingBook } from "../../pricing/book.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import type { Ladder, PricePoint, PriceSource } from "../../pricing/interface.ts";
import { UsdValuer } from "../../pricing/usd.ts";
import { MINT, testConfig } from "../support/config.ts";

const SOL = 1_000_000_000n;
const USDC = 1_000_000n;

/** A price source whose points the test sets (every pair of the default config prices from "static"). */
class SetPrices implements PriceSource {
  readonly name = "static";
  readonly points = new Map<string, PricePoint>();
  constructor(
    prices: Record<string, string>,
    readonly maxAgeMs = Number.POSITIVE_INFINITY,
  ) {
    for (const [pair, p] of Object.entries(prices))
      this.points.set(pair, { mid: parseDecimal(p), updatedAtMs: 0 });
  }
  price(pairKey: string): PricePoint | undefined {
    return this.points.get(pairKey);
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

const PRICES = {
  "SOL/USDC": "180.25",
  "SOL/USDT": "180.20",
  "JUP/USDC": "0.8125",
  "JUP/SOL": "0.0045",
  "USDC/USDT": "1.0001",
};

function setup(opts: { vary?: (f: FileConfig) => FileConfig; deps?: BookDeps; source?: SetPrices } = {}) {
  const config = testConfig({}, opts.vary);
  const source = opts.source ?? new SetPrices(PRICES);
  const sources = new Map<string, PriceSource>([["static", source]]);
  return { config, source, sources, book: new QuotingBook(config, sources, { now: () => 0, ...opts.deps }) };
}
const solUsdc =
  (change: Record<string, unknown>) =>
  (f: FileConfig): FileConfig => ({
    ...f,
    pairs: f.pairs.map((p) => (p.base === "SOL" && p.quote === "USDC" ? { ...p, ...change } : p)),
  });
const sellSol = (amount: bigint, quoteType: "exactIn" | "exactOut" = "exactIn") =>
  ({ tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount, quoteType }) as const;
const buySol = (amount: bigint, quoteType: "exactIn" | "exactOut" = "exactIn") =>
  ({ tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount, quoteType }) as const;
const refused = (code: string, context: string) => ({ ok: false, code, context });

/** Controls whose shared store cannot be read (as RedisControls after failClosedAfterMs). */
class LostControls extends MemoryControls {
  protected override known(): boolean {
    return false;
  }
}

describe("construction", () => {
  it("refuses a pair whose price source is not started, naming both", () => {
    expect(() => new QuotingBook(testConfig(), new Map())).toThrow(
      "pair SOL/USDC: price source static not started",
    );
  });

  it("refuses a notional cap on a pair whose quote token has no USD price", () => {
    const vary = (f: FileConfig): FileConfig => ({
      ...f,
      pairs: f.pairs
        .filter((p) => p.base === "JUP" && p.quote === "SOL")
        .map((p) => ({ ...p, maxNotionalUsd: "100" })),
    });
    const config = testConfig({}, vary);
    const sources = new Map<string, PriceSource>([["static", new SetPrices(PRICES)]]);
    const message = "pairs.JUP/SOL.maxNotionalUsd: no USD price for SOL";
    expect(() => new QuotingBook(config, sources)).toThrow(message);
    // No pair routes SOL to a stablecoin here.
    expect(() => new QuotingBook(config, sources, { usd: new UsdValuer(config, sources) })).toThrow(message);
  });

  it("caps a stablecoin-quoted pair without any USD prices", () => {
    const { book } = setup({ vary: solUsdc({ maxNotionalUsd: "1000" }) });
    expect(book.price(buySol(1_000n * USDC))).toMatchObject({ ok: true, amountIn: 1_000n * USDC });
  });
});

describe("the pause", () => {
  it("withdraws every quote and ladder while paused, and restores them on resume", async () => {
    const controls = new MemoryControls();
    const { book } = setup({ deps: { controls } });
    await controls.pause("test");
    expect(book.price(sellSol(SOL))).toEqual(refused("PAUSED", "quoting is paused"));
    expect(book.ladders("SOL/USDC")).toEqual(refused("PAUSED", "quoting is paused"));
    await controls.resume();
    expect(book.price(sellSol(SOL)).ok).toBe(true);
    expect(book.ladders("SOL/USDC").ok).toBe(true);
  });

  it("names an outage of the shared switches as such, not as a pause", () => {
    const { book } = setup({ deps: { controls: new LostControls() } });
    const outage = refused("CONTROLS_UNAVAILABLE", "the shared switches cannot be read");
    expect(book.price(sellSol(SOL))).toEqual(outage);
    expect(book.ladders("SOL/USDC")).toEqual(outage);
  });

  it("is a pause for switches that cannot report an outage", () => {
    const { book } = setup({ deps: { controls: { isPaused: () => true, pairOverride: () => undefined } } });
    expect(book.price(sellSol(SOL))).toEqual(refused("PAUSED", "quoting is paused"));
  });
});

describe("the pair switch", () => {
  it("switches one pair off at run time and back to its configuration on null", async () => {
    const controls = new MemoryControls();
    const { book } = setup({ deps: { controls } });
    await controls.setPair("SOL/USDC", false);
    expect(book.price(sellSol(SOL))).toEqual(refused("PAIR_DISABLED", "SOL/USDC is disabled"));
    expect(book.ladders("SOL/USDC")).toEqual(refused("PAIR_DISABLED", "SOL/USDC is disabled"));
    expect(book.price({ tokenIn: MINT.SOL, tokenOut: MINT.USDT, amount: SOL, quoteType: "exactIn" }).ok).toBe(
      true,
    );
    await controls.setPair("SOL/USDC", null);
    expect(book.price(sellSol(SOL)).ok).toBe(true);
  });

  it("switches a pair the configuration disables on at run time", async () => {
    const controls = new MemoryControls();
    const { book } = setup({ vary: solUsdc({ enabled: false }), deps: { controls } });
    expect(book.price(sellSol(SOL))).toEqual(refused("PAIR_DISABLED", "SOL/USDC is disabled"));
    await controls.setPair("SOL/USDC", true);
    expect(book.price(sellSol(SOL)).ok).toBe(true);
    expect(book.ladders("SOL/USDC").ok).toBe(true);
  });
});

describe("the pair's price", () => {
  it("declines a pair the source has no price for", () => {
    const { book, source } = setup();
    source.points.delete("SOL/USDC");
    expect(book.price(sellSol(SOL))).toEqual(refused("PRICE_UNAVAILABLE", "no price for SOL/USDC"));
    expect(book.ladders("SOL/USDC")).toEqual(refused("PRICE_UNAVAILABLE", "no price for SOL/USDC"));
  });

  it("quotes a price exactly as old as the source allows, and declines one a millisecond older", () => {
    let now = 1_500;
    const source = new SetPrices(PRICES, 1_000);
    source.points.set("SOL/USDC", { mid: parseDecimal("180.25"), updatedAtMs: 500 });
    const { book } = setup({ source, deps: { now: () => now } });
    expect(book.price(sellSol(SOL)).ok).toBe(true);
    expect(book.ladders("SOL/USDC").ok).toBe(true);
    now = 1_501;
    expect(book.price(sellSol(SOL))).toEqual(refused("PRICE_STALE", "SOL/USDC price is 1001 ms old"));
    expect(book.ladders("SOL/USDC")).toEqual(refused("PRICE_STALE", "SOL/USDC price is 1001 ms old"));
  });

  it("declines a zero price", () => {
    const { book } = setup({ source: new SetPrices({ ...PRICES, "SOL/USDC": "0" }) });
    expect(book.price(sellSol(SOL))).toEqual(refused("PRICE_UNAVAILABLE", "SOL/USDC price is zero"));
    expect(book.ladders("SOL/USDC")).toEqual(refused("PRICE_UNAVAILABLE", "SOL/USDC price is zero"));
  });

  it("names the mints of a pair it does not trade, and the pair key of a ladder it does not have", () => {
    const { book } = setup();
    expect(book.price({ tokenIn: MINT.USDT, tokenOut: MINT.JUP, amount: 1n, quoteType: "exactIn" })).toEqual(
      refused("PAIR_NOT_SUPPORTED", `no pair trades ${MINT.USDT} for ${MINT.JUP}`),
    );
    const unknown = "11111111111111111111111111111111";
    expect(book.price({ tokenIn: unknown, tokenOut: MINT.SOL, amount: 1n, quoteType: "exactIn" })).toEqual(
      refused("PAIR_NOT_SUPPORTED", `no pair trades ${unknown} for ${MINT.SOL}`),
    );
    expect(book.ladders("SOL/JUP")).toEqual(refused("PAIR_NOT_SUPPORTED", "no pair SOL/JUP"));
  });
});

describe("size and amount bounds", () => {
  it("declines a size that rounds to nothing, naming the amount", () => {
    const { book } = setup();
    expect(book.price(sellSol(1n))).toEqual(refused("AMOUNT_TOO_SMALL", "SOL/USDC: 1 rounds to nothing"));
  });

  it("quotes the pair's minimum size and declines one unit less", () => {
    const { book } = setup();
    expect(book.price(sellSol(1_000_000n)).ok).toBe(true);
    expect(book.price(sellSol(999_999n))).toEqual(
      refused("SIZE_BELOW_MIN", "SOL/USDC size 999999 below 1000000"),
    );
  });

  it("quotes the pair's maximum size and declines one unit more, below the last level's bound", () => {
    const { book } = setup({
      vary: solUsdc({
        levels: [
          { upToBase: "10000000000", spreadBps: 5 },
          { upToBase: "600000000000", spreadBps: 25 },
        ],
      }),
    });
    expect(book.price(sellSol(500n * SOL)).ok).toBe(true);
    // The last level's band ends at maxBase: one unit more is beyond it.
    expect(book.price(sellSol(500n * SOL + 1n))).toEqual(
      refused("SIZE_ABOVE_MAX", "SOL/USDC: 500000000001 is beyond the last level"),
    );
    expect(book.price(sellSol(600n * SOL + 1n))).toEqual(
      refused("SIZE_ABOVE_MAX", "SOL/USDC: 600000000001 is beyond the last level"),
    );
  });

  describe("u64 on the quote side (SOL at 1,000,000 USDC: a lamport is worth 1,000 USDC units)", () => {
    const huge = () =>
      setup({
        source: new SetPrices({ ...PRICES, "SOL/USDC": "1000000" }),
        vary: solUsdc({
          maxBase: U64_MAX.toString(),
          levels: [{ upToBase: U64_MAX.toString(), spreadBps: 0 }],
        }),
      }).book;
    const tooLarge = refused("AMOUNT_TOO_LARGE", "SOL/USDC: amount exceeds u64");

    it("quotes u64's largest amount the taker pays and declines one more", () => {
      expect(huge().price(buySol(U64_MAX))).toMatchObject({
        ok: true,
        amountIn: U64_MAX,
        amountOut: U64_MAX / 1_000n,
      });
      expect(huge().price(buySol(U64_MAX + 1n))).toEqual(tooLarge);
    });

    it("quotes u64's largest amount the taker receives and declines one more", () => {
      expect(huge().price(sellSol(U64_MAX, "exactOut"))).toMatchObject({ ok: true, amountOut: U64_MAX });
      expect(huge().price(sellSol(U64_MAX + 1n, "exactOut"))).toEqual(tooLarge);
    });
  });
});

describe("the notional cap", () => {
  it("quotes exactly the cap on either side and declines one quote unit more", () => {
    const { book } = setup({ vary: solUsdc({ maxNotionalUsd: "1000.5" }) });
    const exceeded = refused("NOTIONAL_EXCEEDED", "SOL/USDC: notional above 1000.5 USD");
    expect(book.price(buySol(1_000_500_000n)).ok).toBe(true);
    expect(book.price(buySol(1_000_500_001n))).toEqual(exceeded);
    expect(book.price(sellSol(1_000_500_000n, "exactOut")).ok).toBe(true);
    expect(book.price(sellSol(1_000_500_001n, "exactOut"))).toEqual(exceeded);
  });

  it("declines a pair quoted in SOL when SOL's USD price is stale", () => {
    const source = new SetPrices(PRICES, 1_000);
    let now = 0;
    const vary = (f: FileConfig): FileConfig => ({
      ...f,
      pairs: f.pairs.map((p) =>
        p.base === "JUP" && p.quote === "SOL" ? { ...p, maxNotionalUsd: "100" } : p,
      ),
    });
    const config = testConfig({}, vary);
    const sources = new Map<string, PriceSource>([["static", source]]);
    const book = new QuotingBook(config, sources, {
      now: () => now,
      usd: new UsdValuer(config, sources, () => now),
    });
    const jup = { tokenIn: MINT.JUP, tokenOut: MINT.SOL, amount: 10_000_000n, quoteType: "exactIn" } as const;
    expect(book.price(jup).ok).toBe(true);
    now = 5_000;
    source.points.set("JUP/SOL", { mid: parseDecimal("0.0045"), updatedAtMs: 5_000 });
    expect(book.price(jup)).toEqual(
      refused("PRICE_UNAVAILABLE", "JUP/SOL: no fresh USD price for the notional cap"),
    );
  });
});

describe("what a quote reports", () => {
  it("gives the pair, the taker's side, the base size, the level's spread, no skew and no ladder", () => {
    const { book } = setup();
    expect(book.price(sellSol(SOL))).toEqual({
      ok: true,
      amountIn: SOL,
      // 10,000 lots of 0.0001 SOL at 18,025 x 0.9995 = 18,015.9875 -> 18,015 USDC units per lot
      amountOut: 10_000n * 18_015n,
      pairKey: "SOL/USDC",
      takerSide: "sell",
      baseAmount: SOL,
      spreadBps: 5,
      skewBps: 0,
      fromLadder: false,
    });
    expect(book.price(buySol(SOL, "exactOut"))).toMatchObject({
      takerSide: "buy",
      baseAmount: SOL,
      spreadBps: 5,
    });
  });

  it("prices a size exactly at a level's bound at that level, and one unit more at the next", () => {
    const { book } = setup();
    expect(book.price(sellSol(10n * SOL))).toMatchObject({ ok: true, spreadBps: 5 });
    expect(book.price(sellSol(10n * SOL + 1n))).toMatchObject({ ok: true, spreadBps: 10 });
  });

  it("declines a spread that leaves no positive price (a flagged taker's extra spread of 100 %)", () => {
    const { book } = setup();
    const none = refused("PRICE_UNAVAILABLE", "SOL/USDC: price after spread and skew is not positive");
    expect(book.price({ ...sellSol(SOL), extraSpreadBps: 9_995 })).toEqual(none);
    expect(book.price({ ...sellSol(SOL), extraSpreadBps: 9_994 }).ok).toBe(true);
  });
});

describe("skew", () => {
  const skewed = (f: FileConfig): FileConfig => ({
    ...solUsdc({ skew: { maxBps: 20, fullAtBase: (100n * SOL).toString() } })(f),
    tokens: f.tokens.map((t) =>
      t.symbol === "SOL" ? { ...t, targetInventory: (100n * SOL).toString() } : t,
    ),
  });
  const skewAt = (position: bigint | undefined, vary = skewed) => {
    const q = setup({ vary, deps: { position: () => position } }).book.price(sellSol(SOL));
    return q.ok ? q.skewBps : q.code;
  };

  it("is the position off target over fullAtBase, times maxBps, truncated toward zero", () => {
    expect(skewAt(150n * SOL)).toBe(10);
    expect(skewAt(50n * SOL)).toBe(-10);
    expect(skewAt(104n * SOL + SOL / 2n)).toBe(0); // 0.9 bps
    expect(skewAt(95n * SOL + SOL / 2n)).toBe(0); // -0.9 bps
  });

  it("stops at maxBps either way", () => {
    expect(skewAt(400n * SOL)).toBe(20);
    expect(skewAt(0n)).toBe(-20);
    expect(skewAt(-100n * SOL)).toBe(-20);
  });

  it("is zero when the position is unknown, or the pair has no skew", () => {
    expect(skewAt(undefined)).toBe(0);
    expect(skewAt(400n * SOL, (f) => ({ ...f, tokens: skewed(f).tokens }))).toBe(0);
    expect(setup({ vary: skewed }).book.price(sellSol(SOL))).toMatchObject({ ok: true, skewBps: 0 });
  });
});

/** SOL/USDC from the source's own ladder: bids 180.00 then 179.00, asks 180.50 then 181.50. */
const LADDER: Ladder = {
  bids: [
    { upToBase: 10n * SOL, price: parseDecimal("180.00") },
    { upToBase: 500n * SOL, price: parseDecimal("179.00") },
  ],
  asks: [
    { upToBase: 10n * SOL, price: parseDecimal("180.50") },
    { upToBase: 500n * SOL, price: parseDecimal("181.50") },
  ],
};
const withLadder = (ladder: Ladder = LADDER) => {
  const source = new SetPrices(PRICES);
  source.points.set("SOL/USDC", { mid: parseDecimal("180.25"), ladder, updatedAtMs: 0 });
  return source;
};

describe("a source's own ladder", () => {
  it("prices each side at its rung for the size, with the rung's distance from mid as the spread", () => {
    const { book } = setup({ source: withLadder() });
    // 0.25 from 180.25 is 13.87 bps, 1.25 is 69.3 bps (floored)
    expect(book.price(sellSol(SOL))).toMatchObject({
      ok: true,
      amountOut: 180n * USDC,
      spreadBps: 13,
      fromLadder: true,
    });
    // swept: the first 10 SOL at 180.00, the next 10 at 179.00; the marginal rung's spread
    expect(book.price(sellSol(20n * SOL))).toMatchObject({
      ok: true,
      amountOut: 10n * 180n * USDC + 10n * 179n * USDC,
      spreadBps: 69,
    });
    expect(book.price(buySol(SOL, "exactOut"))).toMatchObject({
      ok: true,
      amountIn: 180_500_000n,
      spreadBps: 13,
    });
    expect(book.price(buySol(20n * SOL, "exactOut"))).toMatchObject({
      ok: true,
      amountIn: 10n * 180_500_000n + 10n * 181_500_000n,
      spreadBps: 69,
    });
  });

  it("adds a flagged taker's extra spread to the rung's price and to the reported spread", () => {
    const { book } = setup({ source: withLadder() });
    expect(book.price({ ...sellSol(SOL), extraSpreadBps: 10 })).toMatchObject({
      ok: true,
      amountOut: (180n * USDC * 9_990n) / 10_000n,
      spreadBps: 23,
    });
    // 18,050 USDC units per lot x 1.001 = 18,068.05 -> 18,069
    expect(book.price({ ...buySol(SOL, "exactOut"), extraSpreadBps: 10 })).toMatchObject({
      ok: true,
      amountIn: 10_000n * 18_069n,
      spreadBps: 23,
    });
    const none = refused("PRICE_UNAVAILABLE", "SOL/USDC: price after spread and skew is not positive");
    expect(book.price({ ...sellSol(SOL), extraSpreadBps: 10_000 })).toEqual(none);
  });

  it("moves the rungs by the skew", () => {
    const vary = (f: FileConfig): FileConfig => ({
      ...solUsdc({ skew: { maxBps: 20, fullAtBase: (100n * SOL).toString() } })(f),
      tokens: f.tokens.map((t) =>
        t.symbol === "SOL" ? { ...t, targetInventory: (100n * SOL).toString() } : t,
      ),
    });
    const { book } = setup({ source: withLadder(), vary, deps: { position: () => 150n * SOL } });
    expect(book.price(sellSol(SOL))).toMatchObject({
      ok: true,
      amountOut: (180n * USDC * 9_990n) / 10_000n,
      skewBps: 10,
    });
    // 18,050 USDC units per lot x 0.999 = 18,031.95 -> 18,032
    expect(book.price(buySol(SOL, "exactOut"))).toMatchObject({ ok: true, amountIn: 10_000n * 18_032n });
    const ladders = book.ladders("SOL/USDC");
    expect(ladders.ok && ladders.bids[0]).toEqual({ upToBase: 10n * SOL, perLot: 17_982n });
    expect(ladders.ok && ladders.asks[0]).toEqual({ upToBase: 10n * SOL, perLot: 18_032n });
  });

  it("stands as the pair's ladders, cut at maxBase, stopping before a rung priced at zero", () => {
    const ladder: Ladder = {
      bids: [
        { upToBase: 10n * SOL, price: parseDecimal("180.00") },
        { upToBase: 20n * SOL, price: parseDecimal("0") },
        { upToBase: 500n * SOL, price: parseDecimal("179.00") },
      ],
      asks: [
        { upToBase: 10n * SOL, price: parseDecimal("180.50") },
        { upToBase: 900n * SOL, price: parseDecimal("181.50") },
      ],
    };
    const l = setup({ source: withLadder(ladder) }).book.ladders("SOL/USDC");
    expect(l.ok).toBe(true);
    if (!l.ok) return;
    // per lot of 0.0001 SOL: 180.00 -> 18,000 USDC units, 180.50 -> 18,050, 181.50 -> 18,150
    expect(l.bids).toEqual([{ upToBase: 10n * SOL, perLot: 18_000n }]);
    expect(l.asks).toEqual([
      { upToBase: 10n * SOL, perLot: 18_050n },
      { upToBase: 500n * SOL, perLot: 18_150n },
    ]);
  });

  it("stands a source's ladder that ends below maxBase as it is, every rung", () => {
    const short: Ladder = { bids: LADDER.bids.slice(0, 1), asks: LADDER.asks.slice(0, 1) };
    const l = setup({ source: withLadder(short) }).book.ladders("SOL/USDC");
    expect(l.ok && l.bids.map((r) => r.upToBase)).toEqual([10n * SOL]);
    expect(l.ok && l.asks.map((r) => r.upToBase)).toEqual([10n * SOL]);
  });
});

describe("standing ladders from the levels", () => {
  it("prices each level at mid less (bids) or plus (asks) its spread, in whole USDC units per lot rounded the maker's way", () => {
    const l = setup().book.ladders("SOL/USDC");
    expect(l.ok).toBe(true);
    if (!l.ok) return;
    const rung = (upToBase: bigint, perLot: bigint) => ({ upToBase, perLot });
    expect(l).toMatchObject({
      pairKey: "SOL/USDC",
      minBase: 1_000_000n,
      maxBase: 500n * SOL,
      lotSizeBase: 100_000n,
    });
    expect(l.base.symbol).toBe("SOL");
    expect(l.quote.symbol).toBe("USDC");
    // 18,025 per lot at mid: x 0.9995 = 18,015.9875, x 0.9990 = 18,006.975, x 0.9975 = 17,979.9375 (down)
    expect(l.bids).toEqual([rung(10n * SOL, 18_015n), rung(100n * SOL, 18_006n), rung(500n * SOL, 17_979n)]);
    // x 1.0005 = 18,034.0125, x 1.0010 = 18,043.025, x 1.0025 = 18,070.0625 (up)
    expect(l.asks).toEqual([rung(10n * SOL, 18_035n), rung(100n * SOL, 18_044n), rung(500n * SOL, 18_071n)]);
  });

  it("ends at the level that reaches maxBase, cut to it", () => {
    const vary = solUsdc({
      maxBase: (50n * SOL).toString(),
      levels: [
        { upToBase: "10000000000", spreadBps: 5 },
        { upToBase: "100000000000", spreadBps: 10 },
        { upToBase: "500000000000", spreadBps: 25 },
      ],
    });
    const l = setup({ vary }).book.ladders("SOL/USDC");
    expect(l.ok && l.bids.map((r) => r.upToBase)).toEqual([10n * SOL, 50n * SOL]);
    expect(l.ok && l.asks.map((r) => r.upToBase)).toEqual([10n * SOL, 50n * SOL]);
  });

  it("uses each side's own levels", () => {
    const vary = solUsdc({
      bidLevels: [{ upToBase: "500000000000", spreadBps: 7 }],
      askLevels: [
        { upToBase: "1000000000", spreadBps: 2 },
        { upToBase: "500000000000", spreadBps: 9 },
      ],
    });
    const l = setup({ vary }).book.ladders("SOL/USDC");
    // 18,025 x 0.9993 = 18,012.3825 -> 18,012; x 1.0002 = 18,028.605 -> 18,029; x 1.0009 = 18,041.2225 -> 18,042
    expect(l.ok && l.bids.map((r) => r.perLot)).toEqual([18_012n]);
    expect(l.ok && l.asks.map((r) => r.perLot)).toEqual([18_029n, 18_042n]);
  });
});

describe("one model of size: the levels swept one by one, in whole USDC units per lot", () => {
  const withLot =
    (lot: string) =>
    (f: FileConfig): FileConfig => ({
      ...f,
      rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"], lotSizeBase: { "SOL/USDC": lot } },
    });

  it("prices with the configured lot (rfqV2.lotSizeBase) and stands the ladder in it", () => {
    const { book } = setup({ vary: withLot("1000000000") });
    // one whole SOL per lot: 180.25 x 0.9995 = 180.159875 -> 180.159875 USDC exactly (no rounding)
    expect(book.ladders("SOL/USDC")).toMatchObject({ lotSizeBase: SOL });
    expect(book.price(sellSol(SOL))).toMatchObject({ ok: true, amountOut: 180_159_875n });
    // a lot of 1 lamport: 0.18025 x 0.9995 = 0.180159875 -> 0 units per lot: no positive price at all
    const tiny = setup({ vary: withLot("1") }).book;
    const none = refused("PRICE_UNAVAILABLE", "SOL/USDC: price after spread and skew is not positive");
    expect(tiny.price(sellSol(SOL))).toEqual(none);
    expect(tiny.ladders("SOL/USDC")).toMatchObject({ ok: true, bids: [], lotSizeBase: 1n });
  });

  it("refuses a configured lot of zero, naming the key", () => {
    expect(() => setup({ vary: withLot("0") })).toThrow(
      "rfqV2.lotSizeBase.SOL/USDC: a lot must be at least 1 base atom",
    );
  });

  it("keeps the lot chosen from the first price it sees, so the stream's lot does not hop", () => {
    const { book, source } = setup();
    expect(book.ladders("SOL/USDC")).toMatchObject({ lotSizeBase: 100_000n });
    // at 18.025 the default would be 10^6 lamports; the lot stays 10^5: 1,802.5 x 0.9995 -> 1,801 per lot
    source.points.set("SOL/USDC", { mid: parseDecimal("18.025"), updatedAtMs: 0 });
    expect(book.ladders("SOL/USDC")).toMatchObject({ lotSizeBase: 100_000n });
    expect(book.price(sellSol(SOL))).toMatchObject({ ok: true, amountOut: 10_000n * 1_801n });
  });

  it("prices a size inside a lot pro rata and rounds once: 1.5 lots at 18,015 -> 27,022.5 -> 27,022 (bid), 18,035 -> 27,052.5 -> 27,053 (ask)", () => {
    const { book } = setup();
    expect(book.price(sellSol(1_050_000n))).toMatchObject({ ok: true, amountOut: 189_157n });
    expect(book.price(sellSol(150_000n + 1_000_000n))).toMatchObject({ ok: true, amountOut: 207_172n });
    expect(book.price(buySol(1_150_000n, "exactOut"))).toMatchObject({ ok: true, amountIn: 207_403n });
  });

  it("prices the base across a level's bound at each level's own price, the marginal level's spread reported", () => {
    const { book } = setup();
    // 10 SOL at 18,015 per lot, then 1 lot at 18,006
    const across = 10n * SOL + 100_000n;
    expect(book.price(sellSol(across))).toMatchObject({
      ok: true,
      amountOut: 100_000n * 18_015n + 18_006n,
      spreadBps: 10,
    });
    expect(book.price(sellSol(100_000n * 18_015n + 18_006n, "exactOut"))).toMatchObject({
      ok: true,
      amountIn: across,
    });
    expect(book.price(buySol(100_000n * 18_035n + 18_044n))).toMatchObject({ ok: true, amountOut: across });
    expect(book.price(buySol(across, "exactOut"))).toMatchObject({
      ok: true,
      amountIn: 100_000n * 18_035n + 18_044n,
      spreadBps: 10,
    });
  });

  it("cuts a source's rung bounds to whole lots, but keeps the last rung's own bound below maxBase", () => {
    const ladder: Ladder = {
      bids: [
        { upToBase: 10n * SOL + 50_000n, price: parseDecimal("180.00") },
        { upToBase: 10n * SOL + 70_000n, price: parseDecimal("179.50") },
        { upToBase: 20n * SOL + 50_000n, price: parseDecimal("179.00") },
      ],
      asks: [{ upToBase: 500n * SOL, price: parseDecimal("181.00") }],
    };
    const { book } = setup({ source: withLadder(ladder) });
    const l = book.ladders("SOL/USDC");
    // the second rung ends in the lot the first was cut to: it has no lot of its own
    expect(l.ok && l.bids).toEqual([
      { upToBase: 10n * SOL, perLot: 18_000n },
      { upToBase: 20n * SOL + 50_000n, perLot: 17_900n },
    ]);
    const end = 20n * SOL + 50_000n;
    // 10 SOL at 18,000 per lot, 10 SOL and half a lot at 17,900: 1,800,000,000 + 1,790,000,000 + 8,950
    expect(book.price(sellSol(end))).toMatchObject({ ok: true, amountOut: 3_590_008_950n });
    expect(book.price(sellSol(end + 1n))).toEqual(
      refused("SIZE_ABOVE_MAX", `SOL/USDC: ${end + 1n} is beyond the last level`),
    );
  });

  it("stops a side before a rung with no positive price: sizes within the rungs before it quote, beyond it PRICE_UNAVAILABLE", () => {
    const ladder: Ladder = {
      bids: [
        { upToBase: 10n * SOL, price: parseDecimal("180.00") },
        { upToBase: 500n * SOL, price: parseDecimal("0") },
      ],
      asks: LADDER.asks,
    };
    const { book } = setup({ source: withLadder(ladder) });
    expect(book.price(sellSol(10n * SOL))).toMatchObject({ ok: true, amountOut: 1_800n * USDC });
    expect(book.price(sellSol(10n * SOL + 1n))).toEqual(
      refused("PRICE_UNAVAILABLE", "SOL/USDC: price after spread and skew is not positive"),
    );
  });

  it("ends a side at the first rung that reaches maxBase, whatever rungs follow it", () => {
    const ladder: Ladder = {
      bids: [
        { upToBase: 600n * SOL, price: parseDecimal("180.00") },
        { upToBase: 700n * SOL, price: parseDecimal("0") },
      ],
      asks: LADDER.asks,
    };
    const { book } = setup({ source: withLadder(ladder) });
    expect(book.price(sellSol(500n * SOL))).toMatchObject({ ok: true, amountOut: 5_000_000n * 18_000n });
    // beyond maxBase: the size's bound, not the zero-priced rung after it
    expect(book.price(sellSol(500n * SOL + 1n))).toEqual(
      refused("SIZE_ABOVE_MAX", "SOL/USDC: 500000000001 is beyond the last level"),
    );
  });

  it("prices a level ending exactly at a maxBase that is not a whole number of lots, and the tail after it not at all", () => {
    const maxBase = 500n * SOL + 50_000n;
    const vary = solUsdc({
      maxBase: maxBase.toString(),
      levels: [
        { upToBase: "10000000000", spreadBps: 5 },
        { upToBase: maxBase.toString(), spreadBps: 10 },
        { upToBase: "600000000000", spreadBps: 25 },
      ],
    });
    const { book } = setup({ vary });
    const l = book.ladders("SOL/USDC");
    // the second level reaches maxBase: its band ends there, half a lot past 500 SOL, at its own price
    expect(l.ok && l.bids).toEqual([
      { upToBase: 10n * SOL, perLot: 18_015n },
      { upToBase: maxBase, perLot: 18_006n },
    ]);
    expect(book.price(sellSol(maxBase))).toMatchObject({
      ok: true,
      amountOut: 100_000n * 18_015n + 4_900_000n * 18_006n + 9_003n,
      spreadBps: 10,
    });
  });

  describe("the notional cap cuts the standing ladder at the largest whole number of lots within it", () => {
    it("cuts exactly at a level's bound when the cap is what the level costs: 10 SOL at 18,035 = 1,803.5 USDC", () => {
      const { book } = setup({ vary: solUsdc({ maxNotionalUsd: "1803.5" }) });
      const l = book.ladders("SOL/USDC");
      expect(l.ok && l.asks).toEqual([{ upToBase: 10n * SOL, perLot: 18_035n }]);
    });

    it("keeps a side with no level (no positive price per lot) empty under a cap", () => {
      const vary = (f: FileConfig): FileConfig =>
        solUsdc({ maxNotionalUsd: "1000" })({
          ...f,
          rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"], lotSizeBase: { "SOL/USDC": "1" } },
        });
      const l = setup({ vary }).book.ladders("SOL/USDC");
      // 1 lamport: the bid rounds to 0 USDC units, the ask up to 1 (cut at 1,000 USDC: 10^9 lamports)
      expect(l).toMatchObject({ ok: true, bids: [], asks: [{ upToBase: 1_000_000_000n, perLot: 1n }] });
    });

    it("on a stablecoin-quoted pair: 1,000.5 USDC buys 55,475 lots at 18,035 and sells 55,537 at 18,015", () => {
      const { book } = setup({ vary: solUsdc({ maxNotionalUsd: "1000.5" }) });
      const l = book.ladders("SOL/USDC");
      expect(l.ok && l.asks).toEqual([{ upToBase: 55_475n * 100_000n, perLot: 18_035n }]);
      expect(l.ok && l.bids).toEqual([{ upToBase: 55_537n * 100_000n, perLot: 18_015n }]);
      // /quote agrees at the cut and refuses the next lot
      const exceeded = refused("NOTIONAL_EXCEEDED", "SOL/USDC: notional above 1000.5 USD");
      expect(book.price(buySol(55_475n * 100_000n, "exactOut"))).toMatchObject({
        ok: true,
        amountIn: 55_475n * 18_035n,
      });
      expect(book.price(buySol(55_476n * 100_000n, "exactOut"))).toEqual(exceeded);
      expect(book.price(sellSol(55_537n * 100_000n))).toMatchObject({
        ok: true,
        amountOut: 55_537n * 18_015n,
      });
      expect(book.price(sellSol(55_538n * 100_000n))).toEqual(exceeded);
    });

    it("cuts inside a later level, keeping the levels before it whole", () => {
      // 10 SOL cost 1,803.5 USDC at the first ask; the other 196.5 USDC buy 10,890.04 lots at 18,044
      const { book } = setup({ vary: solUsdc({ maxNotionalUsd: "2000" }) });
      const l = book.ladders("SOL/USDC");
      expect(l.ok && l.asks).toEqual([
        { upToBase: 10n * SOL, perLot: 18_035n },
        { upToBase: 10n * SOL + 10_890n * 100_000n, perLot: 18_044n },
      ]);
    });

    it("stands nothing on a side where not one lot fits, and everything when the whole side fits", () => {
      const small = setup({ vary: solUsdc({ maxNotionalUsd: "0.01" }) }).book.ladders("SOL/USDC");
      expect(small).toMatchObject({ ok: true, bids: [], asks: [] });
      const large = setup({ vary: solUsdc({ maxNotionalUsd: "1000000" }) }).book.ladders("SOL/USDC");
      expect(large.ok && large.asks.map((b) => b.upToBase)).toEqual([10n * SOL, 100n * SOL, 500n * SOL]);
    });

    it("withdraws the pair when the notional cannot be valued (SOL's USD price stale), as /quote refuses it", () => {
      const source = new SetPrices(PRICES, 1_000);
      let now = 0;
      const vary = (f: FileConfig): FileConfig => ({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "JUP" && p.quote === "SOL" ? { ...p, maxNotionalUsd: "100" } : p,
        ),
      });
      const config = testConfig({}, vary);
      const sources = new Map<string, PriceSource>([["static", source]]);
      const book = new QuotingBook(config, sources, {
        now: () => now,
        usd: new UsdValuer(config, sources, () => now),
      });
      const fresh = book.ladders("JUP/SOL");
      // 100 USD at 0.811125 USD per JUP: about 123 JUP, in lots of 0.01 JUP
      expect(fresh.ok && fresh.bids.at(-1)!.upToBase).toBeGreaterThan(120n * 1_000_000n);
      expect(fresh.ok && fresh.bids.at(-1)!.upToBase).toBeLessThan(125n * 1_000_000n);
      now = 5_000;
      source.points.set("JUP/SOL", { mid: parseDecimal("0.0045"), updatedAtMs: 5_000 });
      expect(book.ladders("JUP/SOL")).toEqual(
        refused("PRICE_UNAVAILABLE", "JUP/SOL: no fresh USD price for the notional cap"),
      );
    });
  });
});

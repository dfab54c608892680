/**
 * One price on both channels (issue 58): on every configured pair (config/default.json, and the
 * sandbox's configuration with its issued token), a streamed ladder swept to n lots costs the taker
 * exactly what `/quote` answers for n lots, on both sides and both quote types. The ladder goes the
 * whole way the stream sends it: QuotingBook.ladders -> pairLevels -> the wire level -> the program's
 * own conversion (px_ticks = price x lot / 10^decimals, floored) -> the program's walk (`sweep`).
 * `/quote` is the quote service's own decision (QuoteService.decide, the function POST /quote calls),
 * and a few sizes go through POST /quote on a real socket. With skew (long and short), notional caps
 * (a stablecoin quote and one valued through SOL/USDC), the source's own ladder and a configured lot.
 *
 * Which lots: every lot of a side up to 4,000 lots; on longer sides the first and last 1,000, 500 on
 * either side of every level's bound, and 1,000 spread evenly over the rest (USDC/USDT alone has 10^8
 * lots a side). `ONE_PRICE_WALK=all` walks every lot of every side, about 12 µs a lot here: TBILL/USDC's
 * 800,000 in 9 s, the default's pairs but USDC/USDT (2.2 x 10^7) in about 5 minutes, USDC/USDT's
 * 2 x 10^8 in about 40.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDecimal } from "../../amounts/decimal.ts";
import type { Config } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import { type BookDeps, QuotingBook } from "../../pricing/book.ts";
import type { Ladder, PricePoint, PriceSource } from "../../pricing/interface.ts";
import { StaticPriceSource } from "../../pricing/static.ts";
import { UsdValuer } from "../../pricing/usd.ts";
import { withIssuedToken } from "../../sandbox/operator/issued-token.ts";
import { type ProgramLevel, sweep } from "../../src/program/rfq-v2.ts";
import { QuoteService } from "../../src/quote/service.ts";
import { type LotLevel, pairLevels, wireLevel } from "../../src/rfq-v2/levels.ts";
import { testConfig } from "../support/config.ts";
import { askQuote, createHarness, type Harness, listen } from "../support/harness.ts";

const WALK_ALL = process.env.ONE_PRICE_WALK === "all";
const NOW = 1_760_000_000_000;
const always = () => true;

/** A source with the configuration's static prices, a pair's point replaceable (a ladder, say). */
function sourceOf(config: Config, points: Record<string, PricePoint> = {}): PriceSource {
  const s = config.file.priceSources.static;
  if (s?.kind !== "static") throw new Error("the configuration prices from a static source");
  const base = new StaticPriceSource("static", s.prices);
  return {
    name: "static",
    maxAgeMs: Number.POSITIVE_INFINITY,
    price: (pair) => points[pair] ?? base.price(pair),
    start: async () => {},
    close: async () => {},
  };
}

interface Bed {
  config: Config;
  book: QuotingBook;
  quotes: QuoteService;
}

function bed(config: Config, points: Record<string, PricePoint> = {}, deps: BookDeps = {}): Bed {
  const sources = new Map([["static", sourceOf(config, points)]]);
  const usd = new UsdValuer(config, sources, () => NOW);
  const book = new QuotingBook(config, sources, { now: () => NOW, usd, ...deps });
  return {
    config,
    book,
    quotes: new QuoteService({ config, book, maker: Keypair.generate().publicKey.toBase58() }),
  };
}

/** The levels as the program reads them off the wire: px_ticks and qty_lots (tick size 1). */
function onChain(levels: LotLevel[], lot: bigint, baseDecimals: number, side: "bid" | "ask"): ProgramLevel[] {
  return levels.map((l) => {
    const w = wireLevel(l, lot, baseDecimals, side);
    return { perLot: (w.price * lot) / 10n ** BigInt(baseDecimals), lots: w.volume / lot };
  });
}

/** What n lots cost along the levels, in quote atoms. */
function cost(levels: ProgramLevel[], n: bigint): bigint {
  let left = n;
  let c = 0n;
  for (const l of levels) {
    const take = left < l.lots ? left : l.lots;
    c += take * l.perLot;
    left -= take;
  }
  return c;
}

/** The lots to compare on a side of `total` lots whose levels end at `bounds` (see the module comment). */
function lotsToWalk(total: bigint, bounds: bigint[]): bigint[] {
  if (WALK_ALL || total <= 4_000n) return Array.from({ length: Number(total) }, (_, i) => BigInt(i + 1));
  const picked = new Set<bigint>();
  const span = (from: bigint, to: bigint) => {
    for (let n = from < 1n ? 1n : from; n <= to && n <= total; n++) picked.add(n);
  };
  span(1n, 1_000n);
  span(total - 999n, total);
  for (const b of bounds) span(b - 500n, b + 500n);
  for (let i = 1n; i <= 1_000n; i++) picked.add((total * i) / 1_000n);
  return [...picked].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

interface Walked {
  pair: string;
  lot: bigint;
  askLots: bigint;
  bidLots: bigint;
  compared: number;
  mismatches: string[];
}

/** Walks one pair's streamed ladder lot by lot against the quote service; mismatches as lines. */
function walkPair(b: Bed, pairKey: string): Walked {
  const ladders = b.book.ladders(pairKey);
  if (!ladders.ok) throw new Error(`${pairKey}: ${ladders.context}`);
  const lot = ladders.lotSizeBase;
  const levels = pairLevels(ladders, always);
  const base = ladders.base;
  const quote = ladders.quote;
  const asks = onChain(levels.asks, lot, base.decimals, "ask");
  const bids = onChain(levels.bids, lot, base.decimals, "bid");
  const mismatches: string[] = [];
  let compared = 0;
  let q = 0;
  const decide = (tokenIn: string, tokenOut: string, amount: bigint, quoteType: "exactIn" | "exactOut") =>
    b.quotes.decide(
      {
        requestId: `r${q}`,
        quoteId: `q${q++}`,
        tokenIn,
        tokenOut,
        amount: amount.toString(),
        quoteType,
        protocol: "v1",
        feeBps: 10,
      },
      NOW,
    );
  const amounts = (d: ReturnType<typeof decide>) =>
    d.ok ? `${d.stored.response.amountIn} -> ${d.stored.response.amountOut}` : d.code;
  const expectAt = (
    what: string,
    d: ReturnType<typeof decide>,
    size: bigint,
    want: { amountIn: bigint; amountOut: bigint },
  ) => {
    compared++;
    if (size < ladders.minBase) {
      if (d.ok || d.code !== "SIZE_BELOW_MIN") mismatches.push(`${what}: ${amounts(d)}, not SIZE_BELOW_MIN`);
      return;
    }
    const got = d.ok
      ? { amountIn: BigInt(d.stored.response.amountIn), amountOut: BigInt(d.stored.response.amountOut) }
      : undefined;
    if (!got || got.amountIn !== want.amountIn || got.amountOut !== want.amountOut)
      mismatches.push(`${what}: /quote ${amounts(d)}, swept ${want.amountIn} -> ${want.amountOut}`);
  };
  const side = (levels: ProgramLevel[], makerSide: "bid" | "ask"): bigint => {
    const total = levels.reduce((s, l) => s + l.lots, 0n);
    const bounds: bigint[] = [];
    for (const l of levels) bounds.push((bounds.at(-1) ?? 0n) + l.lots);
    for (const n of lotsToWalk(total, bounds)) {
      const size = n * lot;
      const c = cost(levels, n);
      if (makerSide === "ask") {
        // The taker buys base: the program takes c quote atoms for n lots.
        const swept = sweep("bid", c, levels, lot);
        if (swept.lots !== n || swept.spent !== c)
          mismatches.push(`${pairKey} ask ${n}: swept ${swept.lots} lots for ${swept.spent}`);
        expectAt(`${pairKey} buy ${n} lots exactOut`, decide(quote.mint, base.mint, size, "exactOut"), size, {
          amountIn: c,
          amountOut: size,
        });
        expectAt(`${pairKey} buy ${n} lots exactIn`, decide(quote.mint, base.mint, c, "exactIn"), size, {
          amountIn: c,
          amountOut: size,
        });
      } else {
        // The taker sells base: the program pays c quote atoms for n lots.
        const swept = sweep("ask", size, levels, lot);
        if (swept.lots !== n || swept.out !== c)
          mismatches.push(`${pairKey} bid ${n}: swept ${swept.lots} lots for ${swept.out}`);
        expectAt(`${pairKey} sell ${n} lots exactIn`, decide(base.mint, quote.mint, size, "exactIn"), size, {
          amountIn: size,
          amountOut: c,
        });
        expectAt(`${pairKey} sell ${n} lots exactOut`, decide(base.mint, quote.mint, c, "exactOut"), size, {
          amountIn: size,
          amountOut: c,
        });
      }
    }
    // One lot past the stream's end, /quote does not quote either (the ladder stops where it stops).
    const past = (total + 1n) * lot;
    const beyond =
      makerSide === "ask"
        ? decide(quote.mint, base.mint, past, "exactOut")
        : decide(base.mint, quote.mint, past, "exactIn");
    if (beyond.ok)
      mismatches.push(
        `${pairKey} ${makerSide}: /quote prices ${total + 1n} lots, past the streamed ${total}`,
      );
    return total;
  };
  const askLots = side(asks, "ask");
  const bidLots = side(bids, "bid");
  return { pair: pairKey, lot, askLots, bidLots, compared, mismatches };
}

const pairKeys = (config: Config) => config.file.pairs.map((p) => `${p.base}/${p.quote}`);
const timeout = WALK_ALL ? 4 * 60 * 60 * 1000 : 120_000;

describe("swept streamed ladders and /quote agree at every lot", () => {
  it.each(pairKeys(testConfig()))(
    "config/default.json %s: both sides, exactIn and exactOut, to the ladder's end",
    (pairKey) => {
      const w = walkPair(bed(testConfig()), pairKey);
      expect(w.mismatches).toEqual([]);
      expect(w.askLots).toBeGreaterThan(0n);
      expect(w.bidLots).toBeGreaterThan(0n);
      expect(w.compared).toBeGreaterThan(2 * Math.min(Number(w.askLots), 4_000));
    },
    timeout,
  );

  it(
    "the sandbox's configuration: its issued token's pair (TBILL/USDC; the others are the default's)",
    () => {
      const made = withIssuedToken(testConfig().file, {
        dir: mkdtempSync(join(tmpdir(), "one-price-")),
        holders: [Keypair.generate().publicKey],
        burnOnSell: true,
      });
      const config = testConfig({}, () => made.config);
      const keys = pairKeys(config);
      expect(keys).toContain("TBILL/USDC");
      const w = walkPair(bed(config), "TBILL/USDC");
      expect(w.mismatches).toEqual([]);
      // 4,000 TBILL in lots of 0.01 TBILL, every lot walked when ONE_PRICE_WALK=all
      expect(w.askLots).toBe(400_000n);
      expect(w.bidLots).toBe(400_000n);
    },
    timeout,
  );

  it("the issue's reproduction: 50,000 JUP swept along the stream cost 40,746.90 USDC, and /quote says the same", () => {
    const b = bed(testConfig());
    const ladders = b.book.ladders("JUP/USDC");
    if (!ladders.ok) throw new Error(ladders.context);
    const asks = onChain(pairLevels(ladders, always).asks, ladders.lotSizeBase, 6, "ask");
    const lots = 50_000_000_000n / ladders.lotSizeBase;
    // 20,000 JUP at 0.8125 x 1.0015 (81,371.875 -> 81,372 per 0.1 JUP), 30,000 at x 1.004 (81,575)
    expect(cost(asks, lots)).toBe(40_746_900_000n);
    const w = walkPair(b, "JUP/USDC");
    expect(w.mismatches).toEqual([]);
  });
});

describe("with the book's skew, notional caps, a source's ladder and a configured lot", () => {
  const skewed = (position: bigint) => {
    const vary = (f: FileConfig): FileConfig => ({
      ...f,
      tokens: f.tokens.map((t) => (t.symbol === "SOL" ? { ...t, targetInventory: "100000000000" } : t)),
      pairs: f.pairs.map((p) =>
        p.base === "SOL" && p.quote === "USDC"
          ? { ...p, skew: { maxBps: 12, fullAtBase: "40000000000" } }
          : p,
      ),
    });
    return bed(testConfig({}, vary), {}, { position: () => position });
  };

  it.each([
    ["long (skew +7 bps)", 123_400_000_000n],
    ["short (skew -12 bps, clamped)", 3_000_000_000n],
  ])(
    "SOL/USDC skewed %s",
    (_label, position) => {
      const b = skewed(position);
      const skew = b.book.price({
        tokenIn: b.config.tokensBySymbol.get("SOL")!.mint,
        tokenOut: b.config.tokensBySymbol.get("USDC")!.mint,
        amount: 1_000_000_000n,
        quoteType: "exactIn",
      });
      expect(skew.ok && skew.skewBps).not.toBe(0);
      const w = walkPair(b, "SOL/USDC");
      expect(w.mismatches).toEqual([]);
    },
    timeout,
  );

  it(
    "SOL/USDC capped at 25,000 USD (cut inside the second level) and JUP/SOL at 3,000 USD (valued through SOL/USDC)",
    () => {
      const vary = (f: FileConfig): FileConfig => ({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "SOL" && p.quote === "USDC"
            ? { ...p, maxNotionalUsd: "25000" }
            : p.base === "JUP" && p.quote === "SOL"
              ? { ...p, maxNotionalUsd: "3000" }
              : p,
        ),
      });
      const b = bed(testConfig({}, vary));
      const sol = walkPair(b, "SOL/USDC");
      expect(sol.mismatches).toEqual([]);
      // 25,000 USDC is about 138.6 SOL: past the first level's 10 SOL, inside the second's 100
      expect(sol.askLots).toBeGreaterThan(1_380_000n);
      expect(sol.askLots).toBeLessThan(1_390_000n);
      const jup = walkPair(b, "JUP/SOL");
      expect(jup.mismatches).toEqual([]);
      // the maker's bid, 0.0045 x 0.997 SOL at 180.25 USD = 0.80869 USD per JUP: 3,000 USD buy about
      // 3,709.7 JUP, in lots of 0.01 JUP
      expect(jup.bidLots).toBeGreaterThan(370_900n);
      expect(jup.bidLots).toBeLessThan(371_000n);
    },
    timeout,
  );

  it(
    "SOL/USDC from the source's own ladder, with rung bounds that are not whole lots",
    () => {
      const ladder: Ladder = {
        bids: [
          { upToBase: 7_654_321_000n, price: parseDecimal("180.01") },
          { upToBase: 60_000_050_000n, price: parseDecimal("179.3") },
          { upToBase: 500_000_000_000n, price: parseDecimal("176.125") },
        ],
        asks: [
          { upToBase: 12_345_678_901n, price: parseDecimal("180.4999") },
          { upToBase: 333_333_333_333n, price: parseDecimal("182") },
        ],
      };
      const b = bed(testConfig(), { "SOL/USDC": { mid: parseDecimal("180.25"), ladder, updatedAtMs: NOW } });
      const w = walkPair(b, "SOL/USDC");
      expect(w.mismatches).toEqual([]);
      expect(w.askLots).toBe(333_333_333_333n / w.lot);
    },
    timeout,
  );

  it("JUP/USDC with a configured lot of 1 JUP (rfqV2.lotSizeBase)", () => {
    const vary = (f: FileConfig): FileConfig => ({
      ...f,
      rfqV2: { ...f.rfqV2, pairs: ["JUP/USDC"], lotSizeBase: { "JUP/USDC": "1000000" } },
    });
    const w = walkPair(bed(testConfig({}, vary)), "JUP/USDC");
    expect(w.lot).toBe(1_000_000n);
    expect(w.mismatches).toEqual([]);
  });
});

describe("POST /quote on a real socket agrees with the swept ladder", () => {
  let h: Harness;
  let http: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    h = await createHarness();
    http = await listen(h.app);
  });
  afterAll(async () => {
    await http.close();
    await h.close();
  });

  it.each([
    ["JUP/USDC", [1n, 7n, 200_000n, 200_001n, 500_000n]],
    ["SOL/USDC", [10n, 99_999n, 100_000n, 100_001n, 400_000n]],
  ] as const)("%s at a few sizes, both sides, exactIn and exactOut", async (pairKey, lotCounts) => {
    const ladders = h.service.book.ladders(pairKey);
    if (!ladders.ok) throw new Error(ladders.context);
    const lot = ladders.lotSizeBase;
    const levels = pairLevels(ladders, always);
    const asks = onChain(levels.asks, lot, ladders.base.decimals, "ask");
    const bids = onChain(levels.bids, lot, ladders.base.decimals, "bid");
    const base = ladders.base.mint;
    const quote = ladders.quote.mint;
    for (const n of lotCounts) {
      const size = n * lot;
      if (size < ladders.minBase) continue;
      const buy = await askQuote(h, http.fetch, {
        tokenIn: quote,
        tokenOut: base,
        amount: size,
        quoteType: "exactOut",
      });
      expect(buy.response.amountIn, `${pairKey} buy ${n} lots`).toBe(cost(asks, n).toString());
      const pay = await askQuote(h, http.fetch, { tokenIn: quote, tokenOut: base, amount: cost(asks, n) });
      expect(pay.response.amountOut, `${pairKey} pay for ${n} lots`).toBe(size.toString());
      const sell = await askQuote(h, http.fetch, { tokenIn: base, tokenOut: quote, amount: size });
      expect(sell.response.amountOut, `${pairKey} sell ${n} lots`).toBe(cost(bids, n).toString());
      const want = await askQuote(h, http.fetch, {
        tokenIn: base,
        tokenOut: quote,
        amount: cost(bids, n),
        quoteType: "exactOut",
      });
      expect(want.response.amountIn, `${pairKey} receive for ${n} lots`).toBe(size.toString());
    }
  });
});

/**
 * The quoting book: from a quote request to exact amounts, or a reason not to quote.
 *
 * Everything here is in-memory and synchronous: the quote path never waits on the network. Every
 * amount is a bigint in smallest units and every rounding goes the maker's way: the taker receives
 * floor(...), pays ceil(...). Per quote the work is constant: a few map lookups, a scan of the pair's
 * few levels, and bigint arithmetic.
 *
 * Order of decisions: global pause, pair known and enabled (runtime override first), fresh price,
 * level (per side, configured spread or the source's ladder) with inventory skew, size bounds,
 * notional cap. What the maker can cover is the inventory's question, asked by the quote service
 * after the book (src/quote/service.ts); the book only reads the maker's position, for skew.
 */

import { mulDivCeil, mulDivFloor, parseDecimal, type Ratio } from "../amounts/decimal.ts";
import { U64_MAX } from "../amounts/u64.ts";
import type { UsdValues } from "../amounts/usd.ts";
import type { Config } from "../config/load.ts";
import type { PairConfig, TokenConfig } from "../config/schema.ts";
import type { Controls } from "./controls/interface.ts";
import type { PricePoint, PriceSource } from "./interface.ts";

export type NoQuoteReason =
  | "PAIR_NOT_SUPPORTED"
  | "PAIR_DISABLED"
  | "PRICE_UNAVAILABLE"
  | "PRICE_STALE"
  | "SIZE_BELOW_MIN"
  | "SIZE_ABOVE_MAX"
  | "AMOUNT_TOO_SMALL"
  | "AMOUNT_TOO_LARGE"
  /** The global kill switch is on. */
  | "PAUSED"
  /** The shared switches (Redis) cannot be read: a dependency outage, not a pause; no quote until back. */
  | "CONTROLS_UNAVAILABLE"
  /** The quote's notional exceeds the pair's `maxNotionalUsd`. */
  | "NOTIONAL_EXCEEDED";

export interface PricedQuote {
  ok: true;
  amountIn: bigint;
  amountOut: bigint;
  pairKey: string;
  /** The taker's side of the pair: "buy" takes base from the maker, "sell" gives base to it. */
  takerSide: "buy" | "sell";
  /** Trade size in base smallest units, as checked against the pair's bounds. */
  baseAmount: bigint;
  /** Distance of the level's price from mid before skew, bps (the configured spread, or the ladder's). */
  spreadBps: number;
  /** Inventory skew applied, bps; positive when the maker is long base and both sides moved down. */
  skewBps: number;
  /** True when priced from the source's ladder rather than mid +/- configured spread. */
  fromLadder: boolean;
}

export interface NoQuote {
  ok: false;
  reason: NoQuoteReason;
  detail: string;
}

/** Which side of the trade `amount` fixes (the contract's quoteType). */
export type QuoteType = "exactIn" | "exactOut";

export interface QuoteAsk {
  tokenIn: string;
  tokenOut: string;
  amount: bigint;
  quoteType: QuoteType;
  /**
   * Bps added to the spread on this quote's side (a flagged taker's quote, src/toxicity/): the bid
   * moves down and the ask up by this much more, rounding still the maker's way. 0 or absent: none.
   */
  extraSpreadBps?: number;
}

/** What the book consults besides prices; each is optional so pure pricing tests need none. */
export interface BookDeps {
  now?: () => number;
  /**
   * The maker's expected holding of a mint (balance - reserved + incoming, smallest units), for
   * inventory skew; undefined when unknown. Without it the book prices without skew.
   */
  position?: (mint: string) => bigint | undefined;
  /** Global pause and per-pair runtime switches. */
  controls?: Pick<Controls, "isPaused" | "pairOverride"> & Partial<Pick<Controls, "outage">>;
  /** Needed when a pair has `maxNotionalUsd` and its quote token is not a stablecoin. */
  usd?: UsdValues;
}

/**
 * One rung of a side's standing ladder (the RFQ v2 level stream): sizes above the previous rung's bound
 * and up to `upToBase` (base smallest units) trade at `price`, quote smallest units per base smallest
 * unit, exact, after spread and skew. The stream rounds it for the wire, in the maker's favour.
 */
export interface LadderRung {
  upToBase: bigint;
  price: Ratio;
}

/** A pair's standing ladders, from the same prices, spreads, skew and size bounds as `price()`. */
export interface PairLadders {
  ok: true;
  pairKey: string;
  base: TokenConfig;
  quote: TokenConfig;
  /** The maker buys base (the taker sells it), best (highest) price first. */
  bids: LadderRung[];
  /** The maker sells base (the taker buys it), best (lowest) price first. */
  asks: LadderRung[];
  minBase: bigint;
  maxBase: bigint;
}

interface Level {
  upToBase: bigint;
  spreadBps: bigint;
}

interface BookPair {
  config: PairConfig;
  key: string;
  base: TokenConfig;
  quote: TokenConfig;
  source: PriceSource;
  /** The maker's bid (taker sells base) and ask (taker buys base) levels. */
  bid: Level[];
  ask: Level[];
  minBase: bigint;
  maxBase: bigint;
  /** 10^decimals of each side, to turn a human price into smallest units. */
  qScale: bigint;
  bScale: bigint;
  maxNotionalUsd?: Ratio;
  skew?: { maxBps: bigint; fullAtBase: bigint; target: bigint };
}

interface Amounts {
  amountIn: bigint;
  amountOut: bigint;
  baseAmount: bigint;
}

const BPS = 10_000n;

export class QuotingBook {
  /** Input mint, then output mint, for both directions of every pair. */
  private readonly byMints = new Map<string, Map<string, BookPair>>();
  /** By pair key ("SOL/USDC"). */
  private readonly pairs = new Map<string, BookPair>();
  private readonly now: () => number;
  private readonly deps: BookDeps;

  constructor(config: Config, sources: ReadonlyMap<string, PriceSource>, deps: BookDeps = {}) {
    this.deps = deps;
    this.now = this.deps.now ?? Date.now;
    for (const p of config.file.pairs) {
      const base = config.tokensBySymbol.get(p.base)!;
      const quote = config.tokensBySymbol.get(p.quote)!;
      const source = sources.get(p.priceSource);
      if (!source) throw new Error(`pair ${p.base}/${p.quote}: price source ${p.priceSource} not started`);
      const levels = (ls: PairConfig["levels"]) =>
        ls.map((l) => ({ upToBase: BigInt(l.upToBase), spreadBps: BigInt(l.spreadBps) }));
      const pair: BookPair = {
        config: p,
        key: `${p.base}/${p.quote}`,
        base,
        quote,
        source,
        bid: levels(p.bidLevels ?? p.levels),
        ask: levels(p.askLevels ?? p.levels),
        minBase: BigInt(p.minBase),
        maxBase: BigInt(p.maxBase),
        qScale: 10n ** BigInt(quote.decimals),
        bScale: 10n ** BigInt(base.decimals),
      };
      if (p.maxNotionalUsd !== undefined) {
        pair.maxNotionalUsd = parseDecimal(p.maxNotionalUsd);
        if (!quote.stable && !this.deps.usd?.hasRoute(quote.mint)) {
          throw new Error(`pairs.${pair.key}.maxNotionalUsd: no USD price for ${quote.symbol}`);
        }
      }
      if (p.skew) {
        pair.skew = {
          maxBps: BigInt(p.skew.maxBps),
          fullAtBase: BigInt(p.skew.fullAtBase),
          // The config refuses a skew without the base token's target (config/schema.ts).
          target: BigInt(base.targetInventory!),
        };
      }
      this.pairs.set(pair.key, pair);
      this.addDirection(base.mint, quote.mint, pair);
      this.addDirection(quote.mint, base.mint, pair);
    }
  }

  private addDirection(mintIn: string, mintOut: string, pair: BookPair): void {
    let outs = this.byMints.get(mintIn);
    if (!outs) {
      outs = new Map();
      this.byMints.set(mintIn, outs);
    }
    outs.set(mintOut, pair);
  }

  private enabled(pair: BookPair): boolean {
    return this.deps.controls?.pairOverride(pair.key) ?? pair.config.enabled;
  }

  /** The global kill switch, or the shared switches unreadable: no quote and no level at all. */
  private paused(): NoQuote | undefined {
    if (!this.deps.controls?.isPaused()) return undefined;
    const outage = this.deps.controls.outage?.();
    return outage ? no("CONTROLS_UNAVAILABLE", outage) : no("PAUSED", "quoting is paused");
  }

  /** The pair's price if it may be quoted from: switched on, present, fresh and not zero. */
  private livePrice(pair: BookPair): PricePoint | NoQuote {
    if (!this.enabled(pair)) return no("PAIR_DISABLED", `${pair.key} is disabled`);
    const point = pair.source.price(pair.key);
    if (!point) return no("PRICE_UNAVAILABLE", `no price for ${pair.key}`);
    const age = this.now() - point.updatedAtMs;
    if (age > pair.source.maxAgeMs) return no("PRICE_STALE", `${pair.key} price is ${age} ms old`);
    if (point.mid.num === 0n) return no("PRICE_UNAVAILABLE", `${pair.key} price is zero`);
    return point;
  }

  /** Prices one request. Pure apart from reading in-memory prices, the position, switches and the clock. */
  price(ask: QuoteAsk): PricedQuote | NoQuote {
    const paused = this.paused();
    if (paused) return paused;
    const pair = this.byMints.get(ask.tokenIn)?.get(ask.tokenOut);
    if (!pair) return no("PAIR_NOT_SUPPORTED", `no pair trades ${ask.tokenIn} for ${ask.tokenOut}`);
    const point = this.livePrice(pair);
    if ("reason" in point) return point;

    const takerSide = ask.tokenOut === pair.base.mint ? "buy" : "sell";
    const skew = this.skewBps(pair);
    const picked = this.pick(pair, point, takerSide, skew, ask);
    if ("reason" in picked) return picked;
    const { amountIn, amountOut, baseAmount } = picked;

    // A positive amountOut implies a positive amountIn (exactIn: a positive asked amount; exactOut: the
    // ceiling of a positive amount at a positive price), so amountOut alone decides.
    if (amountOut <= 0n) {
      return no("AMOUNT_TOO_SMALL", `${pair.key}: ${ask.amount} rounds to nothing`);
    }
    if (amountIn > U64_MAX || amountOut > U64_MAX) {
      return no("AMOUNT_TOO_LARGE", `${pair.key}: amount exceeds u64`);
    }
    if (baseAmount < pair.minBase) {
      return no("SIZE_BELOW_MIN", `${pair.key} size ${baseAmount} below ${pair.minBase}`);
    }
    if (baseAmount > pair.maxBase) {
      return no("SIZE_ABOVE_MAX", `${pair.key} size ${baseAmount} above ${pair.maxBase}`);
    }
    if (pair.maxNotionalUsd) {
      const notional = this.notionalCheck(pair, takerSide === "buy" ? amountIn : amountOut);
      if (notional) return notional;
    }
    return {
      ok: true,
      amountIn,
      amountOut,
      pairKey: pair.key,
      takerSide,
      baseAmount,
      spreadBps: picked.spreadBps,
      skewBps: Number(skew),
      fromLadder: point.ladder !== undefined,
    };
  }

  /**
   * The pair's standing ladders (RFQ v2): the same gates as `price()` (pause, pair switch, fresh
   * price) and each level's price as `pick` computes it, so a level never quotes better than `/quote`
   * would for a trade of its size. Sizes are cut at `maxBase`.
   */
  ladders(pairKey: string): PairLadders | NoQuote {
    const paused = this.paused();
    if (paused) return paused;
    const pair = this.pairs.get(pairKey);
    if (!pair) return no("PAIR_NOT_SUPPORTED", `no pair ${pairKey}`);
    const point = this.livePrice(pair);
    if ("reason" in point) return point;
    const skew = this.skewBps(pair);
    const side = (s: "buy" | "sell"): LadderRung[] => {
      const ladder = point.ladder ? (s === "sell" ? point.ladder.bids : point.ladder.asks) : undefined;
      const levels = s === "sell" ? pair.bid : pair.ask;
      const count = ladder ? ladder.length : levels.length;
      const rungs: LadderRung[] = [];
      for (let i = 0; i < count; i++) {
        const r = ladder
          ? this.rungPrice(pair, ladder[i]!.price, s, 0n, skew)
          : this.rungPrice(pair, point.mid, s, levels[i]!.spreadBps, skew);
        const upToBase = ladder ? ladder[i]!.upToBase : levels[i]!.upToBase;
        if (r.num <= 0n) break;
        // Stryker disable next-line EqualityOperator: the smaller of the two; `<` and `<=` agree when they are equal.
        const bound = upToBase < pair.maxBase ? upToBase : pair.maxBase;
        rungs.push({ upToBase: bound, price: r });
        if (bound === pair.maxBase) break;
      }
      return rungs;
    };
    return {
      ok: true,
      pairKey: pair.key,
      base: pair.base,
      quote: pair.quote,
      bids: side("sell"),
      asks: side("buy"),
      minBase: pair.minBase,
      maxBase: pair.maxBase,
    };
  }

  /** A level's price in smallest units (quote per base) from a human price, a spread and the skew. */
  private rungPrice(pair: BookPair, p: Ratio, side: "buy" | "sell", spread: bigint, skew: bigint): Ratio {
    const factor = side === "sell" ? BPS - spread - skew : BPS + spread - skew;
    return { num: p.num * pair.qScale * factor, den: p.den * pair.bScale * BPS };
  }

  /** Signed skew in bps from the base token's position against its target; 0 when unknown. */
  private skewBps(pair: BookPair): bigint {
    if (!pair.skew || !this.deps.position) return 0n;
    const pos = this.deps.position(pair.base.mint);
    if (pos === undefined) return 0n;
    const { maxBps, fullAtBase, target } = pair.skew;
    const k = ((pos - target) * maxBps) / fullAtBase; // truncates toward zero
    // Math.min/max do not take bigints.
    // Stryker disable next-line EqualityOperator: at k = maxBps both branches return maxBps.
    if (k > maxBps) return maxBps;
    // Stryker disable next-line EqualityOperator: at k = -maxBps both branches return -maxBps.
    if (k < -maxBps) return -maxBps;
    return k;
  }

  /**
   * Walks the side's levels, cheapest first, and takes the first whose size bound holds at its own
   * price. Prices are kept as exact ratios of quote smallest units per base smallest unit.
   */
  private pick(
    pair: BookPair,
    point: PricePoint,
    side: "buy" | "sell",
    skew: bigint,
    ask: QuoteAsk,
  ): (Amounts & { spreadBps: number }) | NoQuote {
    const { mid } = point;
    const ladder = point.ladder ? (side === "sell" ? point.ladder.bids : point.ladder.asks) : undefined;
    const count = ladder ? ladder.length : (side === "sell" ? pair.bid : pair.ask).length;
    const extra = BigInt(ask.extraSpreadBps ?? 0);
    for (let i = 0; i < count; i++) {
      let pNum: bigint;
      let pDen: bigint;
      let upToBase: bigint;
      let spreadBps: number;
      if (ladder) {
        const l = ladder[i]!;
        pNum = l.price.num * pair.qScale * (side === "sell" ? BPS - extra - skew : BPS + extra - skew);
        pDen = l.price.den * pair.bScale * BPS;
        upToBase = l.upToBase;
        // How far the rung sits from mid, for logs and metrics only.
        const a = mid.num * l.price.den;
        const b = l.price.num * mid.den;
        // Stryker disable next-line EqualityOperator: |a - b|; at a = b both branches give 0.
        spreadBps = Number(((a > b ? a - b : b - a) * BPS) / a + extra);
      } else {
        const l = (side === "sell" ? pair.bid : pair.ask)[i]!;
        const spread = l.spreadBps + extra;
        const factor = side === "sell" ? BPS - spread - skew : BPS + spread - skew;
        pNum = mid.num * pair.qScale * factor;
        pDen = mid.den * pair.bScale * BPS;
        upToBase = l.upToBase;
        spreadBps = Number(spread);
      }
      if (pNum <= 0n)
        return no("PRICE_UNAVAILABLE", `${pair.key}: price after spread and skew is not positive`);
      const a = amounts(side, ask.quoteType, ask.amount, pNum, pDen);
      if (a.baseAmount <= upToBase) return { ...a, spreadBps };
    }
    return no("SIZE_ABOVE_MAX", `${pair.key}: ${ask.amount} is beyond the last level`);
  }

  private notionalCheck(pair: BookPair, quoteAmount: bigint): NoQuote | undefined {
    const cap = pair.maxNotionalUsd!;
    let usd: Ratio | undefined;
    if (pair.quote.stable) usd = { num: quoteAmount, den: pair.qScale };
    // The constructor refuses a cap on a pair whose quote token is not a stablecoin without deps.usd.
    else usd = this.deps.usd!.value(pair.quote.mint, quoteAmount);
    if (!usd) return no("PRICE_UNAVAILABLE", `${pair.key}: no fresh USD price for the notional cap`);
    if (usd.num * cap.den > cap.num * usd.den) {
      return no("NOTIONAL_EXCEEDED", `${pair.key}: notional above ${pair.config.maxNotionalUsd} USD`);
    }
    return undefined;
  }
}

/**
 * Exact amounts at price p = pNum/pDen (quote smallest units per base smallest unit). The taker sells
 * base to the maker ("sell") or buys it ("buy"); what the taker receives is floored, what it pays is
 * ceiled.
 */
function amounts(side: "buy" | "sell", type: QuoteType, amount: bigint, pNum: bigint, pDen: bigint): Amounts {
  if (side === "sell") {
    if (type === "exactIn")
      return { amountIn: amount, amountOut: mulDivFloor(amount, pNum, pDen), baseAmount: amount };
    const amountIn = mulDivCeil(amount, pDen, pNum);
    return { amountIn, amountOut: amount, baseAmount: amountIn };
  }
  if (type === "exactIn") {
    const amountOut = mulDivFloor(amount, pDen, pNum);
    return { amountIn: amount, amountOut, baseAmount: amountOut };
  }
  return { amountIn: mulDivCeil(amount, pNum, pDen), amountOut: amount, baseAmount: amount };
}

function no(reason: NoQuoteReason, detail: string): NoQuote {
  return { ok: false, reason, detail };
}

/**
 * The quoting book: from a quote request to exact amounts, or a reason not to quote.
 *
 * Everything here is in-memory and synchronous: the quote path never waits on the network. Every
 * amount is a bigint in smallest units and every rounding goes the maker's way: the taker receives
 * floor(...), pays ceil(...). Per quote the work is constant: a few map lookups, a scan of the pair's
 * few levels, and bigint arithmetic.
 *
 * One model of size for both channels (amounts/ladder.ts): a side's levels are swept one by one, each
 * at a whole number of quote atoms per lot (the pair's lot, `rfqV2.lotSizeBase` or `lotSizeFor`).
 * `price()` (the webhook's `/quote`) and `ladders()` (the RFQ v2 stream) build the side's levels with
 * the same function, so a streamed ladder swept to any whole number of lots costs exactly what
 * `/quote` answers for that size.
 *
 * Order of decisions: global pause, pair known and enabled (runtime override first), fresh price,
 * levels (per side, configured spread or the source's ladder) with inventory skew, size bounds,
 * notional cap. What the maker can cover is the inventory's question, asked by the quote service
 * after the book (src/quote/service.ts); the book only reads the maker's position, for skew.
 */

import { parseDecimal, type Ratio } from "../amounts/decimal.ts";
import { type Band, costTimesLot, lotSizeFor, perLotAt, sweptAmounts } from "../amounts/ladder.ts";
import { U64_MAX } from "../amounts/u64.ts";
import type { UsdValues } from "../amounts/usd.ts";
import type { Config } from "../config/load.ts";
import type { PairConfig, TokenConfig } from "../config/schema.ts";
import type { PriceDeclineCode, Refused } from "../src/refusal/codes.ts";
import type { Controls } from "./controls/interface.ts";
import type { PricePoint, PriceSource } from "./interface.ts";

export interface PricedQuote {
  ok: true;
  amountIn: bigint;
  amountOut: bigint;
  pairKey: string;
  /** The taker's side of the pair: "buy" takes base from the maker, "sell" gives base to it. */
  takerSide: "buy" | "sell";
  /** Trade size in base smallest units, as checked against the pair's bounds. */
  baseAmount: bigint;
  /**
   * Distance from mid before skew, bps (the configured spread, or the ladder's), of the last level the
   * trade reaches (its marginal level).
   */
  spreadBps: number;
  /** Inventory skew applied, bps; positive when the maker is long base and both sides moved down. */
  skewBps: number;
  /** True when priced from the source's ladder rather than mid +/- configured spread. */
  fromLadder: boolean;
}

export type NoQuote = Refused<PriceDeclineCode>;

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
 * A pair's standing ladders (the RFQ v2 level stream): each side's levels as `price()` sweeps them
 * (amounts/ladder.ts `Band`: the base above the previous level's bound and up to `upToBase` at
 * `perLot` quote atoms per lot, after spread and skew, rounded the maker's way), cut at `maxBase` and
 * where a whole number of lots reaches the notional cap.
 */
export interface PairLadders {
  ok: true;
  pairKey: string;
  base: TokenConfig;
  quote: TokenConfig;
  /** Base atoms per lot: every bound but a side's last is a whole number of lots. */
  lotSizeBase: bigint;
  /** The maker buys base (the taker sells it), best (highest) price first. */
  bids: Band[];
  /** The maker sells base (the taker buys it), best (lowest) price first. */
  asks: Band[];
  minBase: bigint;
  maxBase: bigint;
}

/** A side's level as the book prices it: the band, and its distance from mid (for logs and metrics). */
interface PricedBand extends Band {
  spreadBps: number;
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
  /** Base atoms per lot: configured (`rfqV2.lotSizeBase`), or chosen from the first price seen and kept. */
  lot?: bigint;
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
      const lot = config.file.rfqV2.lotSizeBase[pair.key];
      if (lot !== undefined) {
        pair.lot = BigInt(lot);
        if (pair.lot === 0n)
          throw new Error(`rfqV2.lotSizeBase.${pair.key}: a lot must be at least 1 base atom`);
      }
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
    if ("code" in point) return point;

    const takerSide = ask.tokenOut === pair.base.mint ? "buy" : "sell";
    const skew = this.skewBps(pair);
    const lot = this.lotOf(pair, point);
    const side = this.bands(pair, point, takerSide, skew, BigInt(ask.extraSpreadBps ?? 0), lot);
    const swept = sweptAmounts(takerSide, ask.quoteType, ask.amount, side.bands, lot);
    if (!swept) {
      return side.notPositive
        ? no("PRICE_UNAVAILABLE", `${pair.key}: price after spread and skew is not positive`)
        : no("SIZE_ABOVE_MAX", `${pair.key}: ${ask.amount} is beyond the last level`);
    }
    const { amountIn, amountOut, baseAmount } = swept;

    // A positive amountOut implies a positive amountIn (exactIn: a positive asked amount; exactOut: the
    // ceiling of a positive amount at a positive price), so amountOut alone decides.
    if (amountOut <= 0n) {
      return no("AMOUNT_TOO_SMALL", `${pair.key}: ${ask.amount} rounds to nothing`);
    }
    if (amountIn > U64_MAX || amountOut > U64_MAX) {
      return no("AMOUNT_TOO_LARGE", `${pair.key}: amount exceeds u64`);
    }
    // No size above maxBase gets here: the last band ends at it.
    if (baseAmount < pair.minBase) {
      return no("SIZE_BELOW_MIN", `${pair.key} size ${baseAmount} below ${pair.minBase}`);
    }
    if (pair.maxNotionalUsd) {
      const notional = this.notionalCheck(pair, takerSide === "buy" ? amountIn : amountOut);
      if (notional) return notional;
    }
    // The marginal level: the one the trade's last base atom falls in (the trade is within the bands).
    const marginal = side.bands.find((b) => baseAmount <= b.upToBase)!;
    return {
      ok: true,
      amountIn,
      amountOut,
      pairKey: pair.key,
      takerSide,
      baseAmount,
      spreadBps: marginal.spreadBps,
      skewBps: Number(skew),
      fromLadder: point.ladder !== undefined,
    };
  }

  /**
   * The pair's standing ladders (RFQ v2): the same gates as `price()` (pause, pair switch, fresh
   * price) and each side's levels from the same function (`bands`), so a ladder swept to any whole
   * number of lots costs what `price()` answers for that size. Each side ends where `price()` stops
   * quoting: at `maxBase`, at a price that is not positive, and at the largest whole number of lots
   * within the notional cap.
   */
  ladders(pairKey: string): PairLadders | NoQuote {
    const paused = this.paused();
    if (paused) return paused;
    const pair = this.pairs.get(pairKey);
    if (!pair) return no("PAIR_NOT_SUPPORTED", `no pair ${pairKey}`);
    const point = this.livePrice(pair);
    if ("code" in point) return point;
    const skew = this.skewBps(pair);
    const lot = this.lotOf(pair, point);
    const sides: Band[][] = [];
    for (const s of ["sell", "buy"] as const) {
      const priced = this.bands(pair, point, s, skew, 0n, lot).bands;
      const cut = pair.maxNotionalUsd ? this.notionalCut(pair, priced, lot) : priced;
      if ("code" in cut) return cut;
      sides.push(cut.map((b) => ({ upToBase: b.upToBase, perLot: b.perLot })));
    }
    return {
      ok: true,
      pairKey: pair.key,
      base: pair.base,
      quote: pair.quote,
      lotSizeBase: lot,
      bids: sides[0]!,
      asks: sides[1]!,
      minBase: pair.minBase,
      maxBase: pair.maxBase,
    };
  }

  /** The pair's lot: configured, or chosen from the first mid seen and kept, so the stream's lot does not hop. */
  private lotOf(pair: BookPair, point: PricePoint): bigint {
    pair.lot ??= lotSizeFor(
      { num: point.mid.num * pair.qScale, den: point.mid.den * pair.bScale },
      pair.base.decimals,
      pair.quote.decimals,
    );
    return pair.lot;
  }

  /**
   * A side's levels, best first, in whole quote atoms per lot (the maker's bids rounded down, its
   * asks up), from the configured spreads around mid or the source's ladder, moved by the skew and
   * `extra` bps (a flagged taker's widening). Every bound is cut to a whole number of lots but the
   * last, which ends at `maxBase` (or the last level's own bound). The levels stop before the first
   * whose price is not positive (`notPositive`).
   */
  private bands(
    pair: BookPair,
    point: PricePoint,
    side: "buy" | "sell",
    skew: bigint,
    extra: bigint,
    lot: bigint,
  ): { bands: PricedBand[]; notPositive: boolean } {
    const { mid } = point;
    const ladder = point.ladder ? (side === "sell" ? point.ladder.bids : point.ladder.asks) : undefined;
    const levels = side === "sell" ? pair.bid : pair.ask;
    const count = ladder ? ladder.length : levels.length;
    const bands: PricedBand[] = [];
    let before = 0n;
    // Stryker disable next-line EqualityOperator: the loop breaks at the last level (`last`), so `i` never reaches `count`.
    for (let i = 0; i < count; i++) {
      let human: Ratio;
      let spread: bigint;
      let upToBase: bigint;
      let spreadBps: number;
      if (ladder) {
        const l = ladder[i]!;
        human = l.price;
        spread = extra;
        upToBase = l.upToBase;
        // How far the rung sits from mid, for logs and metrics only.
        const a = mid.num * l.price.den;
        const b = l.price.num * mid.den;
        // Stryker disable next-line EqualityOperator: |a - b|; at a = b both branches give 0.
        spreadBps = Number(((a > b ? a - b : b - a) * BPS) / a + extra);
      } else {
        const l = levels[i]!;
        human = mid;
        spread = l.spreadBps + extra;
        upToBase = l.upToBase;
        spreadBps = Number(spread);
      }
      const factor = side === "sell" ? BPS - spread - skew : BPS + spread - skew;
      const perAtom = { num: human.num * pair.qScale * factor, den: human.den * pair.bScale * BPS };
      // A price that is not positive gives no positive quote atoms per lot either way it rounds.
      const perLot = perLotAt(perAtom, lot, side === "sell" ? "bid" : "ask");
      if (perLot <= 0n) return { bands, notPositive: true };
      const last = i === count - 1 || upToBase >= pair.maxBase;
      // Stryker disable next-line EqualityOperator: the smaller of the two; `<` and `<=` agree when they are equal.
      const bound = !last ? (upToBase / lot) * lot : upToBase < pair.maxBase ? upToBase : pair.maxBase;
      if (bound > before) {
        bands.push({ upToBase: bound, perLot, spreadBps });
        before = bound;
      }
      if (last) break;
    }
    return { bands, notPositive: false };
  }

  /**
   * A side's levels cut at the largest whole number of lots whose quote amount is within the pair's
   * notional cap, as `price()` checks it; the cap's refusal when the notional cannot be valued at all.
   */
  private notionalCut(pair: BookPair, bands: PricedBand[], lot: bigint): PricedBand[] | NoQuote {
    const last = bands.at(-1);
    if (!last) return bands;
    // At a whole number of lots the cost is a whole number of quote atoms: what price() would check.
    const over = (lots: bigint) => this.notionalCheck(pair, costTimesLot(bands, lots * lot)! / lot);
    const whole = last.upToBase / lot;
    const atEnd = over(whole);
    if (!atEnd) return bands;
    if (atEnd.code !== "NOTIONAL_EXCEEDED") return atEnd;
    // over(lo) is undefined (lo = 0 costs nothing), over(hi) is a refusal.
    let lo = 0n;
    let hi = whole;
    while (hi - lo > 1n) {
      const m = (lo + hi) / 2n;
      if (over(m)) hi = m;
      else lo = m;
    }
    const cutAt = lo * lot;
    const out: PricedBand[] = [];
    for (const b of bands) {
      if (b.upToBase >= cutAt) {
        // Every band before this one ends below cutAt; none at all when not one lot fits.
        if (cutAt > 0n) out.push({ ...b, upToBase: cutAt });
        break;
      }
      out.push(b);
    }
    return out;
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

function no(code: PriceDeclineCode, context: string): NoQuote {
  return { ok: false, code, context };
}

/**
 * The quoting book: from a quote request to exact amounts, or a reason not to quote.
 *
 * Everything here is in-memory and synchronous: the quote path never waits on the network. Every
 * amount is a bigint in smallest units and every rounding goes the maker's way: the taker receives
 * floor(...), pays ceil(...).
 */
import type { Config } from "../config/load.ts";
import type { PairConfig, TokenConfig } from "../config/schema.ts";
import { U64_MAX } from "../src/contract/common.ts";
import type { QuoteType } from "../src/contract/quote.ts";
import { mulDivCeil, mulDivFloor } from "./decimal.ts";
import type { PriceSource } from "./interface.ts";

export type NoQuoteReason =
  | "PAIR_NOT_SUPPORTED"
  | "PAIR_DISABLED"
  | "PRICE_UNAVAILABLE"
  | "PRICE_STALE"
  | "SIZE_BELOW_MIN"
  | "SIZE_ABOVE_MAX"
  | "AMOUNT_TOO_SMALL"
  | "AMOUNT_TOO_LARGE";

export interface PricedQuote {
  ok: true;
  amountIn: bigint;
  amountOut: bigint;
  pairKey: string;
  /** The taker's side of the pair: "buy" takes base from the maker, "sell" gives base to it. */
  takerSide: "buy" | "sell";
  /** Trade size in base smallest units, as checked against the pair's bounds. */
  baseAmount: bigint;
  spreadBps: number;
}

export interface NoQuote {
  ok: false;
  reason: NoQuoteReason;
  detail: string;
}

interface BookPair {
  config: PairConfig;
  key: string;
  base: TokenConfig;
  quote: TokenConfig;
  source: PriceSource;
  levels: { upToBase: bigint; spreadBps: number }[];
  minBase: bigint;
  maxBase: bigint;
}

export interface QuoteAsk {
  tokenIn: string;
  tokenOut: string;
  amount: bigint;
  quoteType: QuoteType;
}

const BPS = 10_000n;

export class QuotingBook {
  /** Keyed "mintIn>mintOut" for both directions of every pair. */
  private readonly byMints = new Map<string, BookPair>();

  constructor(
    config: Config,
    sources: ReadonlyMap<string, PriceSource>,
    private readonly now: () => number = Date.now,
  ) {
    for (const p of config.file.pairs) {
      const base = config.tokensBySymbol.get(p.base)!;
      const quote = config.tokensBySymbol.get(p.quote)!;
      const source = sources.get(p.priceSource);
      if (!source) throw new Error(`pair ${p.base}/${p.quote}: price source ${p.priceSource} not started`);
      const pair: BookPair = {
        config: p,
        key: `${p.base}/${p.quote}`,
        base,
        quote,
        source,
        levels: p.levels.map((l) => ({ upToBase: BigInt(l.upToBase), spreadBps: l.spreadBps })),
        minBase: BigInt(p.minBase),
        maxBase: BigInt(p.maxBase),
      };
      this.byMints.set(`${base.mint}>${quote.mint}`, pair);
      this.byMints.set(`${quote.mint}>${base.mint}`, pair);
    }
  }

  /** True when some enabled pair trades these two mints (in either direction). */
  supports(tokenIn: string, tokenOut: string): boolean {
    return this.byMints.get(`${tokenIn}>${tokenOut}`)?.config.enabled === true;
  }

  /** Prices one request. Pure apart from reading the in-memory price and the clock. */
  price(ask: QuoteAsk): PricedQuote | NoQuote {
    const pair = this.byMints.get(`${ask.tokenIn}>${ask.tokenOut}`);
    if (!pair) return no("PAIR_NOT_SUPPORTED", `no pair trades ${ask.tokenIn} for ${ask.tokenOut}`);
    if (!pair.config.enabled) return no("PAIR_DISABLED", `${pair.key} is disabled`);
    const point = pair.source.price(pair.key);
    if (!point) return no("PRICE_UNAVAILABLE", `no price for ${pair.key}`);
    const age = this.now() - point.updatedAtMs;
    if (age > pair.source.maxAgeMs) return no("PRICE_STALE", `${pair.key} price is ${age} ms old`);

    // rate = quote smallest units per base smallest unit = mid * 10^dq / 10^db, kept as num/den.
    const num = point.mid.num * 10n ** BigInt(pair.quote.decimals);
    const den = point.mid.den * 10n ** BigInt(pair.base.decimals);
    if (num === 0n) return no("PRICE_UNAVAILABLE", `${pair.key} price is zero`);

    const takerSide = ask.tokenOut === pair.base.mint ? "buy" : "sell";
    // Pick the level from the size at mid; the spread changes the size by far less than a level step.
    const baseAtMid =
      (takerSide === "sell") === (ask.quoteType === "exactIn")
        ? ask.amount // the amount is already in base units
        : mulDivFloor(ask.amount, den, num);
    const level = pair.levels.find((l) => baseAtMid <= l.upToBase);
    if (!level) return no("SIZE_ABOVE_MAX", `${pair.key} size ${baseAtMid} above ${pair.maxBase}`);
    const s = BigInt(level.spreadBps);

    let amountIn: bigint;
    let amountOut: bigint;
    let baseAmount: bigint;
    if (takerSide === "sell") {
      // The maker buys base at bid = mid * (1 - s).
      const bidNum = num * (BPS - s);
      const bidDen = den * BPS;
      if (ask.quoteType === "exactIn") {
        amountIn = ask.amount;
        amountOut = mulDivFloor(amountIn, bidNum, bidDen);
      } else {
        amountOut = ask.amount;
        if (bidNum === 0n) return no("PRICE_UNAVAILABLE", `${pair.key} bid is zero`);
        amountIn = mulDivCeil(amountOut, bidDen, bidNum);
      }
      baseAmount = amountIn;
    } else {
      // The maker sells base at ask = mid * (1 + s).
      const askNum = num * (BPS + s);
      const askDen = den * BPS;
      if (ask.quoteType === "exactIn") {
        amountIn = ask.amount;
        amountOut = mulDivFloor(amountIn, askDen, askNum);
      } else {
        amountOut = ask.amount;
        amountIn = mulDivCeil(amountOut, askNum, askDen);
      }
      baseAmount = amountOut;
    }

    if (amountIn <= 0n || amountOut <= 0n) {
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
    return {
      ok: true,
      amountIn,
      amountOut,
      pairKey: pair.key,
      takerSide,
      baseAmount,
      spreadBps: level.spreadBps,
    };
  }
}

function no(reason: NoQuoteReason, detail: string): NoQuote {
  return { ok: false, reason, detail };
}

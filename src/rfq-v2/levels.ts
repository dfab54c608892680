/**
 * RFQ v2 levels: a pair's standing ladders (QuotingBook.ladders) turned into what the level stream
 * sends and what a v2 fill may take. A rung of the book is a size band at one price; on the wire each
 * band becomes a level of whole lots (`lot_size_base` base atoms each) at a price per lot in quote
 * atoms, rounded the maker's way: the maker's bids down, its asks up. The wire's `price` is quote atoms
 * per one whole base token, chosen so that the program's own conversion (price x lot / 10^decimals,
 * floored) gives back exactly the per-lot price. Inventory cuts the ladder where the same check the
 * webhook uses (Inventory.check) stops passing, so a level never offers what a webhook quote reserved.
 */
import type { PairLadders } from "../../pricing/book.ts";

/** One level as the fill program walks it: whole lots at a price per lot (quote atoms). */
export interface LotLevel {
  lots: bigint;
  perLot: bigint;
}

/** One level as the stream sends it (PriceLevel): base atoms, and quote atoms per whole base token. */
export interface WireLevel {
  volume: bigint;
  price: bigint;
}

export interface PairLevels {
  pairKey: string;
  lotSizeBase: bigint;
  /** The maker's bids (the taker sells base), best (highest) first. */
  bids: LotLevel[];
  /** The maker's asks (the taker buys base), best (lowest) first. */
  asks: LotLevel[];
}

/**
 * Whether the maker can carry a trade: base and quote atoms, the maker's side ("bid": it buys base and
 * pays quote; "ask": it sells base and receives quote). The service passes Inventory.check.
 */
export type Fits = (side: "bid" | "ask", base: bigint, quote: bigint) => boolean;

/** The default lot: 10^(base decimals - quote decimals), or 1 when the base has no more decimals. */
export function defaultLotSize(baseDecimals: number, quoteDecimals: number): bigint {
  return baseDecimals > quoteDecimals ? 10n ** BigInt(baseDecimals - quoteDecimals) : 1n;
}

/** The ladders in whole lots, each side cut where the inventory stops carrying it. */
export function pairLevels(ladders: PairLadders, lotSizeBase: bigint, fits: Fits): PairLevels {
  if (lotSizeBase <= 0n) throw new Error(`${ladders.pairKey}: lot size must be positive`);
  const side = (which: "bid" | "ask"): LotLevel[] => {
    const rungs = which === "bid" ? ladders.bids : ladders.asks;
    const out: LotLevel[] = [];
    let lotsBefore = 0n;
    let costBefore = 0n;
    for (const r of rungs) {
      const cumLots = r.upToBase / lotSizeBase;
      const lots = cumLots - lotsBefore;
      if (lots <= 0n) continue;
      const exact = r.price.num * lotSizeBase;
      const perLot = which === "bid" ? exact / r.price.den : (exact + r.price.den - 1n) / r.price.den;
      if (perLot <= 0n) break;
      const carried = (n: bigint) => fits(which, (lotsBefore + n) * lotSizeBase, costBefore + n * perLot);
      if (carried(lots)) {
        out.push({ lots, perLot });
        lotsBefore += lots;
        costBefore += lots * perLot;
        continue;
      }
      // The largest number of this level's lots the inventory still carries (it carries 0 lots).
      let lo = 0n;
      let hi = lots;
      while (hi - lo > 1n) {
        const mid = (lo + hi) / 2n;
        if (carried(mid)) lo = mid;
        else hi = mid;
      }
      if (lo > 0n) out.push({ lots: lo, perLot });
      break;
    }
    return out;
  };
  return { pairKey: ladders.pairKey, lotSizeBase, bids: side("bid"), asks: side("ask") };
}

/**
 * A level on the wire. `price` x lot / 10^decimals, floored as the operator converts it, is the level's
 * per-lot price exactly when the lot divides 10^decimals; otherwise the maker's bids round down and its
 * asks up, so the conversion never lands on a better price for the taker.
 */
export function wireLevel(
  level: LotLevel,
  lotSizeBase: bigint,
  baseDecimals: number,
  side: "bid" | "ask",
): WireLevel {
  const scaled = level.perLot * 10n ** BigInt(baseDecimals);
  const price = side === "bid" ? scaled / lotSizeBase : (scaled + lotSizeBase - 1n) / lotSizeBase;
  return { volume: level.lots * lotSizeBase, price };
}

/**
 * A lot for a pair whose configuration names none: the smallest power of ten, at least
 * 10^(base decimals - quote decimals), at which one quote atom per lot is at most 1 bps of the mid
 * (`midPerBaseAtom`: quote atoms per base atom), so rounding a level to whole quote atoms per lot costs
 * the taker under 1 bps.
 */
export function lotSizeFor(
  midPerBaseAtom: { num: bigint; den: bigint },
  baseDecimals: number,
  quoteDecimals: number,
): bigint {
  let lot = defaultLotSize(baseDecimals, quoteDecimals);
  const cap = 10n ** BigInt(baseDecimals + 2);
  while (midPerBaseAtom.num * lot < 10_000n * midPerBaseAtom.den && lot < cap) lot *= 10n;
  return lot;
}

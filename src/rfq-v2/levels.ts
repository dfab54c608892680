/**
 * RFQ v2 levels: a pair's standing ladders (QuotingBook.ladders) turned into what the level stream
 * sends and what a v2 fill may take. The book prices each side as levels swept one by one, already in
 * whole quote atoms per lot (the maker's bids rounded down, its asks up: the same levels `/quote`
 * sweeps, amounts/ladder.ts); on the wire each becomes a level of whole lots (`lot_size_base` base atoms
 * each) at that price per lot. The wire's `price` is quote atoms per one whole base token, chosen so
 * that the program's own conversion (price x lot / 10^decimals, floored) gives back exactly the per-lot
 * price. Inventory cuts the ladder where the same check the webhook uses (Inventory.check) stops
 * passing, so a level never offers what a webhook quote reserved.
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

/** The ladders in whole lots (the book's lot), each side cut where the inventory stops carrying it. */
export function pairLevels(ladders: PairLadders, fits: Fits): PairLevels {
  const lotSizeBase = ladders.lotSizeBase;
  const side = (which: "bid" | "ask"): LotLevel[] => {
    const rungs = which === "bid" ? ladders.bids : ladders.asks;
    const out: LotLevel[] = [];
    let lotsBefore = 0n;
    let costBefore = 0n;
    for (const r of rungs) {
      const cumLots = r.upToBase / lotSizeBase;
      const lots = cumLots - lotsBefore;
      if (lots <= 0n) continue;
      const perLot = r.perLot;
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

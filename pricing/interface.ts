/**
 * PriceSource port: prices per pair ("BASE/QUOTE", quote units per one base unit, human units), held in
 * memory so the quote path never waits on the network. Adapters: static.ts (config), redis.ts (the
 * maker's own pricing engine, through Redis) and pyth.ts (Pyth's Hermes SSE stream).
 */
import type { Ratio } from "../amounts/decimal.ts";

/**
 * One rung of a ladder: the base above the previous rung's bound, up to `upToBase` (base smallest
 * units), trades at `price` (the rungs are swept one by one, pricing/README.md "One model of size").
 */
export interface LadderLevel {
  upToBase: bigint;
  /** Quote units per one base unit (human units), exact. */
  price: Ratio;
}

/**
 * Full per-side prices from the maker's pricing engine. Used as given instead of mid +/- configured
 * spread; each side ascends by `upToBase`.
 */
export interface Ladder {
  /** The maker buys base at these prices (the taker sells). */
  bids: LadderLevel[];
  /** The maker sells base at these prices (the taker buys). */
  asks: LadderLevel[];
}

export interface PricePoint {
  /** Mid price, quote units per one base unit (human units), exact. */
  mid: Ratio;
  /** Present when the source publishes full ladders; the book then prices from it. */
  ladder?: Ladder;
  /** When the source last saw this price (ms epoch); static prices are always fresh. */
  updatedAtMs: number;
}

export interface PriceSource {
  readonly name: string;
  /** Latest price from memory; undefined when the source has none for the pair. */
  price(pairKey: string): PricePoint | undefined;
  /** Prices older than this are unusable (the pair answers 404). Infinity for static prices. */
  readonly maxAgeMs: number;
  start(): Promise<void>;
  close(): Promise<void>;
}

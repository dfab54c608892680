/**
 * PriceSource port: mid prices per pair ("BASE/QUOTE", quote units per one base unit, human units),
 * held in memory so the quote path never waits on the network. Adapters: static.ts (config), and
 * sources fed by the maker's pricing system or a public oracle.
 */
import type { Ratio } from "./decimal.ts";

export interface PricePoint {
  /** Mid price, quote units per one base unit (human units), exact. */
  mid: Ratio;
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

/**
 * USD values of token amounts, exact. Prices come from the pricing layer (pricing/usd.ts implements
 * `UsdValues` through the configured pairs); the inventory layer only reads them through this
 * interface, so neither layer imports the other.
 */
import type { Ratio } from "./decimal.ts";

export interface UsdValues {
  /** Whether the token has any route to USD at all (a configuration question, not a freshness one). */
  hasRoute(mint: string): boolean;
  /** USD per one whole token, or undefined when a price on the route is missing or stale. */
  price(mint: string): Ratio | undefined;
  /** Exact USD value of `units` smallest units of the token. */
  value(mint: string, units: bigint): Ratio | undefined;
  /** Smallest units worth `usd`, rounded down (a limit converted to units never grows). */
  unitsFor(mint: string, usd: Ratio): bigint | undefined;
}

/** Exact USD value of `units` smallest units at `price` USD per whole token of `10^decimals` units. */
export function usdValue(units: bigint, price: Ratio, scale: bigint): Ratio {
  return { num: units * price.num, den: price.den * scale };
}

/** Smallest units worth `usd` at `price` USD per whole token, rounded down; undefined for a zero price. */
export function unitsForUsd(usd: Ratio, price: Ratio, scale: bigint): bigint | undefined {
  if (price.num === 0n) return undefined;
  return (usd.num * price.den * scale) / (usd.den * price.num);
}

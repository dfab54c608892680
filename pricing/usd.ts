/**
 * USD values for notional caps and exposure limits. Stablecoins (`stable: true`) count as 1 USD; any
 * other token is valued through the shortest chain of configured pairs leading to a stablecoin
 * (SOL via SOL/USDC, JUP via JUP/USDC or JUP/SOL then SOL/USDC), using fresh prices only.
 */

import type { Ratio } from "../amounts/decimal.ts";
import { type UsdValues, unitsForUsd, usdValue } from "../amounts/usd.ts";
import type { Config } from "../config/load.ts";
import type { PriceSource } from "./interface.ts";

interface Step {
  pairKey: string;
  source: PriceSource;
  /** The token is the pair's quote: divide by the mid instead of multiplying. */
  invert: boolean;
}

const ONE: Ratio = { num: 1n, den: 1n };

export class UsdValuer implements UsdValues {
  /** Per mint: the steps from the token to a stablecoin; [] for a stablecoin itself. */
  private readonly routes = new Map<string, Step[]>();
  private readonly decimals = new Map<string, bigint>();

  constructor(
    config: Config,
    sources: ReadonlyMap<string, PriceSource>,
    private readonly now: () => number = Date.now,
  ) {
    for (const t of config.file.tokens) {
      this.decimals.set(t.mint, 10n ** BigInt(t.decimals));
      if (t.stable) this.routes.set(t.mint, []);
    }
    // Breadth-first from the stablecoins, so every token gets its shortest route.
    let frontier = [...this.routes.keys()];
    while (frontier.length) {
      const next: string[] = [];
      for (const p of config.file.pairs) {
        const base = config.tokensBySymbol.get(p.base)!.mint;
        const quote = config.tokensBySymbol.get(p.quote)!.mint;
        const source = sources.get(p.priceSource);
        if (!source) continue;
        const pairKey = `${p.base}/${p.quote}`;
        if (frontier.includes(quote) && !this.routes.has(base)) {
          this.routes.set(base, [{ pairKey, source, invert: false }, ...this.routes.get(quote)!]);
          next.push(base);
        } else if (frontier.includes(base) && !this.routes.has(quote)) {
          this.routes.set(quote, [{ pairKey, source, invert: true }, ...this.routes.get(base)!]);
          next.push(quote);
        }
      }
      frontier = next;
    }
  }

  /** Whether the token has any route to USD at all (a configuration question, not a freshness one). */
  hasRoute(mint: string): boolean {
    return this.routes.has(mint);
  }

  /** USD per one whole token, or undefined when a price on the route is missing or stale. */
  price(mint: string): Ratio | undefined {
    const route = this.routes.get(mint);
    if (!route) return undefined;
    let num = ONE.num;
    let den = ONE.den;
    const now = this.now();
    for (const step of route) {
      const point = step.source.price(step.pairKey);
      if (!point || point.mid.num === 0n || now - point.updatedAtMs > step.source.maxAgeMs) return undefined;
      if (step.invert) {
        num *= point.mid.den;
        den *= point.mid.num;
      } else {
        num *= point.mid.num;
        den *= point.mid.den;
      }
    }
    return { num, den };
  }

  /** Exact USD value of `units` smallest units of the token. */
  value(mint: string, units: bigint): Ratio | undefined {
    const p = this.price(mint);
    const scale = this.decimals.get(mint);
    if (!p || scale === undefined) return undefined;
    return usdValue(units, p, scale);
  }

  /** Smallest units worth `usd`, rounded down (a limit converted to units never grows). */
  unitsFor(mint: string, usd: Ratio): bigint | undefined {
    const p = this.price(mint);
    const scale = this.decimals.get(mint);
    if (!p || scale === undefined) return undefined;
    return unitsForUsd(usd, p, scale);
  }
}

/**
 * The USD limits the configuration sets that no configured pair can value: a token's
 * `maxExposureUsd` or a pair's `maxNotionalUsd` whose token has no route to a stablecoin.
 */
export function usdRouteProblems(config: Config, usd: UsdValuer): string[] {
  const problems: string[] = [];
  for (const t of config.file.tokens) {
    if (t.maxExposureUsd !== undefined && !usd.hasRoute(t.mint)) {
      problems.push(
        `tokens.${t.symbol}.maxExposureUsd: no pair values ${t.symbol} in USD (needs a route to a stable token)`,
      );
    }
  }
  for (const p of config.file.pairs) {
    const quote = config.tokensBySymbol.get(p.quote)!;
    if (p.maxNotionalUsd !== undefined && !usd.hasRoute(quote.mint)) {
      problems.push(`pairs.${p.base}/${p.quote}.maxNotionalUsd: no USD price for ${quote.symbol}`);
    }
  }
  return problems;
}

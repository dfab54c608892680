/**
 * The cap on a fill whose compute-unit price a wallet raised above the quoted one (config:
 * `limits.raisedFeeCap`, overridden per pair by `pairs[].raisedFeeCap`), resolved for a quote's two
 * mints in either direction. The rule that applies it is rules/compute-budget.ts.
 */
import type { Config } from "../../config/load.ts";
import type { RaisedFeeCapConfig } from "../../config/schema.ts";

export interface RaisedFeeCap {
  /** The most lamports the maker's whole fee for a raised fill may be. */
  maxLamports: bigint;
  /** The most the maker's whole fee may be as a share of the quote's SOL leg, in bps. */
  maxNotionalBps: bigint;
}

const capOf = (c: RaisedFeeCapConfig): RaisedFeeCap => ({
  maxLamports: BigInt(c.maxLamports),
  maxNotionalBps: BigInt(c.maxNotionalBps),
});

/** A lookup of the cap by the quote's mints (tokenIn, tokenOut), built once from the configuration. */
export function raisedFeeCaps(config: Config): (tokenIn: string, tokenOut: string) => RaisedFeeCap {
  const fallback = capOf(config.file.limits.raisedFeeCap);
  const byPair = new Map<string, RaisedFeeCap>();
  for (const pair of config.file.pairs) {
    if (!pair.raisedFeeCap) continue;
    const base = config.tokensBySymbol.get(pair.base)?.mint;
    const quote = config.tokensBySymbol.get(pair.quote)?.mint;
    if (!base || !quote) continue;
    const cap = capOf(pair.raisedFeeCap);
    byPair.set(`${base}/${quote}`, cap);
    byPair.set(`${quote}/${base}`, cap);
  }
  return (tokenIn, tokenOut) => byPair.get(`${tokenIn}/${tokenOut}`) ?? fallback;
}

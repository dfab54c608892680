/** The configured pair a trade belongs to, and the maker's side of it. */
import type { Config } from "../../config/load.ts";

export interface PairSide {
  /** "BASE/QUOTE" as configured. */
  pair: string;
  /** "sell": the maker gives the base (the taker buys it); "buy": the maker takes the base. */
  side: "buy" | "sell";
}

/** undefined when no configured pair trades these two mints. */
export function pairSide(config: Config, inputMint: string, outputMint: string): PairSide | undefined {
  const symIn = config.tokensByMint.get(inputMint)?.symbol;
  const symOut = config.tokensByMint.get(outputMint)?.symbol;
  if (!symIn || !symOut) return undefined;
  for (const p of config.file.pairs) {
    if (p.base === symOut && p.quote === symIn) return { pair: `${p.base}/${p.quote}`, side: "sell" };
    if (p.base === symIn && p.quote === symOut) return { pair: `${p.base}/${p.quote}`, side: "buy" };
  }
  return undefined;
}

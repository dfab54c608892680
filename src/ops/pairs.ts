/**
 * The pairs in human units, for the banner, `doctor` and `registration`: each enabled pair's sizes in
 * tokens and in USD, its spreads by size, its caps, its price, source and the price's age. Token
 * amounts are exact (amounts/decimal.ts); USD values are rounded down to the cent.
 */
import { formatRatio, formatUnits, parseDecimal, type Ratio } from "../../amounts/decimal.ts";
import type { Config } from "../../config/load.ts";
import type { PairConfig } from "../../config/schema.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { UsdValuer } from "../../pricing/usd.ts";
import { table } from "../lib/table.ts";

export interface PairLine {
  pair: string;
  /** "0.001 - 500 SOL". */
  size: string;
  /** "$0.18 - $90,125.00", or why there is no USD value. */
  sizeUsd: string;
  /** "5 bps to 10 SOL, 10 bps to 100 SOL, ..." (bid and ask apart when they differ). */
  spreads: string;
  /** "notional $50,000.00; SOL exposure $20,000.00", or "none". */
  caps: string;
  /** The mid, quote per base, or "no price". */
  price: string;
  /** `name (kind)`. */
  source: string;
  /** "0.4 s (limit 5 s)", "static", or "-" without a price. */
  age: string;
}

/** "90125.50" as "90,125.50". */
const grouped = (s: string) => s.replace(/^(\d+)/, (d) => d.replace(/\B(?=(\d{3})+$)/g, ","));
const usd = (r: Ratio) => `$${grouped(formatRatio(r, 2))}`;
const seconds = (ms: number) =>
  `${formatRatio({ num: BigInt(Math.max(0, Math.round(ms))), den: 1000n }, 1)} s`;

export function pairLines(
  config: Config,
  sources: ReadonlyMap<string, PriceSource>,
  usdValues: UsdValuer,
  now: number = Date.now(),
): PairLine[] {
  return config.file.pairs
    .filter((p) => p.enabled)
    .flatMap((p) => {
      const key = `${p.base}/${p.quote}`;
      const base = config.tokensBySymbol.get(p.base);
      if (!base) return []; // the configuration refuses a pair of an unknown token

      const tokens = (units: string) => formatUnits(BigInt(units), base.decimals);
      const minUsd = usdValues.value(base.mint, BigInt(p.minBase));
      const maxUsd = usdValues.value(base.mint, BigInt(p.maxBase));
      const source = sources.get(p.priceSource);
      const point = source?.price(key);
      const kind = config.file.priceSources[p.priceSource]?.kind ?? "?";
      return [
        {
          pair: key,
          size: `${tokens(p.minBase)} - ${tokens(p.maxBase)} ${p.base}`,
          sizeUsd:
            minUsd && maxUsd
              ? `${usd(minUsd)} - ${usd(maxUsd)}`
              : usdValues.hasRoute(base.mint)
                ? "no fresh price"
                : "no route to USD",
          spreads: spreads(p, tokens, point?.ladder !== undefined),
          caps: caps(config, p),
          price: point ? formatRatio(point.mid, 6) : "no price",
          source: `${p.priceSource} (${kind})`,
          age:
            !point || !source
              ? "-"
              : Number.isFinite(source.maxAgeMs)
                ? `${seconds(now - point.updatedAtMs)} (limit ${seconds(source.maxAgeMs)})`
                : "static",
        },
      ];
    });
}

function spreads(p: PairConfig, tokens: (units: string) => string, ladder: boolean): string {
  if (ladder) return "from the source's ladder";
  const text = (levels: PairConfig["levels"]) =>
    levels.map((l) => `${l.spreadBps} bps to ${tokens(l.upToBase)} ${p.base}`).join(", ");
  const bid = text(p.bidLevels ?? p.levels);
  const ask = text(p.askLevels ?? p.levels);
  return bid === ask ? bid : `bid ${bid}; ask ${ask}`;
}

function caps(config: Config, p: PairConfig): string {
  const out: string[] = [];
  if (p.maxNotionalUsd !== undefined) out.push(`notional ${usd(parseDecimal(p.maxNotionalUsd))}`);
  for (const symbol of [p.base, p.quote]) {
    const t = config.tokensBySymbol.get(symbol);
    if (!t) continue;
    if (t.maxExposureUsd !== undefined) out.push(`${symbol} exposure ${usd(parseDecimal(t.maxExposureUsd))}`);
    const issued = config.file.issuance[symbol];
    if (issued)
      out.push(
        `${symbol} issued ${formatUnits(BigInt(issued.maxPerFill), t.decimals)}/fill, ${formatUnits(BigInt(issued.maxPerDay), t.decimals)}/day`,
      );
  }
  return out.length ? out.join("; ") : "none";
}

export function formatPairs(lines: readonly PairLine[]): string {
  return table(
    ["PAIR", "SIZE", "SIZE (USD)", "SPREADS", "CAPS", "PRICE", "SOURCE", "PRICE AGE"],
    lines.map((l) => [l.pair, l.size, l.sizeUsd, l.spreads, l.caps, l.price, l.source, l.age]),
  );
}

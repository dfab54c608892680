/**
 * Whether every configured pair can be quoted, as named conditions (src/observability/conditions.ts):
 *   `token:<SYMBOL>`  a token some enabled pair trades is not advertised because the maker cannot
 *                     trade it at all: its mint is not found, is under another token program or has
 *                     other decimals, has a transfer fee, or the maker has no associated token account;
 *   `price:<PAIR>`    an enabled pair has no price, or a price older than its source's limit.
 * In production each blocks readiness unless every pair it stops is marked `optional` in the
 * configuration. A token's balance below its minInventory is trading as usual (the maker sold out), not
 * a condition.
 */
import type { Config } from "../../config/load.ts";
import type { PairConfig } from "../../config/schema.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { Conditions } from "../observability/conditions.ts";

export interface QuotableDeps {
  config: Config;
  inventory: Pick<Inventory, "snapshot">;
  priceSources: ReadonlyMap<string, PriceSource>;
  now: () => number;
}

const keyOf = (p: PairConfig) => `${p.base}/${p.quote}`;

/** Evaluates the token and price conditions of every enabled pair into `conditions`. */
export function quotableConditions(conditions: Conditions, deps: QuotableDeps): () => void {
  const { config, inventory, priceSources, now } = deps;
  const pairs = config.file.pairs.filter((p) => p.enabled);
  const production = config.mode === "production";
  const blocks = (stopped: readonly PairConfig[]) => production && stopped.some((p) => !p.optional);
  const tokens = config.file.tokens.filter((t) =>
    pairs.some((p) => p.base === t.symbol || p.quote === t.symbol),
  );
  return () => {
    const snap = inventory.snapshot();
    for (const t of tokens) {
      const h = snap.holdings.find((x) => x.mint === t.mint);
      const why =
        snap.chainReadAtMs === undefined || !h
          ? undefined
          : h.problem
            ? h.problem
            : h.ataExists
              ? undefined
              : `the maker has no associated token account (${h.ata})`;
      const stopped = pairs.filter((p) => p.base === t.symbol || p.quote === t.symbol);
      conditions.set(
        `token:${t.symbol}`,
        why === undefined
          ? undefined
          : {
              detail: `${t.symbol} (${t.mint}) is not advertised: ${why}; not quoted: ${stopped.map(keyOf).join(", ")}`,
              blocksReady: blocks(stopped),
            },
      );
    }
    for (const p of pairs) {
      const key = keyOf(p);
      const source = priceSources.get(p.priceSource);
      const point = source?.price(key);
      const age = point ? now() - point.updatedAtMs : 0;
      const why =
        !source || !point
          ? `no price for ${key} from source "${p.priceSource}"`
          : age > source.maxAgeMs
            ? `${key} price is ${age} ms old (source "${p.priceSource}", limit ${source.maxAgeMs} ms)`
            : undefined;
      conditions.set(
        `price:${key}`,
        why === undefined ? undefined : { detail: `${why}: not quoted`, blocksReady: blocks([p]) },
      );
    }
  };
}

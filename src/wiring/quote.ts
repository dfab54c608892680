/**
 * The webhook's quote channel: the book that prices (pause, pair switches, fresh prices, levels,
 * skew, size, notional), the token lists it advertises (`GET /tokens`, `/permissioned-tokens`), the
 * quote service that decides, and the quote store's circuit breaker on the quote path.
 */
import { join } from "node:path";
import { AdvertisedTokenLists } from "../../inventory/advertised.ts";
import { FileAdvertisedStore } from "../../inventory/advertised-store/file.ts";
import { RedisAdvertisedStore } from "../../inventory/advertised-store/redis.ts";
import { QuotingBook } from "../../pricing/book.ts";
import { Conditions } from "../observability/conditions.ts";
import { QuoteService } from "../quote/service.ts";
import { Circuit } from "../redis/circuit.ts";
import type { WiredHealth } from "./health.ts";
import { owned, type Wiring } from "./options.ts";
import type { ConfiguredParts } from "./parts.ts";
import { quotableConditions } from "./quotable.ts";
import type { WiredKeys } from "./signer.ts";
import type { WiredState } from "./state.ts";

export interface WiredQuote {
  book: QuotingBook;
  tokenLists: AdvertisedTokenLists;
  quotes: QuoteService;
  storeCircuit: Circuit;
  /** What cannot be quoted (a token not advertised, a stale price), named on /ready and in the log. */
  conditions: Conditions;
}

/** How often the conditions are re-evaluated (a price goes stale between inventory changes). */
const CONDITIONS_TICK_MS = 1_000;

export async function wireQuote(
  w: Wiring,
  parts: ConfiguredParts,
  keys: WiredKeys,
  state: WiredState,
  health: WiredHealth,
): Promise<WiredQuote> {
  const { config, redis, log, now } = w;
  const { inventory, takers, issuance } = state;
  const book = new QuotingBook(config, parts.priceSources, {
    now,
    position: (mint) => inventory.position(mint),
    controls: state.controls,
    usd: parts.usd,
  });
  const tokenLists = new AdvertisedTokenLists(config, inventory, {
    store: redis
      ? new RedisAdvertisedStore(redis, w.keys.advertised)
      : new FileAdvertisedStore(join(config.env.DATA_DIR, "advertised.json")),
    log,
  });
  await tokenLists.start();
  owned(w, tokenLists);
  // What cannot be quoted, said once when it starts and once when it ends (and on /ready).
  const conditions = new Conditions({ log, now });
  conditions.watch(
    quotableConditions(conditions, { config, inventory, priceSources: parts.priceSources, now }),
  );
  const unwatchInventory = inventory.onChange(() => conditions.refresh());
  conditions.start(CONDITIONS_TICK_MS);
  w.closers.push(async () => {
    unwatchInventory();
    conditions.close();
  });
  const tox = config.file.toxicity;
  const quotes = new QuoteService({
    fillPath: health.fillPath,
    config,
    book,
    inventory,
    maker: keys.signer.publicKey.toBase58(),
    ...(takers ? { toxicity: { takers, action: tox.action, widenBps: tox.widenBps } } : {}),
    ...(issuance
      ? {
          issuance: {
            policies: issuance.policies,
            usage: issuance.usage,
            ...(issuance.unavailable ? { unavailable: issuance.unavailable } : {}),
          },
        }
      : {}),
  });
  const storeCircuit = new Circuit({ name: "quoteStore", log, metrics: w.metrics, now });
  return { book, tokenLists, quotes, storeCircuit, conditions };
}

/**
 * The maker's shared state, read by every channel that quotes or signs: the quote store, the price
 * sources (started), the inventory, the switches (pause, pairs), the takers' standing (toxicity) and
 * the issuance of permissioned tokens. Redis-backed when the deployment has a Redis, so that every
 * worker and instance sees the same; in memory otherwise.
 */
import type { Inventory } from "../../inventory/interface.ts";
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import { MemoryIssuanceUsage } from "../../inventory/issuance/memory.ts";
import { RedisIssuanceUsage } from "../../inventory/issuance/redis.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import { RedisInventory } from "../../inventory/redis.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import { RedisControls } from "../../pricing/controls/redis.ts";
import { IssuancePolicies } from "../issuance/policy.ts";
import type { IssuancePorts } from "../issuance/ports.ts";
import type { QuoteStore } from "../quote-store/interface.ts";
import { MemoryQuoteStore } from "../quote-store/memory.ts";
import { RedisQuoteStore } from "../quote-store/redis.ts";
import type { TakerStanding } from "../toxicity/interface.ts";
import { MemoryTakerStanding } from "../toxicity/memory.ts";
import { RedisTakerStanding } from "../toxicity/redis.ts";
import type { WiredChain } from "./chain.ts";
import { owned, type Wiring } from "./options.ts";
import type { ConfiguredParts } from "./parts.ts";
import type { WiredKeys } from "./signer.ts";

export interface WiredState {
  store: QuoteStore;
  inventory: Inventory;
  controls: Controls;
  /** The toxic-flow controls' taker lists (toxicity.enabled only). */
  takers: TakerStanding | undefined;
  /** The issuance ports, when the configuration issues permissioned tokens. */
  issuance: IssuancePorts | undefined;
}

/** Starts a port this process made and registers it to be closed; a given one is the caller's. */
async function startOwned<T extends { start(): Promise<unknown>; close(): Promise<unknown> }>(
  w: Wiring,
  port: T,
): Promise<T> {
  await port.start();
  return owned(w, port);
}

export async function wireState(
  w: Wiring,
  parts: ConfiguredParts,
  keys: WiredKeys,
  chain: WiredChain,
): Promise<WiredState> {
  const { config, given, redis, keys: prefix, log, now } = w;
  const limits = config.file.limits;
  const store = owned(
    w,
    redis
      ? new RedisQuoteStore(redis, prefix.quotes, {
          now,
          retainAfterExpiryMs: limits.quoteRetainAfterExpiryMs,
        })
      : new MemoryQuoteStore(limits.memoryStoreMaxQuotes, now, limits.quoteRetainAfterExpiryMs),
  );
  if (!given.priceSources) {
    owned(w, parts);
    for (const s of parts.priceSources.values()) await s.start();
  }
  const made = { config, chain: chain.chain, maker: keys.signer.publicKey, usd: parts.usd, log, now };
  const inventory =
    given.inventory ??
    (await startOwned(
      w,
      redis ? new RedisInventory(redis, made, prefix.inventory) : new MemoryInventory(made),
    ));
  const ctl = config.file.controls;
  const controls =
    given.controls ??
    (await startOwned(
      w,
      redis
        ? new RedisControls(redis, {
            prefix: prefix.controls,
            pollMs: ctl.pollMs,
            failClosedAfterMs: ctl.failClosedAfterMs,
            log,
            now,
          })
        : new MemoryControls(now),
    ));
  w.metrics.watch({ config, inventory, controls, priceSources: parts.priceSources, now });
  // The toxic-flow controls: off unless toxicity.enabled, and then read in memory on both paths.
  const tox = config.file.toxicity;
  const takers: TakerStanding | undefined = tox.enabled
    ? await startOwned(
        w,
        redis
          ? new RedisTakerStanding(redis, tox, { prefix: prefix.toxicity, reloadMs: tox.reloadMs, log, now })
          : new MemoryTakerStanding(tox, now),
      )
    : undefined;
  return { store, inventory, controls, takers, issuance: await wireIssuance(w, keys, chain) };
}

async function wireIssuance(
  w: Wiring,
  keys: WiredKeys,
  chain: WiredChain,
): Promise<IssuancePorts | undefined> {
  if (!keys.issuer) return undefined;
  const { config, redis, now } = w;
  const usage: IssuanceUsage =
    w.given.issuanceUsage ??
    (await startOwned(
      w,
      redis
        ? new RedisIssuanceUsage(redis, w.keys.issuance, { syncMs: config.file.inventory.syncMs, now })
        : new MemoryIssuanceUsage(),
    ));
  const port = chain.bundles.port;
  return {
    policies: new IssuancePolicies(config),
    usage,
    companions: keys.issuer.companions,
    bundles: port ?? undefined,
    ...(port ? {} : { unavailable: chain.bundles.reason }),
  };
}

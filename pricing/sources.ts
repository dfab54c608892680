/**
 * Builds the configured price sources (one per `priceSources` entry), for main.ts, the ops commands
 * and test harnesses. Starting and closing stays with the caller.
 */
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { type Config, ConfigError } from "../config/load.ts";
import type { PriceSourceConfig } from "../config/schema.ts";
import type { PriceSource } from "./interface.ts";
import { PythPriceSource } from "./pyth.ts";
import { RedisPriceSource } from "./redis.ts";
import { StaticPriceSource } from "./static.ts";

export function createPriceSources(
  config: Config,
  deps: { redis?: Redis | Cluster; log?: Logger } = {},
): Map<string, PriceSource> {
  return createNamedPriceSources(
    config.file.priceSources,
    (name) => config.file.pairs.filter((p) => p.priceSource === name).map((p) => `${p.base}/${p.quote}`),
    deps,
  );
}

/**
 * The same, from any `priceSources` block and the pairs ("BASE/QUOTE") each source serves: the
 * signer service builds its own sources from its own file with it (src/signer/service/index.ts).
 */
export function createNamedPriceSources(
  configs: Readonly<Record<string, PriceSourceConfig>>,
  pairsOf: (name: string) => string[],
  deps: { redis?: Redis | Cluster; log?: Logger } = {},
): Map<string, PriceSource> {
  const sources = new Map<string, PriceSource>();
  for (const [name, sc] of Object.entries(configs)) {
    const pairs = pairsOf(name);
    switch (sc.kind) {
      case "static":
        sources.set(name, new StaticPriceSource(name, sc.prices));
        break;
      case "redis":
        if (!deps.redis) {
          throw new ConfigError(
            `priceSources.${name}: kind "redis" needs Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS)`,
          );
        }
        sources.set(
          name,
          new RedisPriceSource(name, deps.redis, pairs, {
            keyPrefix: sc.keyPrefix,
            channel: sc.channel,
            maxAgeMs: sc.maxAgeMs,
            pollMs: sc.pollMs,
            ...(deps.log ? { log: deps.log } : {}),
          }),
        );
        break;
      case "pyth":
        sources.set(
          name,
          new PythPriceSource(name, {
            url: sc.url,
            feeds: sc.feeds,
            maxAgeMs: sc.maxAgeMs,
            idleReconnectMs: sc.idleReconnectMs,
            ...(sc.maxConfBps !== undefined ? { maxConfBps: sc.maxConfBps } : {}),
            ...(deps.log ? { log: deps.log } : {}),
          }),
        );
        break;
    }
  }
  return sources;
}

/** Starts every source; a source that cannot start (Redis down at boot) stops the boot. */
export async function startPriceSources(sources: ReadonlyMap<string, PriceSource>): Promise<void> {
  await Promise.all([...sources.values()].map((s) => s.start()));
}

export async function closePriceSources(sources: ReadonlyMap<string, PriceSource>): Promise<void> {
  await Promise.allSettled([...sources.values()].map((s) => s.close()));
}

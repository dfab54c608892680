/**
 * The configured parts of the service, built by this one function for every entry point: the service
 * (src/compose.ts, src/wiring/), doctor and registration (src/ops/context.ts) and report (src/ops/report-main.ts).
 * A configuration that one of them refuses, each refuses with the same ConfigError (exit 78).
 */
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { type Config, ConfigError } from "../../config/load.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { closePriceSources, createPriceSources } from "../../pricing/sources.ts";
import { UsdValuer, usdRouteProblems } from "../../pricing/usd.ts";

export interface ConfiguredParts {
  /** The configured price sources, not started (the caller starts those it uses). */
  priceSources: ReadonlyMap<string, PriceSource>;
  /** USD values over those sources (exposure limits, notional caps, the pairs table). */
  usd: UsdValuer;
  /** Closes the price sources built here (not ready-made ones). */
  close(): Promise<void>;
}

export interface PartsOptions {
  /** The Redis client the service uses (a `redis` price source reads it); none in the paper setup. */
  redis?: Redis | Cluster;
  log?: Logger;
  now?: () => number;
  /** Ready-made price sources the caller owns (tests share them between two instances). */
  priceSources?: ReadonlyMap<string, PriceSource>;
}

export function configuredParts(config: Config, opts: PartsOptions = {}): ConfiguredParts {
  const own = opts.priceSources
    ? undefined
    : createPriceSources(config, {
        ...(opts.redis ? { redis: opts.redis } : {}),
        ...(opts.log ? { log: opts.log } : {}),
      });
  const priceSources = opts.priceSources ?? (own as ReadonlyMap<string, PriceSource>);
  const usd = new UsdValuer(config, priceSources, opts.now ?? Date.now);
  const problems = usdRouteProblems(config, usd);
  if (problems.length) throw new ConfigError(problems.join("\n"));
  return {
    priceSources,
    usd,
    close: async () => {
      if (own) await closePriceSources(own);
    },
  };
}

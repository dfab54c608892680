/**
 * Composes a real service for tests through the same composition root as `npm start`
 * (src/compose.ts): local chain seeded with maker inventory, silent logs, and either the in-memory
 * store or a real Redis under a unique key prefix.
 */
import { randomUUID } from "node:crypto";
import { Keypair } from "@solana/web3.js";
import type { FileConfig } from "../../config/schema.ts";
import { composeService, type Service } from "../../src/compose.ts";
import { createLogger } from "../../src/observability/logger.ts";
import type { RedisClient } from "../../src/redis/client.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import type { ComposeOptions } from "../../src/wiring/options.ts";
import { testConfig } from "./config.ts";

export interface TestServiceOptions extends ComposeOptions {
  env?: Record<string, string | undefined>;
  vary?: (file: FileConfig) => FileConfig;
}

export async function testService(opts: TestServiceOptions = {}): Promise<Service> {
  const { env, vary, ...compose } = opts;
  const config = testConfig(env, vary);
  return composeService(config, {
    log: createLogger("silent"),
    signer: new KeypairSigner(Keypair.generate()),
    ...compose,
  });
}

/** A Redis-backed test service; `redis` is shared, the prefix isolates this service's keys. */
export function redisServiceOptions(redis: RedisClient, prefix = `test:${randomUUID()}:`): ComposeOptions {
  return { redis, redisPrefix: prefix };
}

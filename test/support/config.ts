/** Configs for tests: the shipped default, optionally varied, with an environment given inline. */
import { readFileSync } from "node:fs";
import {
  buildConfig,
  type Config,
  DEFAULT_CONFIG_PATH,
  parseEnv,
  parseFileConfig,
} from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";

export function defaultFileConfig(): FileConfig {
  return parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
}

export function testConfig(
  env: Record<string, string | undefined> = {},
  vary: (file: FileConfig) => FileConfig = (f) => f,
): Config {
  return buildConfig(
    parseEnv({ LOG_LEVEL: "silent", LEDGER: "off", ...env }),
    parseFileConfig(vary(defaultFileConfig())),
  );
}

export const MINT = {
  SOL: "So11111111111111111111111111111111111111112",
  USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  USDT: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  JUP: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
} as const;

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, loadDotEnv, parseFileConfig, redisKeys } from "../../config/load.ts";
import { base58Pubkey } from "../../config/schema.ts";
import { defaultFileConfig } from "../support/config.ts";
import { fileTempDir } from "../support/tmp.ts";

/** The file config as loose JSON, so a test can break one field the schema would never produce. */
// biome-ignore lint/suspicious/noExplicitAny: deliberately malformed configuration
type MutableConfig = any;

describe("configuration", () => {
  it("loads the shipped default with nothing set: paper mode on port 8080", () => {
    const config = loadConfig({});
    expect(config.mode).toBe("paper");
    expect(config.env.PORT).toBe(8080);
    expect(config.file.tokens.map((t) => t.symbol)).toEqual(
      expect.arrayContaining(["SOL", "USDC", "USDT", "JUP"]),
    );
  });

  it.each([
    [{ RPC_URL: "http://127.0.0.1:8899" }, "MAKER_KEYPAIR, REDIS_URL"],
    [{ RPC_URL: "http://127.0.0.1:8899", MAKER_KEYPAIR: "/k.json" }, "REDIS_URL"],
    [{ RPC_URL: "http://127.0.0.1:8899", REDIS_URL: "redis://127.0.0.1:6379" }, "MAKER_KEYPAIR"],
  ])("refuses a half-given production setting and names what is missing (%o)", (env, missing) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`env: ${missing}: required when RPC_URL is set`));
  });

  it("refuses acceptance mode against a real RPC", () => {
    expect(() => loadConfig({ ACCEPTANCE_MODE: "1", RPC_URL: "http://x" })).toThrow(/ACCEPTANCE_MODE/);
  });

  it.each([
    [{ PORT: "eighty" }, "env: PORT"],
    [{ PORT: "70000" }, "env: PORT"],
    [{ API_KEY: "short" }, "env: API_KEY"],
    [{ REDIS_URL: "http://not-redis" }, "env: REDIS_URL"],
    [{ ACCEPTANCE_MODE: "maybe" }, "env: ACCEPTANCE_MODE"],
    [{ CONFIG: "/nonexistent/config.json" }, "env: CONFIG"],
    [{ BUNDLE_URL: "ftp://engine.example" }, "env: BUNDLE_URL"],
    [{ BUNDLE_URL: "https://engine.example,not a url" }, "env: BUNDLE_URL"],
  ])("stops on a bad environment value, naming the key (%o)", (env, key) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(key);
  });

  it.each([
    ["a pair naming an unknown token", (f: MutableConfig) => (f.pairs[0].base = "DOGE"), "pairs.0.base"],
    ["a decimals out of range", (f: MutableConfig) => (f.tokens[0].decimals = 40), "tokens.0.decimals"],
    ["a mint that is not base58", (f: MutableConfig) => (f.tokens[1].mint = "0xdeadbeef"), "tokens.1.mint"],
    [
      "a level that does not reach maxBase",
      (f: MutableConfig) => (f.pairs[0].maxBase = "900000000000000"),
      "pairs.0",
    ],
    ["a non-integer size", (f: MutableConfig) => (f.pairs[0].minBase = "1.5"), "pairs.0.minBase"],
    ["a base path with a trailing slash", (f: MutableConfig) => (f.basePath = "/rfq/"), "basePath"],
    [
      "a missing static price",
      (f: MutableConfig) => delete f.priceSources.static.prices["SOL/USDC"],
      "SOL/USDC",
    ],
  ])("stops on %s, naming the key", (_name, mutate, key) => {
    const f = defaultFileConfig() as MutableConfig;
    mutate(f);
    expect(() => parseFileConfig(f)).toThrow(key);
  });
});

describe("base58Pubkey", () => {
  it.each([
    ["a mainnet mint", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", true],
    ["the system program (32 zero bytes)", "11111111111111111111111111111111", true],
    [
      "a 33-character spelling with an extra leading 1",
      "1EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      false,
    ],
    ["a string with characters outside base58", "0OIlFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1", false],
    ["31 bytes", "2222222222222222222222222222222", false],
    ["an empty string", "", false],
  ])("judges %s", (_name, value, ok) => {
    expect(base58Pubkey.safeParse(value).success).toBe(ok);
  });
});

describe("one Redis prefix", () => {
  const file = (extra: Record<string, unknown> = {}) => parseFileConfig({ ...defaultFileConfig(), ...extra });

  it("keeps every key where it was by default (rfq:quote:, rfq:swap:, rfq:inv:, rfq:ctl:, rfq:advertised, rfq:signer:, rfq:tox:, rfq:iss:)", () => {
    expect(redisKeys(file())).toEqual({
      quotes: "rfq:quote:",
      swap: "rfq:swap:",
      inventory: "rfq:inv:",
      controls: "rfq:ctl:",
      advertised: "rfq:advertised",
      signer: "rfq:signer:",
      toxicity: "rfq:tox:",
      issuance: "rfq:iss:",
    });
  });

  it("moves every part of the service with the one redisPrefix key", () => {
    const keys = redisKeys(file({ redisPrefix: "desk2:" }));
    expect(Object.values(keys).filter((v) => typeof v === "string")).toEqual([
      "desk2:quote:",
      "desk2:swap:",
      "desk2:inv:",
      "desk2:ctl:",
      "desk2:advertised",
      "desk2:signer:",
      "desk2:tox:",
      "desk2:iss:",
    ]);
  });
});

describe(".env (every entry point reads it before its settings)", () => {
  it("sets the names the environment does not set, keeps the environment's own values, and says which it set", () => {
    const dir = fileTempDir("dotenv-unit");
    writeFileSync(
      join(dir, ".env"),
      "# a comment\nRPC_URL=https://from-file\nPORT=9000\nAPI_KEY='quoted value'\n",
    );
    const env: Record<string, string | undefined> = { PORT: "8080" };
    expect(loadDotEnv(env, dir)).toEqual({ path: join(dir, ".env"), set: ["API_KEY", "RPC_URL"] });
    expect(env).toEqual({ PORT: "8080", RPC_URL: "https://from-file", API_KEY: "quoted value" });
  });

  it("is nothing without a .env file", () => {
    const env = { PORT: "8080" };
    expect(loadDotEnv(env, fileTempDir("dotenv-none"))).toBeUndefined();
    expect(env).toEqual({ PORT: "8080" });
  });
});

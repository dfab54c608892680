/**
 * Strict configuration: a misspelt key in the config file stops the start, naming the key and the
 * nearest known key (a silently dropped `maxNotionalUSD` would leave the notional cap off), and
 * environment variables that look like ours but that the service does not read are warned about.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  DEFAULT_CONFIG_PATH,
  loadConfig,
  OUR_ENV_PREFIXES,
  unknownEnvWarnings,
} from "../../config/load.ts";
import { editDistance, nearest } from "../../config/strict.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("rfq-strict-config");
// biome-ignore lint/suspicious/noExplicitAny: deliberately malformed configuration
type Loose = any;
let n = 0;

/** Writes the shipped config with one change and returns its path. */
function configWith(mutate: (c: Loose) => void): string {
  const c = JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8"));
  mutate(c);
  const path = join(dir, `config-${n++}.json`);
  writeFileSync(path, JSON.stringify(c));
  return path;
}

function errorOf(path: string): string {
  try {
    loadConfig({ CONFIG: path });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("unknown keys in the configuration file", () => {
  it.each([
    [
      "a misspelt pair key (maxNotionalUSD)",
      (c: Loose) => (c.pairs[0].maxNotionalUSD = "50000"),
      'pairs.0.maxNotionalUSD: unknown key (did you mean "maxNotionalUsd"?)',
    ],
    [
      "a misspelt limit",
      (c: Loose) => (c.limits = { ...c.limits, quoteTtl: 30_000 }),
      'limits.quoteTtl: unknown key (did you mean "quoteTtlMs"?)',
    ],
    [
      "a misspelt token key",
      (c: Loose) => (c.tokens[0].minInventroy = "5"),
      'tokens.0.minInventroy: unknown key (did you mean "minInventory"?)',
    ],
    [
      "a misspelt price source key",
      (c: Loose) => (c.priceSources.static.price = {}),
      'priceSources.static.price: unknown key (did you mean "prices"?)',
    ],
    [
      "a misspelt spread level key",
      (c: Loose) => (c.pairs[0].levels[0].spreadBp = 3),
      'pairs.0.levels.0.spreadBp: unknown key (did you mean "spreadBps"?)',
    ],
    [
      "a misspelt top-level key",
      (c: Loose) => (c.basepath = "/jupiter/rfq"),
      'basepath: unknown key (did you mean "basePath"?)',
    ],
  ])("refuses %s, naming it and the suggestion", (_name, mutate, expected) => {
    const path = configWith(mutate);
    expect(errorOf(path)).toBe(`${path}: ${expected}`);
  });

  it("lists the known keys when no known key is near", () => {
    const path = configWith((c) => {
      c.inventory = { zzzzzzzz: 1 };
    });
    expect(errorOf(path)).toMatch(
      /inventory\.zzzzzzzz: unknown key \(known keys: refreshMs, syncMs, minSolLamports, [^)]*\)/,
    );
  });

  it("names every unknown key, one line each", () => {
    const path = configWith((c) => {
      c.pairs[1].enabeld = false;
      c.pairs[1].skwe = {};
    });
    expect(errorOf(path).split("\n")).toEqual([
      `${path}: pairs.1.enabeld: unknown key (did you mean "enabled"?)`,
      `${path}: pairs.1.skwe: unknown key (did you mean "skew"?)`,
    ]);
  });

  it("does not start: npm start exits 78 naming the key and the suggestion", () => {
    const path = configWith((c) => (c.pairs[0].maxNotionalUSD = "50000"));
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, CONFIG: path, PORT: "0", ADMIN_PORT: "0", LOG_LEVEL: "silent" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(78);
    expect(run.stderr).toContain(
      `${path}: pairs.0.maxNotionalUSD: unknown key (did you mean "maxNotionalUsd"?)`,
    );
  });
});

describe("environment variables that look like ours", () => {
  it("are warned about once each, with the nearest known name", () => {
    expect(
      unknownEnvWarnings({
        REDIS_ULR: "redis://x",
        API_KYE: "k",
        RFQ_ANYTHING: "1",
        HOME: "/root",
        PATH: "/bin",
        REDIS_URL: "redis://x",
        NODE_ENV: "production",
      }),
    ).toEqual([
      "env: API_KYE: not a setting of this service, ignored (did you mean API_KEY?)",
      "env: REDIS_ULR: not a setting of this service, ignored (did you mean REDIS_URL?)",
      "env: RFQ_ANYTHING: not a setting of this service, ignored",
    ]);
  });

  it("derives the prefixes from the names the service reads", () => {
    expect(OUR_ENV_PREFIXES).toEqual(
      expect.arrayContaining(["RFQ_", "REDIS_", "RPC_", "MAKER_", "API_", "ADMIN_", "LOG_", "ALLOW_"]),
    );
  });

  it("reaches the configuration's start-up warnings (the service logs them once at start)", () => {
    expect(loadConfig({ LOG_LEVLE: "debug" }).warnings).toEqual([
      "env: LOG_LEVLE: not a setting of this service, ignored (did you mean LOG_LEVEL?)",
    ]);
  });
});

describe("the suggestion", () => {
  it("measures edits case-insensitively and suggests only near names", () => {
    expect(editDistance("maxNotionalUSD", "maxNotionalUsd")).toBe(0);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(nearest("quoteTtl", ["quoteTtlMs", "maxBodyBytes"])).toBe("quoteTtlMs");
    expect(nearest("completelyDifferent", ["quoteTtlMs", "maxBodyBytes"])).toBeUndefined();
  });
});

/**
 * WORKERS (src/http/cluster.ts): how many processes serve, and when more than one is refused because
 * state lives in the process. The processes themselves are exercised in test/faults/workers.fault.ts
 * and test/faults/sigterm.fault.ts.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../config/load.ts";
import { restartDelayMs, workerCount } from "../../src/http/cluster.ts";
import { testConfig } from "../support/config.ts";

const production = {
  RPC_URL: "http://127.0.0.1:8899",
  MAKER_KEYPAIR: "/dev/null",
  API_KEY: "a-production-api-key-0123456789",
  REDIS_URL: "redis://127.0.0.1:1",
  LEDGER: "off",
};

describe("workerCount", () => {
  it("defaults to every core in production mode with Redis and no embedded ledger", () => {
    expect(workerCount(testConfig(production), 4)).toEqual({ count: 4 });
    expect(
      workerCount(testConfig({ ...production, LEDGER: "on", DATABASE_URL: "postgres://x@h/db" }), 8),
    ).toEqual({ count: 8 });
  });

  it("takes WORKERS as given", () => {
    expect(workerCount(testConfig({ ...production, WORKERS: "3" }), 8)).toEqual({ count: 3 });
  });

  it("defaults to one process, saying why, where state lives in the process", () => {
    expect(workerCount(testConfig({}), 8)).toMatchObject({ count: 1, singleBecause: /paper setup/ });
    expect(workerCount(testConfig({ ...production, LEDGER: "on" }), 8)).toMatchObject({
      count: 1,
      singleBecause: /embedded fill ledger/,
    });
  });

  it.each([
    ["the paper setup", {}, /WORKERS: 2 is refused: the paper setup keeps its state/],
    [
      "the embedded ledger",
      { ...production, LEDGER: "on" },
      /WORKERS: 2 is refused: the embedded fill ledger/,
    ],
  ])("refuses WORKERS=2 with %s, naming why", (_n, env, message) => {
    expect(() => workerCount(testConfig({ ...env, WORKERS: "2" }), 8)).toThrow(ConfigError);
    expect(() => workerCount(testConfig({ ...env, WORKERS: "2" }), 8)).toThrow(message);
  });

  it("accepts WORKERS=1 anywhere", () => {
    expect(workerCount(testConfig({ WORKERS: "1" }), 8)).toEqual({ count: 1 });
  });
});

describe("restartDelayMs", () => {
  it("backs off a worker that keeps dying at start, up to 30 s, and restarts a long-lived one at once", () => {
    expect([1, 2, 3, 4, 8, 20].map((n) => restartDelayMs(n, 1_000))).toEqual([
      250, 500, 1_000, 2_000, 30_000, 30_000,
    ]);
    expect(restartDelayMs(1, 60_000)).toBe(100);
  });
});

/**
 * A dependency that cannot be reached at start stops the start with one line a person can act on:
 * the setting, the address and the cause; no stack trace, no ioredis "Unhandled error event", exit
 * code 69 (EX_UNAVAILABLE). The real entry point is run as its own process.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tooling/processes.ts";
import { startWebhook } from "../support/process.ts";
import { redisUrl } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("startup");

/** Runs the webhook until it exits; returns its exit code and stderr. */
async function start(env: Record<string, string>) {
  const w = startWebhook(env);
  const { code } = await w.exited;
  return { code, stderr: w.stderr(), stdout: w.stdout() };
}

function expectOneLine(stderr: string, pattern: RegExp) {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  expect(stderr).not.toMatch(/Unhandled error event/);
}

function keypairFile(): string {
  const path = join(dir, `maker-${Date.now()}.json`);
  writeFileSync(path, JSON.stringify(Array.from(Keypair.generate().secretKey)), { mode: 0o600 });
  return path;
}

describe("start-up with a dependency out of reach", () => {
  it("names REDIS_URL, its address and the cause when Redis does not answer", {
    timeout: 30_000,
  }, async () => {
    const port = await freePort();
    const r = await start({ REDIS_URL: `redis://user:secret@127.0.0.1:${port}` });
    expect(r.code).toBe(69);
    expectOneLine(
      r.stderr,
      new RegExp(`^cannot start: REDIS_URL: redis://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
    expect(r.stderr).not.toMatch(/secret/);
  });

  it("refuses a REDIS_URL database index the server does not have, naming REDIS_URL, before anything listens", {
    timeout: 30_000,
  }, async () => {
    const u = new URL(redisUrl());
    u.pathname = "/99";
    const r = await start({ REDIS_URL: u.toString() });
    expect(r.code).toBe(69);
    expectOneLine(
      r.stderr,
      /^cannot start: REDIS_URL: .*database 99 \(the URL's \/99\) cannot be selected: ERR DB index is out of range/,
    );
    expect(r.stderr).not.toMatch(/listening on/);
  });

  it("names DATABASE_URL, its address and the cause when the ledger's PostgreSQL does not answer", {
    timeout: 30_000,
  }, async () => {
    const port = await freePort();
    const r = await start({ LEDGER: "on", DATABASE_URL: `postgres://rfq:secret@127.0.0.1:${port}/rfq` });
    expect(r.code).toBe(69);
    expectOneLine(
      r.stderr,
      new RegExp(`^cannot start: DATABASE_URL: postgres://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
    expect(r.stderr).not.toMatch(/secret/);
  });

  it("names RPC_URL, its address and the cause when the chain RPC does not answer", {
    timeout: 30_000,
  }, async () => {
    const port = await freePort();
    const r = await start({
      RPC_URL: `http://127.0.0.1:${port}/?api-key=secret`,
      MAKER_KEYPAIR: keypairFile(),
      REDIS_URL: redisUrl(),
      API_KEY: "a-long-enough-api-key-for-tests",
      ALLOW_STATIC_PRICES: "1",
    });
    expect(r.code).toBe(69);
    expectOneLine(
      r.stderr,
      new RegExp(`^cannot start: RPC_URL: http://127\\.0\\.0\\.1:${port}: not reachable: .*ECONNREFUSED`),
    );
    expect(r.stderr).not.toMatch(/secret/);
  });

  it("names MAKER_KEYPAIR and the file when the key cannot be read", { timeout: 30_000 }, async () => {
    const missing = join(dir, "no-such-key.json");
    const r = await start({ MAKER_KEYPAIR: missing });
    expect(r.code).toBe(69);
    expectOneLine(r.stderr, /^cannot start: MAKER_KEYPAIR: .*no-such-key\.json.*ENOENT/);
  });
});

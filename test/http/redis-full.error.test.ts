/**
 * Redis at its maxmemory with `noeviction` refuses every write ("OOM command not allowed ..."). The
 * quote path then answers 404 with its own reason, QUOTE_STORE_FULL (counted in rfq_no_quote_total), never
 * a 5xx, and quotes again once Redis has room. A redis-server of the test's own, started with a tiny
 * maxmemory; never the shared test Redis.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisClient, type RedisClient, waitReady } from "../../src/redis/client.ts";
import { freePort, stopChild } from "../../tooling/processes.ts";
import type { Harness } from "../support/harness.ts";
import { jsonPost, quoteBody, readJson } from "../support/quotes.ts";
import { fileTempDir } from "../support/tmp.ts";
import { faultyHarness } from "../swap/setup.ts";

const dir = fileTempDir("redis-full");
let server: ChildProcess;
let admin: Redis;
let redis: RedisClient;
let h: Harness;

beforeAll(async () => {
  const port = await freePort();
  server = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--maxmemory",
      "4mb",
      "--maxmemory-policy",
      "noeviction",
    ],
    { stdio: "ignore" },
  );
  for (
    let i = 0;
    spawnSync("redis-cli", ["-p", String(port), "ping"])
      .stdout?.toString()
      .trim() !== "PONG";
    i++
  ) {
    if (i > 200) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 25));
  }
  admin = new Redis(port, "127.0.0.1");
  redis = createRedisClient(`redis://127.0.0.1:${port}`);
  await waitReady(redis, "REDIS_URL", `redis://127.0.0.1:${port}`);
  ({ h } = await faultyHarness({ redis: { redis, prefix: "full:" } }));
});
afterAll(async () => {
  await h?.close();
  redis?.disconnect();
  admin?.disconnect();
  await stopChild(server);
});

async function quote() {
  const res = await h.app.request(
    "/quote",
    jsonPost(quoteBody(), { "x-request-start": String(Date.now()), "x-request-timeout": "250" }),
  );
  return { status: res.status, body: await readJson(res) };
}

async function noQuoteCount(reason: string): Promise<number> {
  const m = await h.metrics.noQuotes.get();
  return m.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

/**
 * Puts Redis over its maxmemory with a margin: 2 MB of filler, then maxmemory lowered to 1 MB under
 * what Redis uses. Filling until the first refusal left it a few bytes over the line, and a small
 * drop in Redis' own memory (client buffers) let a later write through.
 */
async function fillUp(): Promise<void> {
  const chunk = "x".repeat(64 * 1024);
  for (let i = 0; i < 32; i++) await admin.set(`filler:${i}`, chunk);
  const info = await admin.info("memory");
  const used = Number(/used_memory:(\d+)/.exec(info)?.[1]);
  expect(used).toBeGreaterThan(2 * 1024 * 1024);
  await admin.config("SET", "maxmemory", String(used - 1024 * 1024));
  await expect(admin.set("filler:last", "x")).rejects.toThrow(/OOM/);
}

describe("Redis at its maxmemory (noeviction)", () => {
  it("answers 404 QUOTE_STORE_FULL, never a 5xx, while Redis refuses writes, and quotes again once it has room", async () => {
    expect((await quote()).status).toBe(200);
    await fillUp();
    const before = await noQuoteCount("QUOTE_STORE_FULL");
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await quote());
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(404));
    for (const a of answers) expect(JSON.stringify(a.body)).toMatch(/quote store is full/);
    expect((await noQuoteCount("QUOTE_STORE_FULL")) - before).toBe(20);
    // Room again: the circuit's probe finds Redis writable and quoting resumes.
    await admin.flushall();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await quote()).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  });
});

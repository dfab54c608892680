/**
 * `npm run rebalance -- --dry-run` asks as a real pass asks: on a sandbox whose only maker is this one
 * (the operator simulator with maker A's webhook alone, over the local chain's JSON-RPC endpoint), the
 * dry run's order names the maker as taker, the maker's own webhook declines its own wallet
 * (SELF_TRADE), and the command prints that no one offered a price instead of a price a pass could
 * never get. Run as an operator runs it: a child process with RPC_URL, MAKER_KEYPAIR, REDIS_URL and
 * OPERATOR_API_URL.
 */
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH } from "../../config/load.ts";
import { startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { operatorChainOverRpc } from "../../sandbox/operator/rpc-chain.ts";
import { type OperatorServer, startOperator } from "../../sandbox/operator/server.ts";
import { createHarness, type Harness, listen } from "../support/harness.ts";
import { npmRun } from "../support/npm-run.ts";
import { fileRedis, redisUrl } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("rebalance-dry-run");
const redis = fileRedis();
const SEEDED = 10_000_000n * 1_000_000n;

let a: Harness;
let op: OperatorServer;
let rpcUrl: string;
const closers: (() => Promise<void>)[] = [];
const maker = Keypair.generate();

beforeAll(async () => {
  a = await createHarness({ maker, redis: { redis: redis.redis, prefix: `${redis.prefix}a:` } });
  closers.push(() => a.close());
  const wa = await listen(a.app);
  closers.push(() => wa.close());
  const rpc = await startRpcServer(a.chain, { host: "127.0.0.1", port: 0 });
  closers.push(() => rpc.close());
  op = await startOperator({
    chain: operatorChainOverRpc(rpc.url),
    webhooks: [{ name: "a", baseUrl: wa.url }],
    quoteTimeoutMs: 5_000,
  });
  closers.push(() => op.close());
  rpcUrl = rpc.url;
});
afterAll(async () => {
  for (const c of closers.reverse()) await c();
});

describe("npm run rebalance -- --dry-run", () => {
  it("on a sandbox whose only maker is this one, prints that no one offered a price", async () => {
    const keyFile = join(dir, "maker.json");
    writeFileSync(keyFile, JSON.stringify(Array.from(maker.secretKey)), { mode: 0o600 });
    const configPath = join(dir, "config.json");
    const base = JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")) as Record<string, unknown>;
    writeFileSync(
      configPath,
      JSON.stringify({
        ...base,
        // Its own keys: the command's inventory and journal are not the webhook's in this test.
        redisPrefix: `${redis.prefix}cli:${randomUUID()}:`,
        rebalance: {
          targets: {
            JUP: {
              target: (SEEDED + 2_000_000_000n).toString(),
              band: "1000000000",
              maxTrade: "5000000000",
              against: "USDC",
              maxSlippageBps: 50,
              cooldownMs: 0,
              dailyNotionalUsd: "100000",
            },
          },
        },
      }),
    );
    const r = await npmRun("rebalance", ["--dry-run"], {
      CONFIG: configPath,
      DATA_DIR: join(dir, "data"),
      LOG_LEVEL: "warn",
      RPC_URL: rpcUrl,
      MAKER_KEYPAIR: keyFile,
      REDIS_URL: redisUrl(),
      API_KEY: "operator-key-0123456789",
      ALLOW_STATIC_PRICES: "1",
      OPERATOR_API_URL: op.url,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`maker ${maker.publicKey.toBase58()}`);
    expect(r.stdout).toMatch(/^JUP: would trade: JUP 10000000\.000000 free is below its band/m);
    expect(r.stdout).toContain(
      "no one offered a price: refused: Failed to get quotes (1 makers asked, none quoted in time)",
    );
    expect(r.stdout).not.toMatch(/within the price limit/);
    // It asked as the real pass asks: with the maker as taker, which the maker's own webhook declines.
    expect(await a.metrics.registry.metrics()).toMatch(/rfq_no_quote_total\{reason="SELF_TRADE"\} 1/);
  }, 120_000);
});

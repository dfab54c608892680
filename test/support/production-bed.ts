/**
 * A production-shaped bed for start-up tests of `npm start`'s entry point (the built
 * `dist/src/main.js`, as `npm start` runs it): the local chain's JSON-RPC server (sandbox/chain, here
 * in the test's process, seeded from config/default.json with the maker's inventory), a throwaway
 * redis-server, and a maker key file. `env` is what production mode needs (RPC_URL, MAKER_KEYPAIR,
 * REDIS_URL, API_KEY, ALLOW_STATIC_PRICES for the shipped static prices, LEDGER=off, one worker);
 * `startBuilt` runs the service with it (plus overrides) as its own process, output captured.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import { runChainServer } from "../../sandbox/chain/main.ts";
import { chainSeedSchema } from "../../sandbox/chain/seed-file.ts";
import { ensureBuilt, REPO_ROOT, startRedis } from "../../tooling/processes.ts";

export interface ProductionBed {
  dir: string;
  env: Record<string, string>;
  redisUrl: string;
  close(): Promise<void>;
}

export async function productionBed(dir: string): Promise<ProductionBed> {
  const makerPath = join(dir, "maker-keypair.json");
  writeFileSync(makerPath, JSON.stringify(Array.from(Keypair.generate().secretKey)), { mode: 0o600 });
  const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);
  const seed = chainSeedSchema.parse({
    host: "127.0.0.1",
    port: 0,
    maker: { keypair: makerPath, sol: "1000000000000" },
  });
  const { server } = await runChainServer(seed, file.tokens, file.issuance);
  const redis = await startRedis({ own: true });
  return {
    dir,
    redisUrl: redis.url,
    env: {
      RPC_URL: server.url,
      MAKER_KEYPAIR: makerPath,
      REDIS_URL: redis.url,
      API_KEY: "production-bed-key-0123456789",
      ALLOW_STATIC_PRICES: "1",
      LEDGER: "off",
      WORKERS: "1",
      HOST: "127.0.0.1",
      PORT: "0",
      ADMIN_HOST: "127.0.0.1",
      ADMIN_PORT: "0",
      DATA_DIR: join(dir, "data"),
      LOG_LEVEL: "info",
    },
    async close() {
      await server.close();
      await redis.stop();
    },
  };
}

export interface BuiltService {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Resolves once the banner is out (the "listening" log line after it), or the process exited first. */
  started: Promise<void>;
  /** The operations listener's URL, from the banner (once started). */
  opsUrl(): string | undefined;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * `npm start`'s entry (dist/src/main.js, built when stale) with only PATH, HOME and `env`: nothing of
 * the test's own environment leaks in.
 */
export function startBuilt(
  env: Record<string, string>,
  opts: { cwd?: string; node?: string } = {},
): BuiltService {
  ensureBuilt();
  const proc = spawn(opts.node ?? process.execPath, [join(REPO_ROOT, "dist", "src", "main.js")], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.once("close", (code) => resolve(code)));
  const started = (async () => {
    const until = Date.now() + 60_000;
    // The log line right after the banner (LOG_LEVEL info).
    while (!out.includes('"msg":"listening"') && proc.exitCode === null && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
  })();
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited,
    started,
    opsUrl: () => /operations: {2}(http:\/\/\S+)/.exec(err)?.[1],
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Polls until `check` holds (or throws after `timeoutMs`). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

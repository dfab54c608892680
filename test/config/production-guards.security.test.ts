/**
 * Production mode (RPC_URL + MAKER_KEYPAIR + REDIS_URL) refuses the settings that would run a real
 * maker unsafely by accident, each unless allowed by its own named setting: no API_KEY
 * (ALLOW_NO_API_KEY), a static price source (ALLOW_STATIC_PRICES), a keypair file readable by group
 * or others (ALLOW_READABLE_KEYPAIR; the message gives the chmod). The allowed ones are shown in the
 * start-up banner and on /ready; `npm run doctor` flags each. The real start runs `npm start`'s entry
 * point against the local chain's JSON-RPC server and the test Redis.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfig } from "../../config/load.ts";
import { startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { seedFromConfig } from "../../src/chain/local/seed.ts";
import { freePort, REPO_ROOT, stopChild } from "../../tooling/processes.ts";
import { defaultFileConfig } from "../support/config.ts";
import { npmRun } from "../support/npm-run.ts";
import { redisUrl } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("rfq-production-guards");
const API_KEY = "operator-key-0123456789";

function keyFile(name: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(Array.from(Keypair.generate().secretKey)), { mode });
  chmodSync(path, mode); // whatever the umask
  return path;
}

/** The shipped config with every pair priced from Redis (the maker's pricing engine). */
const livePricedConfig = (() => {
  const c = JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8"));
  c.priceSources = { live: { kind: "redis" } };
  for (const p of c.pairs) p.priceSource = "live";
  const path = join(dir, "live-priced.json");
  writeFileSync(path, JSON.stringify(c));
  return path;
})();

/** A production environment with nothing unsafe; each test breaks one thing. */
const safeEnv = () => ({
  RPC_URL: "http://127.0.0.1:8899",
  REDIS_URL: "redis://127.0.0.1:6379",
  MAKER_KEYPAIR: keyFile(`maker-${Math.random().toString(36).slice(2)}.json`, 0o600),
  API_KEY,
  CONFIG: livePricedConfig,
  DATABASE_URL: "postgres://rfq@127.0.0.1:5432/rfq",
});

function refusal(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("production mode started");
}

describe("production mode refuses unsafe settings unless each is allowed by name", () => {
  it("starts with none of them: API key, live prices, a 0600 keypair", () => {
    const config = loadConfig(safeEnv());
    expect(config.mode).toBe("production");
    expect(config.hazards).toEqual([]);
  });

  it("refuses no API_KEY, and starts with ALLOW_NO_API_KEY=1 (listed as allowed)", () => {
    const env = { ...safeEnv(), API_KEY: undefined };
    expect(refusal(env)).toMatch(
      /^API_KEY: unset in production mode.*\n {2}fix: set API_KEY .*or ALLOW_NO_API_KEY=1/,
    );
    const config = loadConfig({ ...env, ALLOW_NO_API_KEY: "1" });
    expect(config.hazards).toEqual([
      expect.objectContaining({ allowance: "ALLOW_NO_API_KEY", allowed: true }),
    ]);
  });

  it("refuses a static price source, naming the pairs, and starts with ALLOW_STATIC_PRICES=1", () => {
    const env = { ...safeEnv(), CONFIG: DEFAULT_CONFIG_PATH };
    const pairs = defaultFileConfig()
      .pairs.filter((p) => p.enabled)
      .map((p) => `${p.base}/${p.quote}`)
      .join(", ");
    expect(refusal(env)).toContain(`pairs ${pairs}: priced by a static source`);
    expect(refusal(env)).toMatch(/fix: price them from a "redis" or "pyth" source, or ALLOW_STATIC_PRICES=1/);
    const config = loadConfig({ ...env, ALLOW_STATIC_PRICES: "1" });
    expect(config.hazards.map((h) => [h.allowance, h.allowed])).toEqual([["ALLOW_STATIC_PRICES", true]]);
  });

  it.each([
    [0o644, "0644"],
    [0o640, "0640"],
    [0o604, "0604"],
  ])(
    "refuses a keypair file with mode %s, giving the chmod, and starts with ALLOW_READABLE_KEYPAIR=1",
    (mode, shown) => {
      const path = keyFile(`maker-${shown}.json`, mode);
      const env = { ...safeEnv(), MAKER_KEYPAIR: path };
      expect(refusal(env)).toContain(
        `MAKER_KEYPAIR: ${path} is accessible to group or others (mode ${shown})`,
      );
      expect(refusal(env)).toContain(`fix: chmod 600 ${path}, or ALLOW_READABLE_KEYPAIR=1`);
      expect(loadConfig({ ...env, ALLOW_READABLE_KEYPAIR: "1" }).hazards).toHaveLength(1);
    },
  );

  it("names every refused setting at once, and an allowance covers only its own", () => {
    const env = {
      ...safeEnv(),
      API_KEY: undefined,
      CONFIG: DEFAULT_CONFIG_PATH,
      MAKER_KEYPAIR: keyFile("maker-all.json", 0o644),
      ALLOW_NO_API_KEY: "1",
    };
    const message = refusal(env);
    expect(message).not.toMatch(/API_KEY: unset/);
    expect(message).toMatch(/priced by a static source/);
    expect(message).toMatch(/chmod 600/);
  });

  it("finding 4: refuses production with the embedded ledger (DATABASE_URL unset), and starts with ALLOW_EMBEDDED_LEDGER=1", () => {
    const env = { ...safeEnv(), DATABASE_URL: undefined };
    expect(refusal(env)).toMatch(
      /^DATABASE_URL: unset in production mode: the fill ledger would be the embedded one in data\/ledger.*\n {2}fix: set DATABASE_URL .*or ALLOW_EMBEDDED_LEDGER=1/,
    );
    expect(loadConfig({ ...env, ALLOW_EMBEDDED_LEDGER: "1" }).hazards).toEqual([
      expect.objectContaining({ allowance: "ALLOW_EMBEDDED_LEDGER", allowed: true }),
    ]);
    // No ledger at all is not the embedded one.
    expect(loadConfig({ ...env, LEDGER: "off" }).hazards).toEqual([]);
  });

  it("leaves the paper setup alone (no API key and static prices are its point)", () => {
    expect(loadConfig({}).hazards).toEqual([]);
  });
});

describe("a real production start (npm start's entry point, local chain over JSON-RPC, test Redis)", () => {
  let rpc: Awaited<ReturnType<typeof startRpcServer>>;
  let keypair: string;
  beforeAll(async () => {
    const chain = LocalChain.create();
    const maker = Keypair.generate();
    keypair = join(dir, "maker-real.json");
    writeFileSync(keypair, JSON.stringify(Array.from(maker.secretKey)));
    chmodSync(keypair, 0o644);
    seedFromConfig(chain, defaultFileConfig(), maker.publicKey);
    rpc = await startRpcServer(chain, { host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await rpc?.close();
  });

  const prodEnv = () => ({
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    RPC_URL: rpc.url,
    REDIS_URL: redisUrl(),
    MAKER_KEYPAIR: keypair,
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    DATA_DIR: dir,
    LEDGER: "off",
    // One process: this is about the guards (workers have test/faults/workers.fault.ts).
    WORKERS: "1",
  });

  it("does not start with the three unsafe settings: exit 78, each named", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: REPO_ROOT,
      env: { ...prodEnv(), PORT: "0", ADMIN_PORT: "0" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(78);
    expect(run.stderr).toMatch(/API_KEY: unset in production mode/);
    expect(run.stderr).toMatch(/priced by a static source/);
    expect(run.stderr).toContain(`chmod 600 ${keypair}`);
  });

  it("starts with each allowed, shows them in the banner and on /ready of both listeners", async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: REPO_ROOT,
      env: {
        ...prodEnv(),
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        ALLOW_NO_API_KEY: "1",
        ALLOW_STATIC_PRICES: "1",
        ALLOW_READABLE_KEYPAIR: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      out += d;
    });
    try {
      const until = Date.now() + 60_000;
      while (!out.includes("/permissioned-tokens") && Date.now() < until && child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(out).toMatch(/ALLOWED UNSAFE \(ALLOW_NO_API_KEY=1\): API_KEY: unset/);
      expect(out).toMatch(/ALLOWED UNSAFE \(ALLOW_STATIC_PRICES=1\): pairs .* static source/);
      expect(out).toMatch(/ALLOWED UNSAFE \(ALLOW_READABLE_KEYPAIR=1\): MAKER_KEYPAIR: .* \(mode 0644\)/);
      expect(out).toContain(`operations:  http://127.0.0.1:${adminPort}`);
      for (const p of [port, adminPort]) {
        const ready = await fetch(`http://127.0.0.1:${p}/ready`);
        expect(ready.status).toBe(200);
        expect(((await ready.json()) as { allowedUnsafe: string[] }).allowedUnsafe).toEqual([
          "ALLOW_NO_API_KEY",
          "ALLOW_STATIC_PRICES",
          "ALLOW_READABLE_KEYPAIR",
        ]);
      }
      // The operations listener has the metrics and the admin API; the operator's has neither.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
      const metrics = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      // npm start turns on the process metrics; the gauges read the production ports.
      expect(text).toMatch(/\nnodejs_eventloop_lag_p99_seconds /);
      expect(text).toMatch(/\nrfq_build_info\{version="0\.1\.0",/);
      expect(text).toMatch(/\nrfq_inventory_balance_units\{symbol="USDC",mint="[^"]+"\} [1-9]/);
      expect(text).toMatch(/\nrfq_price_age_seconds\{pair="SOL\/USDC",source="static"\} /);
      expect(text).toMatch(/\nrfq_paused 0/);
    } finally {
      await stopChild(child);
    }
  });

  it("npm run doctor flags each unsafe setting: FAIL when not allowed, warn when allowed", async () => {
    const refused = await npmRun("doctor", [], { ...prodEnv(), LOG_LEVEL: "silent" });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/unsafe no api key\s+FAIL\s+API_KEY: unset in production mode/);
    expect(refused.stdout).toMatch(/unsafe static prices\s+FAIL\s+pairs .*static source/);
    expect(refused.stdout).toMatch(/unsafe readable keypair\s+FAIL\s+MAKER_KEYPAIR: .*\(mode 0644\)/);
    expect(refused.stdout).toContain(`chmod 600 ${keypair}`);

    const allowed = await npmRun("doctor", [], {
      ...prodEnv(),
      LOG_LEVEL: "silent",
      ALLOW_NO_API_KEY: "1",
      ALLOW_STATIC_PRICES: "1",
      ALLOW_READABLE_KEYPAIR: "1",
    });
    expect(allowed.stdout).toMatch(/unsafe no api key\s+warn\s+.*allowed by ALLOW_NO_API_KEY=1/);
    expect(allowed.stdout).toMatch(/unsafe static prices\s+warn/);
    expect(allowed.stdout).toMatch(/unsafe readable keypair\s+warn/);
    expect(allowed.stdout).not.toMatch(/unsafe .*FAIL/);
  });
});

/**
 * `npm run rebalance -- --dry-run` as an operator runs it, in the paper setup (a freshly seeded local
 * chain, no Redis, no operator API): it prints what it would trade and why, each token's reason for
 * no trade, and that nothing was reserved, signed or sent; exit 0. A configuration with a bad target
 * stops it with the key named (exit 78).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH } from "../../config/load.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { type NpmRunResult, npmRun } from "../support/npm-run.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("rebalance-cli");

/** The environment every run here gets: its own configuration file, data folder, warnings only. */
const cliEnv = (configPath: string) => ({
  CONFIG: configPath,
  DATA_DIR: join(dir, "data"),
  LOG_LEVEL: "warn",
});

function run(args: string[], config: unknown): Promise<NpmRunResult> {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(config));
  return npmRun("rebalance", args, cliEnv(path));
}

const base = JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")) as Record<string, unknown>;
const JUP_SEEDED = 10_000_000n * 1_000_000n; // the paper setup's seed: 10,000,000 JUP
const target = (over: Record<string, unknown> = {}) => ({
  target: (JUP_SEEDED + 2_000_000_000n).toString(),
  band: "1000000000",
  maxTrade: "5000000000",
  against: "USDC",
  maxSlippageBps: 50,
  cooldownMs: 60000,
  dailyNotionalUsd: "100000",
  ...over,
});

describe("npm run rebalance", () => {
  it("--dry-run prints what it would trade and why, and that nothing changed", async () => {
    const r = await run(["--dry-run"], {
      ...base,
      rebalance: {
        targets: {
          JUP: target(),
          USDT: target({ target: "10000000000000", band: "1000000", against: "USDC" }),
        },
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^rebalance: .*maker \w+, chain local chain/m);
    expect(r.stdout).toContain(
      "JUP: would trade: JUP 10000000.000000 free is below its band 10001000.000000..10003000.000000 (target 10002000.000000): buy 2000.000000 JUP",
    );
    // 2,000 JUP at the 0.8125 mid is 1,625 USDC; at 50 bps no less than 1,990 JUP.
    expect(r.stdout).toContain("paying 1625.000000 USDC (1625.00 USD at the maker's mids)");
    expect(r.stdout).toContain("accepting no less than 1990.000000 JUP (50 bps)");
    expect(r.stdout).toContain("no OPERATOR_API_URL: not asked for a price");
    expect(r.stdout).toMatch(
      /^USDT: no trade: 10000000\.000000 free, inside 9999999\.000000\.\.10000001\.000000$/m,
    );
    expect(r.stdout).toMatch(/dry run: nothing reserved, signed or sent\.\n$/);
  }, 120_000);

  it("--loop repeats the pass every intervalMs, serves its metrics, and exits 0 on SIGTERM", async () => {
    const path = join(dir, "loop.json");
    writeFileSync(
      path,
      JSON.stringify({ ...base, rebalance: { intervalMs: 1000, targets: { JUP: target() } } }),
    );
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "src/rebalance/main.ts", "--dry-run", "--loop", "--metrics-port", "0"],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...cliEnv(path) },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
    const until = Date.now() + 90_000;
    while ((out.match(/dry run: nothing reserved/g) ?? []).length < 2 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((out.match(/JUP: would trade/g) ?? []).length).toBeGreaterThanOrEqual(2);
    const url = /metrics at (http:\/\/\S+)/.exec(out)?.[1];
    expect(url).toBeTruthy();
    const metrics = await (await fetch(url as string)).text();
    expect(metrics).toContain("# TYPE rfq_rebalances_total counter");
    expect(metrics).toContain("# TYPE rfq_rebalance_slippage_bps histogram");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 120_000);

  it("stops on a target naming an unknown token, with its key named (exit 78)", async () => {
    const r = await run(["--dry-run"], {
      ...base,
      rebalance: { targets: { JUP: target({ against: "USDX" }) } },
    });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("rebalance.targets.JUP.against: unknown token symbol USDX");
  }, 120_000);
});

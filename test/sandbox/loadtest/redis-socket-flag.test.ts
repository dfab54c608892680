/**
 * `npm run loadtest -- --redis-socket` puts the throwaway redis-server this command starts on a unix
 * socket, and only that one. Asked where it cannot apply (a cluster, a webhook the command did not
 * start, a Redis of the maker's own in REDIS_URL) it is refused by name before anything starts,
 * instead of being dropped silently and measuring TCP under a socket label. Each case runs the real
 * command (single run and --sweep); the sweep report's Redis label is pinned on `sweepSettings`.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type SweepOptions, sweepSettings } from "../../../sandbox/loadtest/sweep.ts";
import { startLoadtest } from "../../support/process.ts";

const out = mkdtempSync(join(tmpdir(), "rfq-loadtest-socket-flag-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const CASES: { name: string; args: string[]; env?: Record<string, string>; says: string }[] = [
  {
    name: "with --redis-cluster",
    args: ["--redis-cluster"],
    says: "--redis-socket: a single Redis node only, not --redis-cluster",
  },
  {
    name: "with --webhook (a webhook this command did not start)",
    args: ["--webhook", "http://127.0.0.1:9"],
    says: "--redis-socket: needs the stack this command starts (not --webhook)",
  },
  {
    name: "with REDIS_URL set (a Redis of the maker's own)",
    args: [],
    env: { REDIS_URL: "redis://127.0.0.1:9" },
    says: "--redis-socket: applies to the throwaway redis-server, and REDIS_URL is set",
  },
];

describe("loadtest --redis-socket refused where it cannot apply", () => {
  for (const mode of [[], ["--sweep"]] as const)
    for (const c of CASES)
      it(`${mode.length ? "--sweep " : ""}${c.name}: exits 1 naming the flag, nothing started or written`, {
        timeout: 60_000,
      }, async () => {
        const dir = mkdtempSync(join(out, "run-"));
        const run = startLoadtest([...mode, "--redis-socket", ...c.args, "--out", dir, "--swaps", "0"], {
          ...(c.env ? { env: c.env } : {}),
        });
        const { code } = await run.exited;
        expect(code).toBe(1);
        expect(run.stderr()).toContain(c.says);
        expect(run.stdout()).not.toContain("quote phase");
        expect(readdirSync(dir)).toEqual([]);
      });
});

describe("sweep report: the Redis it ran on", () => {
  const options = (o: Partial<SweepOptions>): SweepOptions => ({
    file: {} as SweepOptions["file"],
    outDir: out,
    rates: [1000, 2000],
    stepS: 8,
    retries: 1,
    warmupS: 3,
    startupS: 10,
    budgetMs: 250,
    workers: [1],
    instances: 1,
    redisCluster: false,
    baselines: ["http", "store"],
    maxSockets: 256,
    say: () => {},
    ...o,
  });

  it("labels a unix socket, a single node over TCP and a cluster apart", () => {
    expect(sweepSettings(options({ redisSocket: true })).redis).toBe("single node, unix socket");
    expect(sweepSettings(options({})).redis).toBe("single node");
    expect(sweepSettings(options({ redisCluster: true })).redis).toBe("3-master cluster");
  });
});

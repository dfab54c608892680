/**
 * Every command in package.json answers `--help` with its usage and exit 0, without starting anything
 * (no chain, no Redis, no listener); unknown flags are a usage error listing the known ones. The
 * commands run as an operator runs them: `npm run <script> -- --help`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatUsage, parseArgv, UsageError } from "../../src/cli/args.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { npmRun } from "../support/npm-run.ts";

const scripts = Object.keys(
  (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> })
    .scripts,
);

/** REDIS_URL as the suite has it, so nothing could start a Redis even if it tried. */
const npmRunHelp = (script: string, args: string[]) =>
  npmRun(script, args, { REDIS_URL: process.env.REDIS_URL, LOG_LEVEL: undefined });

/** Runs `task` over `items`, `limit` at a time (the machine has two cores). */
async function pool<T, R>(items: readonly T[], limit: number, task: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

describe("--help", () => {
  it("prints the usage with exit 0 for every script in package.json", async () => {
    expect(scripts.length).toBeGreaterThan(10);
    const runs = await pool(scripts, 3, async (script) => ({
      script,
      ...(await npmRunHelp(script, ["--help"])),
    }));
    for (const r of runs) {
      const what = `npm run ${r.script} -- --help\n${r.stdout}\n${r.stderr}`;
      expect(r.code, what).toBe(0);
      // `npm test` prints the Redis wrapper's usage and then vitest's own help.
      expect(r.stdout, what).toMatch(/^usage: /im);
    }
  }, 300_000);

  it("refuses an unknown flag with exit 64, naming it and listing the known flags", async () => {
    const r = await npmRunHelp("doctor", ["--fxi"]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(
      "npm run doctor: unknown flag --fxi; known flags: --fix, -y, --yes, -h, --help",
    );
    expect(r.stdout).toBe("");
  }, 90_000);
});

describe("the shared argument parser", () => {
  const usage = {
    command: "npm run thing",
    summary: "Does a thing.",
    flags: {
      rate: { type: "string", value: "N", default: "2000", description: "per second" },
      json: { type: "boolean", description: "print JSON" },
    },
  } as const;

  it("parses known flags with their defaults", () => {
    expect(parseArgv(["--json"], usage)).toEqual({ values: { rate: "2000", json: true }, positionals: [] });
    expect(parseArgv(["--rate", "5"], usage)).toEqual({
      values: { rate: "5", json: false },
      positionals: [],
    });
  });

  it("answers help for --help and -h, even beside a bad flag", () => {
    expect(parseArgv(["--help"], usage)).toBe("help");
    expect(parseArgv(["-h"], usage)).toBe("help");
    expect(parseArgv(["--bogus", "--help"], usage)).toBe("help");
  });

  it.each([
    [["--bogus"], "npm run thing: unknown flag --bogus; known flags: --rate N, --json, -h, --help"],
    [["stray"], "npm run thing: unexpected argument stray (this command takes no arguments); known flags:"],
    [["--rate"], "npm run thing: Option '--rate <value>' argument missing; known flags:"],
  ])("refuses %o naming the problem and the known flags", (argv, message) => {
    expect(() => parseArgv(argv, usage)).toThrow(UsageError);
    expect(() => parseArgv(argv, usage)).toThrow(message);
  });

  it("accepts positionals only where the usage declares them", () => {
    expect(parseArgv(["a", "b"], { ...usage, positionals: "[x] [y]" })).toMatchObject({
      positionals: ["a", "b"],
    });
  });

  it("lists every flag, its value, default and description in the usage", () => {
    expect(formatUsage(usage)).toBe(
      [
        "usage: npm run thing -- [flags]",
        "",
        "Does a thing.",
        "",
        "flags:",
        "  --rate N    per second (default 2000)",
        "  --json      print JSON",
        "  -h, --help  print this help and exit",
        "",
      ].join("\n"),
    );
  });
});

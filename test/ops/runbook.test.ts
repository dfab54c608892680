/**
 * Finding 5 of issue 47: the runbook runs. Every command docs/runbook.md gives (each inline
 * `npm run ...`, `redis-cli ...` and the admin API's `curl` block) is run, as written with its
 * placeholders filled in, against the sandbox (`npm run sandbox`'s stack: the local chain's JSON-RPC
 * server, Redis and the webhook in production shape with its admin API), from a shell given the
 * webhook's own environment, as the runbook says ("the same environment, same CONFIG"). Each must exit
 * 0; the two that run until stopped (`redis-cli --latency`, `npm run signer`) must still be running
 * after a few seconds. Only `docker ...` is not run: no Docker daemon here.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { freshDatabase } from "../ledger/support.ts";
import { fileTempDir } from "../support/tmp.ts";

const RUNBOOK = readFileSync(join(REPO_ROOT, "docs", "runbook.md"), "utf8");
const ADMIN_API_KEY = "runbook-admin-key-0123456789";

/** The runbook's commands: inline ones and the lines (continuations joined) of its sh blocks. */
function runbookCommands(text: string): string[] {
  const out = new Set<string>();
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  for (const block of blocks) {
    for (const line of block.replace(/\\\n\s*/g, "").split("\n")) {
      const l = line.trim();
      if (l && !l.startsWith("#")) out.add(l);
    }
  }
  const prose = text.replace(/```sh\n[\s\S]*?```/g, "");
  for (const m of prose.matchAll(/`((?:npm run [a-z]|redis-cli |curl |docker )[^`]*)`/g))
    out.add(m[1] as string);
  return [...out];
}

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const PLACEHOLDERS: Record<string, string> = {
  "<today>": day(0),
  "<the day before>": day(-1),
  "<start>": day(0),
  "<end>": day(0),
  "<first suspect day>": day(-1),
  "<why>": "runbook test",
};

function fill(command: string): string {
  let c = command;
  for (const [k, v] of Object.entries(PLACEHOLDERS)) c = c.replaceAll(k, v);
  if (/<[a-z ]+>/.test(c)) throw new Error(`the runbook has a placeholder this test does not know: ${c}`);
  return c;
}

/** Commands that serve until stopped (`redis-cli --latency` prints once and exits without a terminal). */
const LONG_RUNNING = [/^redis-cli .*--latency$/, /^npm run signer$/];

let stack: Stack;
let env: Record<string, string>;
const dir = fileTempDir("runbook");

beforeAll(async () => {
  // The ledger in PostgreSQL, as production keeps it (DATABASE_URL, the test server).
  stack = await startStack({
    dir,
    takers: [],
    // Its commands pause every instance and switch pairs off through Redis: a Redis of its own, so the
    // other stacks on the tests' REDIS_URL are not paused with it.
    ownRedis: true,
    webhookAdminApiKey: ADMIN_API_KEY,
    webhookEnv: { DATABASE_URL: await freshDatabase() },
  });
  const manifest = stack.webhookEnv;
  env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    ...manifest,
    LOG_LEVEL: "silent",
    ADMIN: stack.webhookAdminUrl,
    ADMIN_API_KEY,
    // `npm run signer` with the maker's key (the key-compromise section's rotation); the webhook's
    // own commands read these too and must not take them for misspellings.
    SIGNER_KEYPAIR: manifest.MAKER_KEYPAIR ?? "",
    SIGNER_SOCKET: join(dir, "runbook-signer.sock"),
    SIGNER_LIMITS: join(REPO_ROOT, "config", "signer-limits.example.json"),
  };
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

/** Runs `command` in bash; one still running after `timeoutMs` gets SIGINT (`stopped`). */
function run(
  command: string,
  timeoutMs: number,
): Promise<{ code: number | null; out: string; stopped: boolean }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", command], {
      cwd: REPO_ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    let stopped = false;
    const timer = setTimeout(() => {
      stopped = true;
      if (child.pid) process.kill(-child.pid, "SIGINT");
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, stopped });
    });
  });
}

describe("finding 5: every command in docs/runbook.md runs against the sandbox", () => {
  const commands = runbookCommands(RUNBOOK);

  it("finds the runbook's commands (report, doctor, registration, rebalance, redis-cli, the admin API)", () => {
    const kinds = new Set(commands.map((c) => c.split(" ").slice(0, 3).join(" ")));
    for (const k of ["npm run report", "npm run doctor", "npm run registration", "npm run rebalance"])
      expect(kinds).toContain(k);
    expect(commands.filter((c) => c.startsWith("curl ")).length).toBeGreaterThanOrEqual(7);
    expect(commands.filter((c) => c.startsWith("redis-cli ")).length).toBeGreaterThanOrEqual(4);
  });

  for (const command of commands) {
    const docker = command.startsWith("docker ");
    it.skipIf(docker)(`runs: ${command}`, { timeout: 120_000 }, async () => {
      const filled = fill(command);
      const long = LONG_RUNNING.some((r) => r.test(command));
      const r = await run(filled, long ? 8_000 : 110_000);
      if (long && r.stopped) expect(r.out, filled).not.toMatch(/error/i);
      else {
        expect(r.stopped, `${filled}: still running\n${r.out}`).toBe(false);
        expect(r.code, `${filled}\n${r.out}`).toBe(0);
      }
    });
  }
});

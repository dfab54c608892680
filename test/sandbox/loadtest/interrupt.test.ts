/**
 * `npm run loadtest` stopped from outside takes down the stack it started. SIGINT (Ctrl-C) always
 * did; SIGTERM (a `timeout`, CI, an orchestrator, `pkill`) left its redis-server, local chain and
 * webhook running on, orphaned, and so did a `--sweep` (SIGINT as well, sent to its pid alone). A
 * real load test, its real process tree, read from /proc.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { descendantPids } from "../../../tooling/processes.ts";
import { startLoadtest } from "../../support/process.ts";

const out = mkdtempSync(join(tmpdir(), "rfq-loadtest-term-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Alive and not a zombie (an orphan's zombie may wait for a PID 1 that never reaps it). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Starts `npm run loadtest` with `args`, waits until its output shows `ready`, reads its process tree,
 * checks that it holds a redis-server, the local chain and the webhook, sends `signal`, and returns
 * its exit code and whatever of the tree still runs (command lines).
 */
async function interrupt(
  args: string[],
  ready: string,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; left: string[]; output: string }> {
  const run = startLoadtest([...args, "--out", out]);
  const output = () => run.stdout() + run.stderr();
  await new Promise<void>((resolve, reject) => {
    const seen = () => {
      if (output().includes(ready)) resolve();
    };
    run.proc.stdout?.on("data", seen);
    run.proc.stderr?.on("data", seen);
    run.proc.once("exit", () => reject(new Error(`the load test exited before "${ready}":\n${output()}`)));
  });
  const tree = descendantPids(run.proc.pid as number);
  const names = tree.map((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch {
      return "";
    }
  });
  // What it started: a throwaway redis-server, the local chain and the webhook.
  for (const part of ["redis-server", "sandbox/chain/main.ts", "src/main"])
    expect(
      names.some((n) => n.includes(part)),
      `${part} in\n${names.join("\n")}`,
    ).toBe(true);

  run.proc.kill(signal);
  const { code } = await run.exited;
  const left = tree.filter(running).map((p) => names[tree.indexOf(p)] ?? String(p));
  return { code, left, output: output() };
}

describe("load test interrupted", () => {
  it("SIGTERM stops the redis-server, chain and webhook it started, then exits 143", {
    timeout: 180_000,
  }, async () => {
    const r = await interrupt(
      ["--rate", "20", "--duration", "120", "--swaps", "0", "--log-level", "warn"],
      "quote phase:",
      "SIGTERM",
    );
    expect(r.code, r.output).toBe(143);
    expect(r.left, r.output).toEqual([]);
  });

  it("a --sweep stopped with SIGTERM mid-step stops the target it is sweeping (redis-server, chain, webhook), then exits 143", {
    timeout: 180_000,
  }, async () => {
    // One long step at a rate any machine holds: the signal lands while the webhook is being swept.
    const r = await interrupt(
      ["--sweep", "--rates", "20", "--step-duration", "120", "--baselines", "", "--workers", "1"],
      "registered",
      "SIGTERM",
    );
    expect(r.code, r.output).toBe(143);
    expect(r.left, r.output).toEqual([]);
  });
});

/**
 * `npm run loadtest` stopped from outside takes down the stack it started. SIGINT (Ctrl-C) always
 * did; SIGTERM (a `timeout`, CI, an orchestrator, `pkill`) left its redis-server, local chain and
 * webhook running on, orphaned, and so did a `--sweep` (SIGINT as well, sent to its pid alone). A
 * real load test in a process group of its own; what it started is found by that group in /proc,
 * orphans included.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startLoadtest } from "../../support/process.ts";

const out = mkdtempSync(join(tmpdir(), "rfq-loadtest-term-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/**
 * The command lines of the live processes (zombies left out: an orphan's zombie may wait for a PID 1
 * that never reaps it) in process group `pgid`, the load test's own and everything it started, even
 * orphaned.
 */
function group(pgid: number): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state === "Z" || Number(pgrp) !== pgid) continue;
      lines.push(readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " "));
    } catch {
      // gone meanwhile
    }
  }
  return lines;
}

const STACK = ["redis-server", "sandbox/chain/main.ts", "src/main"];

/**
 * Starts `npm run loadtest` with `args` in a process group of its own, waits until its output shows
 * `ready` and its group holds every process named in `started`, sends SIGTERM, and returns its exit
 * code, whatever of its group still runs once it has exited (command lines), and its output then
 * and when the signal was sent.
 */
async function interrupt(
  args: string[],
  ready: string,
  started: string[],
): Promise<{ code: number | null; left: string[]; output: string; outputAtSignal: string }> {
  const run = startLoadtest([...args, "--out", out], { ownGroup: true });
  const pgid = run.proc.pid as number;
  const output = () => run.stdout() + run.stderr();
  let exited = false;
  void run.exited.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`the load test exited before "${ready}":\n${output()}`);
    const names = group(pgid);
    if (output().includes(ready) && started.every((part) => names.some((n) => n.includes(part)))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const outputAtSignal = output();
  process.kill(pgid, "SIGTERM");
  const { code } = await run.exited;
  // Whatever it started and did not stop runs on in its group; give a stop in flight a moment.
  await new Promise((r) => setTimeout(r, 500));
  return { code, left: group(pgid), output: output(), outputAtSignal };
}

describe("load test interrupted", () => {
  it("SIGTERM stops the redis-server, chain and webhook it started, then exits 143", {
    timeout: 180_000,
  }, async () => {
    const r = await interrupt(
      ["--rate", "20", "--duration", "120", "--swaps", "0", "--log-level", "warn"],
      "quote phase:",
      STACK,
    );
    expect(r.code, r.output).toBe(143);
    expect(r.left, r.output).toEqual([]);
  });

  // One long step at a rate any machine holds, so the signal lands while the targets are up.
  const sweep = ["--sweep", "--rates", "20", "--step-duration", "120", "--workers", "1"];

  it("a --sweep stopped with SIGTERM mid-step stops every target it is sweeping side by side (the webhook's redis-server, chain and webhook, the bare server, and the store baseline's server and redis-server), then exits 143", {
    timeout: 180_000,
  }, async () => {
    // All are up (the bare servers are started after the webhook; the store's Redis before its
    // server) before the first step.
    const r = await interrupt([...sweep, "--baselines", "http,store"], "target: bare store", [
      ...STACK,
      "sandbox/loadtest/bare.ts --kind http",
      "sandbox/loadtest/bare.ts --kind store",
    ]);
    expect(r.code, r.output).toBe(143);
    expect(r.left, r.output).toEqual([]);
  });

  it("a --sweep stopped with SIGTERM while its target is still starting waits for the start, then stops all of it and exits 143", {
    timeout: 180_000,
  }, async () => {
    // The stack starts Redis first and registers the webhook with the operator last.
    const r = await interrupt([...sweep, "--baselines", ""], "target: webhook", ["redis-server"]);
    expect(r.outputAtSignal).not.toContain("registered");
    expect(r.code, r.output).toBe(143);
    expect(r.left, r.output).toEqual([]);
  });
});

/**
 * `npm run loadtest` stopped from outside takes down the stack it started. SIGINT (Ctrl-C) always
 * did; SIGTERM (a `timeout`, CI, an orchestrator, `pkill`) left its redis-server, local chain and
 * webhook running on, orphaned. A real load test, its real process tree, read from /proc.
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

describe("load test interrupted", () => {
  it("SIGTERM stops the redis-server, chain and webhook it started, then exits 143", {
    timeout: 180_000,
  }, async () => {
    const run = startLoadtest([
      "--rate",
      "20",
      "--duration",
      "120",
      "--swaps",
      "0",
      "--log-level",
      "warn",
      "--out",
      out,
    ]);
    const output = () => run.stdout() + run.stderr();
    await new Promise<void>((resolve, reject) => {
      const seen = () => {
        if (output().includes("quote phase:")) resolve();
      };
      run.proc.stdout?.on("data", seen);
      run.proc.stderr?.on("data", seen);
      run.proc.once("exit", () =>
        reject(new Error(`the load test exited before its quote phase:\n${output()}`)),
      );
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
    expect(
      names.some((n) => n.includes("redis-server")),
      names.join("\n"),
    ).toBe(true);
    expect(
      names.some((n) => n.includes("sandbox/chain/main.ts")),
      names.join("\n"),
    ).toBe(true);
    expect(
      names.some((n) => n.includes("src/main")),
      names.join("\n"),
    ).toBe(true);

    run.proc.kill("SIGTERM");
    expect((await run.exited).code).toBe(143);
    const left = tree.filter(running);
    expect(
      left.map((p) => names[tree.indexOf(p)]),
      output(),
    ).toEqual([]);
  });
});

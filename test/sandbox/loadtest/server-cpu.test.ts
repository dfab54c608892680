/**
 * The load test's `--server-cpu` (tooling/processes.ts limitCpu): a process put in the cgroup gets no
 * more than its share of one CPU, however busy it is, and the cgroup goes away afterwards; a server
 * with node:cluster workers gets one such share per worker (limitCpuPerWorker), not one in all. Without a
 * writable cgroup CPU controller (not root, or none mounted) the test is skipped: the option itself
 * then fails naming the reason.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cpuCgroup,
  cpuSharesOf,
  limitCpu,
  limitCpuPerWorker,
  nodeDescendantPids,
  preciseCpuSecondsOf,
} from "../../../tooling/processes.ts";

const cg = cpuCgroup();

function cgroupWritable(): boolean {
  if (!cg) return false;
  const probe = `${cg.root}/rfq-probe-${process.pid}`;
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!cgroupWritable())("--server-cpu's CPU cap", () => {
  it("holds a busy loop to its share of one CPU (0.3 here, against about 1 uncapped) and removes its cgroup", async () => {
    const busy = spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" });
    try {
      const pid = busy.pid as number;
      await new Promise((r) => setTimeout(r, 200));
      const name = `rfq-test-${process.pid}`;
      const remove = limitCpu([pid], 0.3, name);
      const c0 = preciseCpuSecondsOf(pid) as number;
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 1_000));
      const share = ((preciseCpuSecondsOf(pid) as number) - c0) / ((performance.now() - t0) / 1000);
      busy.kill("SIGKILL");
      await new Promise((r) => busy.once("exit", r));
      remove();
      // The cap is a ceiling: a loaded machine may give it less, never more.
      expect(share).toBeLessThan(0.36);
      expect(share).toBeGreaterThan(0.05);
      expect(existsSync(`${cg?.root}/${name}`), "the cgroup is removed").toBe(false);
    } finally {
      busy.kill("SIGKILL");
    }
  });

  it("caps each node:cluster worker at its own share (two busy workers at 0.3: each at most 0.3, together more than one share), the primary with the first", async () => {
    // A primary that forks two workers spinning forever, as the webhook with WORKERS=2 would be busy
    // (from a file: node:cluster forks the main script, which `-e` has not).
    const dir = mkdtempSync(join(tmpdir(), "rfq-cpu-"));
    const script = join(dir, "busy-workers.cjs");
    writeFileSync(
      script,
      "const c = require('node:cluster');\n" +
        "if (c.isPrimary) { c.fork(); c.fork(); setInterval(() => {}, 1e3); } else { for (;;) {} }\n",
    );
    const primary = spawn(process.execPath, [script], { stdio: "ignore" });
    const root = primary.pid as number;
    let remove = () => {};
    try {
      let workers: number[] = [];
      for (let i = 0; i < 100 && workers.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
        workers = nodeDescendantPids(root);
      }
      expect(workers).toHaveLength(2);
      expect(cpuSharesOf(root)).toEqual([[root, workers[0]], [workers[1]]]);
      const name = `rfq-test-w-${process.pid}`;
      remove = limitCpuPerWorker([root], 0.3, name);
      const cpu = () => workers.map((w) => preciseCpuSecondsOf(w) as number);
      const c0 = cpu();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, 1_000));
      const elapsed = (performance.now() - t0) / 1000;
      const shares = cpu().map((c, k) => (c - (c0[k] as number)) / elapsed);
      for (const s of shares) expect(s).toBeLessThan(0.36);
      // One cgroup for the whole server would hold both together to 0.3.
      expect((shares[0] as number) + (shares[1] as number)).toBeGreaterThan(0.4);
      primary.kill("SIGKILL");
      for (const w of workers) {
        try {
          process.kill(w, "SIGKILL");
        } catch {}
      }
      await new Promise((r) => setTimeout(r, 100));
      remove();
      for (const k of [0, 1])
        expect(existsSync(`${cg?.root}/${name}-${root}-${k}`), `cgroup ${k} is removed`).toBe(false);
    } finally {
      primary.kill("SIGKILL");
      remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a share outside (0, 1] by name", () => {
    expect(() => limitCpu([process.pid], 1.5, "rfq-never")).toThrow(
      /--server-cpu: a share of one CPU in \(0, 1\]/,
    );
  });
});

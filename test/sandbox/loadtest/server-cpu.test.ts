/**
 * The load test's `--server-cpu` (tooling/processes.ts limitCpu): a process put in the cgroup gets no
 * more than its share of one CPU, however busy it is, and the cgroup goes away afterwards. Without a
 * writable cgroup CPU controller (not root, or none mounted) the test is skipped: the option itself
 * then fails naming the reason.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cpuCgroup, limitCpu, preciseCpuSecondsOf } from "../../../tooling/processes.ts";

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

  it("refuses a share outside (0, 1] by name", () => {
    expect(() => limitCpu([process.pid], 1.5, "rfq-never")).toThrow(
      /--server-cpu: a share of one CPU in \(0, 1\]/,
    );
  });
});

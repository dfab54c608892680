/**
 * Finding 2 of issue 47: one signal, one shutdown. Ctrl-C in a terminal sends SIGINT to the whole
 * foreground process group, npm included, and npm forwards it to node: node gets it twice within
 * milliseconds. systemd's default KillMode=control-group does the same with SIGTERM. Each of these is
 * one shutdown (exit 0, "shut down cleanly"), not a forced one. `npm start` runs in a process group of
 * its own here, and the group is signalled as a terminal or systemd signals it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

beforeAll(() => {
  execFileSync(process.execPath, [join(REPO_ROOT, "scripts", "build.mjs"), "--if-stale"], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
}, 240_000);

async function npmStart(): Promise<{ child: ChildProcess; output: () => string; port: number }> {
  const port = await freePort();
  const child = spawn("npm", ["start"], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_PORT: "0",
      DATA_DIR: fileTempDir("npm-start"),
      LEDGER: "off",
      SHUTDOWN_DRAIN_MS: "300",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, as a shell's job is
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const until = Date.now() + 60_000;
  while (!out.includes(`listening on http://127.0.0.1:${port}`)) {
    if (child.exitCode !== null || Date.now() > until) {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
      throw new Error(`npm start did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => out, port };
}

describe("finding 2: npm start and a signal to the whole process group", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} to the group (Ctrl-C / systemd) shuts down once: exit 0, "shut down cleanly", nothing forced`, {
      timeout: 90_000,
    }, async () => {
      const s = await npmStart();
      // "close", not "exit": npm's exit can be seen before the last output node wrote to the shared pipes.
      const exited = new Promise<number | null>((resolve) => s.child.on("close", (code) => resolve(code)));
      process.kill(-(s.child.pid as number), signal);
      const code = await exited;
      expect(s.output()).toContain("shut down cleanly");
      expect(s.output()).not.toMatch(/shutdown forced/);
      expect(code).toBe(0);
    });
  }
});

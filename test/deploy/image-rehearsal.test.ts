/**
 * Issue 61, finding 11: `bash scripts/image-rehearsal.sh` without tini (the image's init) failed saying
 * only `/health: 000`, after `npm ci` and a build, and left its local chain server running (it was
 * started through npx, and only npx was stopped). Run as the maker runs it, on a PATH that has
 * everything of this machine's but tini: it names tini and how to install it, at once, exits 1, and
 * leaves no process and no scratch folder behind.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

/** A PATH of one folder linking every command of this PATH but `hidden` (first one found wins). */
function pathWithout(hidden: string): string {
  const bin = join(fileTempDir("path-without"), "bin");
  mkdirSync(bin);
  const seen = new Set<string>([hidden]);
  for (const dir of (process.env.PATH ?? "").split(":")) {
    let entries: string[] = [];
    try {
      entries = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of entries) {
      if (seen.has(name)) continue;
      seen.add(name);
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  return bin;
}

/** Processes whose command line names the rehearsal's scratch folders. */
function rehearsalProcesses(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmd.includes("/tmp/image-rehearsal-")) found.push(`${pid} ${cmd}`);
    } catch {
      // gone
    }
  }
  return found;
}

const scratchFolders = () => readdirSync("/tmp").filter((f) => f.startsWith("image-rehearsal-"));

describe("finding 11: the image rehearsal without tini", () => {
  it("names tini and its install before starting anything, exits 1, and leaves no process or scratch folder", {
    timeout: 60_000,
  }, () => {
    const before = new Set(scratchFolders());
    const r = spawnSync("bash", [join(REPO_ROOT, "scripts", "image-rehearsal.sh")], {
      cwd: REPO_ROOT,
      env: { ...process.env, PATH: pathWithout("tini") },
      encoding: "utf8",
      timeout: 50_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, out).toBe(1);
    expect(out).toMatch(/FAIL: not found: tini \(the image's runtime stage runs node under tini/);
    expect(out).toContain("apt-get install -y tini");
    expect(out).not.toContain("/health: 000");
    // Nothing was built or installed: it stopped before the build stage.
    expect(out).not.toContain("== build stage");
    expect(rehearsalProcesses()).toEqual([]);
    expect(scratchFolders().filter((f) => !before.has(f))).toEqual([]);
  });
});

/**
 * Issue 61, finding 11: `npm start -- --help` compiled the whole service first (45 s on a busy machine)
 * when a source was newer than the last build. Through npm, as the maker types it, in a scratch copy of
 * the checkout whose build is stale (every source newer than its stamp): the usage is printed and
 * nothing is built. And without any build (a fresh clone), the usage comes from the sources.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, statSync, symlinkSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureBuilt, REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

/** A copy of the checkout: package.json and scripts/ copied, sources and node_modules linked, dist/ copied. */
function scratchCheckout(withBuild: boolean): string {
  const dir = join(fileTempDir("start-help"), "repo");
  mkdirSync(dir);
  cpSync(join(REPO_ROOT, "package.json"), join(dir, "package.json"));
  cpSync(join(REPO_ROOT, "scripts"), join(dir, "scripts"), { recursive: true });
  for (const p of [
    "src",
    "config",
    "pricing",
    "inventory",
    "amounts",
    "node_modules",
    "tsconfig.json",
    "tsconfig.build.json",
    "package-lock.json",
  ])
    symlinkSync(join(REPO_ROOT, p), join(dir, p));
  if (withBuild) {
    ensureBuilt();
    cpSync(join(REPO_ROOT, "dist"), join(dir, "dist"), { recursive: true });
    // Older than every source: `--if-stale` would compile.
    const old = new Date("2001-01-01T00:00:00Z");
    utimesSync(join(dir, "dist", ".build-stamp"), old, old);
  }
  return dir;
}

function npmStartHelp(cwd: string) {
  const r = spawnSync("npm", ["start", "--silent", "--", "--help"], {
    cwd,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("finding 11: npm start -- --help answers without building", () => {
  it("with a stale build: prints the usage, compiles nothing (the build's stamp and files untouched)", {
    timeout: 240_000,
  }, () => {
    const dir = scratchCheckout(true);
    const stamp = join(dir, "dist", ".build-stamp");
    const before = statSync(stamp).mtimeMs;
    const r = npmStartHelp(dir);
    expect(r.out).toMatch(/^usage: npm start/m);
    expect(r.out).not.toMatch(/^build: /m);
    expect(r.code).toBe(0);
    expect(statSync(stamp).mtimeMs).toBe(before);
  });

  it("with no build at all (a fresh clone): prints the usage from the sources, still without building", {
    timeout: 120_000,
  }, () => {
    const dir = scratchCheckout(false);
    const r = npmStartHelp(dir);
    expect(r.out).toMatch(/^usage: npm start/m);
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, "dist"))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});

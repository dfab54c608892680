/**
 * The embedded ledger's folder: created by a child process, opened by this one (src/ledger/pglite.ts).
 *
 * Resident memory is read in child processes of their own (a vitest worker holds other tests' memory),
 * each running the source under tsx and printing its resident memory (the load test's
 * `residentMemoryOf`) once the ledger is open.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PgliteSqlClient } from "../../src/ledger/pglite.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";

const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), "rfq-pglite-"));
  dirs.push(d);
  return join(d, "ledger");
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs `open` (an expression giving a promise of something with `query`) in a child; its VmRSS in MiB. */
function residentAfter(open: string, dir: string): number {
  const script = `
    import { PGlite } from "@electric-sql/pglite";
    import { PgliteSqlClient } from ${JSON.stringify(join(REPO_ROOT, "src/ledger/pglite.ts"))};
    import { residentMemoryOf } from ${JSON.stringify(join(REPO_ROOT, "tooling/processes.ts"))};
    const dir = process.argv[1];
    const db = await ${open};
    await db.query("select 1");
    console.log("rss " + Math.round(residentMemoryOf(process.pid).rssBytes / 2 ** 20));
    await db.close();
  `;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, dir], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  const m = r.stdout.match(/^rss (\d+)$/m);
  expect(m, r.stdout).not.toBeNull();
  return Number((m as RegExpMatchArray)[1]);
}

describe("the embedded ledger's folder (PGlite)", () => {
  it("a new folder is created by a child process, so the process that opens it does not keep initdb's memory", () => {
    // Resident memory moves by tens of MiB between runs on a busy machine: the least of two runs each.
    const least = (open: string) =>
      Math.min(residentAfter(open, freshDir()), residentAfter(open, freshDir()));
    const ours = least("PgliteSqlClient.open(dir)");
    // The control shows the check can fail: PGlite creating the folder in the process itself.
    const inProcess = least("PGlite.create(dir)");
    expect(inProcess).toBeGreaterThan(ours + 100);
    expect(ours).toBeLessThan(500);
  }, 120_000);

  it("a folder created by the child holds a working database, opened again later with its data", async () => {
    const dir = freshDir();
    const first = await PgliteSqlClient.open(dir);
    expect(existsSync(join(dir, "PG_VERSION"))).toBe(true);
    await first.exec("create table t (n integer)");
    await first.query("insert into t values ($1)", [7]);
    await first.close();
    expect(existsSync(`${dir}.pid`)).toBe(false);

    const again = await PgliteSqlClient.open(dir);
    expect(await again.query<{ n: number }>("select n from t")).toEqual([{ n: 7 }]);
    await again.close();
  }, 60_000);

  it("a creation that fails names the folder and the child's error, and leaves no pid file", async () => {
    const dir = freshDir();
    // A file where PostgreSQL makes a directory: the child's initdb fails.
    mkdirSync(dir);
    writeFileSync(join(dir, "global"), "not a directory\n");
    await expect(PgliteSqlClient.open(dir)).rejects.toThrow(
      new RegExp(`creating the embedded ledger in ${dir} failed \\(exit 1\\): \\S`),
    );
    expect(existsSync(`${dir}.pid`)).toBe(false);
  }, 60_000);
});

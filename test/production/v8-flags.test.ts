/**
 * The webhook runs with V8's allocation-site pretenuring off (src/v8-flags.ts, imported first by
 * src/main.ts). Pinned by what V8 reports, in a child process: with `--trace-pretenuring-statistics`
 * V8 prints a "pretenuring:" line for each allocation site it judges at a young collection; with the
 * settings imported it judges none.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

// Objects from one site, half of them kept a while: the survivors pretenuring learns from.
const LOOP = `
const keep = [];
const make = (i) => ({ a: i, b: [i, i + 1], c: { d: "x" + i } });
for (let r = 0; r < 40; r++) {
  for (let i = 0; i < 100000; i++) keep.push(make(i));
  if (keep.length > 400000) keep.splice(0, 200000);
}
`;

function pretenuringLines(imports: string[]): number {
  const r = spawnSync(
    process.execPath,
    [
      "--trace-pretenuring-statistics",
      ...imports.flatMap((m) => ["--import", m]),
      "--input-type=module",
      "-e",
      LOOP,
    ],
    { encoding: "utf8" },
  );
  expect(r.status, r.stderr).toBe(0);
  return (r.stdout.match(/pretenuring:/g) ?? []).length;
}

describe("the webhook's V8 settings", () => {
  it("turns allocation-site pretenuring off: V8 judges no allocation site, where by default it judges several", {
    timeout: 60_000,
  }, () => {
    expect(pretenuringLines([])).toBeGreaterThan(0);
    expect(pretenuringLines([join(ROOT, "src/v8-flags.ts")])).toBe(0);
  });

  it("sets them before anything else: src/main.ts imports src/v8-flags.ts first", () => {
    const main = readFileSync(join(ROOT, "src/main.ts"), "utf8");
    expect(main.match(/^import .*$/m)?.[0]).toBe('import "./v8-flags.ts";');
  });
});

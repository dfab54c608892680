/**
 * The webhook runs with V8's allocation-site pretenuring off (src/v8-flags.ts, imported first by
 * src/main.ts). Pinned by what the flag does, in a child process: objects that outlive a young
 * collection stay young-allocated, so the same loop needs several times the young collections it needs
 * with pretenuring on, where V8 moves their allocation site to the old generation.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

// Objects from one site, half of them kept for a while: the pattern pretenuring feeds on.
const LOOP = `
import { PerformanceObserver, constants } from "node:perf_hooks";
let minor = 0;
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++; }).observe({ entryTypes: ["gc"] });
const keep = [];
const make = (i) => ({ a: i, b: [i, i + 1], c: { d: "x" + i } });
for (let r = 0; r < 60; r++) {
  for (let i = 0; i < 100000; i++) keep.push(make(i));
  if (keep.length > 400000) keep.splice(0, 200000);
}
setTimeout(() => console.log(minor), 50);
`;

function youngCollections(imports: string[]): number {
  const r = spawnSync(
    process.execPath,
    [...imports.flatMap((m) => ["--import", m]), "--input-type=module", "-e", LOOP],
    {
      encoding: "utf8",
    },
  );
  expect(r.status, r.stderr).toBe(0);
  return Number(r.stdout.trim());
}

describe("the webhook's V8 settings", () => {
  it("turns allocation-site pretenuring off: a loop keeping half its objects a while takes several times the young collections", {
    timeout: 60_000,
  }, () => {
    const on = youngCollections([]);
    const off = youngCollections([join(ROOT, "src/v8-flags.ts")]);
    expect(on).toBeGreaterThan(0);
    expect(off).toBeGreaterThan(on * 2);
  });

  it("sets them before anything else: src/main.ts imports src/v8-flags.ts first", () => {
    const main = readFileSync(join(ROOT, "src/main.ts"), "utf8");
    expect(main.match(/^import .*$/m)?.[0]).toBe('import "./v8-flags.ts";');
  });
});

/**
 * src/http/tick-shape.ts: with one tick object held, `process.nextTick`'s literal keeps monomorphic
 * define sites across full collections. Without it, on this Node, they turn megamorphic, and every
 * tick defines its properties in V8's runtime.
 *
 * Each case runs in a child Node process with `--expose-gc` (full collections on demand) and
 * `--allow-natives-syntax`. `%DebugPrint(process.nextTick)` prints its feedback, one line per slot
 * with the slot's state. The child sends ticks, lets none stay alive, and collects, eight times.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { pinTickObjectShape } from "../../src/http/tick-shape.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";

const dir = mkdtempSync(join(tmpdir(), "tick-shape-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CHILD = `
import { pinTickObjectShape } from ${JSON.stringify(join(REPO_ROOT, "src/http/tick-shape.ts"))};
if (process.argv[2] === "pin") {
  if (!pinTickObjectShape()) throw new Error("no tick object captured");
}
const burst = () => new Promise((resolve) => {
  let left = 2000;
  const cb = () => { if (--left === 0) resolve(); };
  for (let i = 0; i < 2000; i++) process.nextTick(cb);
});
for (let round = 0; round < 8; round++) {
  await burst();
  await new Promise((r) => setImmediate(r)); // no tick object alive now
  globalThis.gc();
}
await burst();
eval("%DebugPrint(process.nextTick)");
`;

/** The states of nextTick's DefineKeyedOwnPropertyInLiteral slots after the child's collections. */
function literalSiteStates(mode: "pin" | "plain"): string[] {
  const file = join(dir, "child.mts");
  const out = join(dir, `debug-print-${mode}.txt`);
  writeFileSync(file, CHILD);
  // V8 prints through C's stdio: into a pipe it can lose the end of the output at exit, into a file not.
  const fd = openSync(out, "w");
  try {
    const r = spawnSync(
      process.execPath,
      ["--expose-gc", "--allow-natives-syntax", "--import", "tsx", file, mode],
      { cwd: REPO_ROOT, encoding: "utf8", timeout: 60_000, stdio: ["ignore", fd, "pipe"] },
    );
    if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr.slice(-800)}`);
  } finally {
    closeSync(fd);
  }
  const printed = readFileSync(out, "utf8");
  return [...printed.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] as string);
}

describe("tick object shape", () => {
  it("captures a tick object through a hook enabled for one nextTick only", () => {
    expect(pinTickObjectShape()).toBe(true);
    // Idempotent: the second call keeps the first object and enables no hook.
    expect(pinTickObjectShape()).toBe(true);
  });

  it("with a tick object held, nextTick's literal keeps monomorphic define sites across full collections", () => {
    const states = literalSiteStates("pin");
    expect(states.length).toBeGreaterThanOrEqual(3);
    expect(states.every((s) => s === "MONOMORPHIC")).toBe(true);
  }, 60_000);

  it("without one, the same collections turn them megamorphic (why the webhook holds one)", () => {
    const states = literalSiteStates("plain");
    expect(states).toContain("MEGAMORPHIC");
  }, 60_000);
});

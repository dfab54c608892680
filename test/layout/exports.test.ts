/**
 * The export check `npm run check` runs (scripts/check-exports.ts): a value src/ exports that no other
 * file uses fails it, and so does one only tests use unless TEST_ONLY gives the reason; uses through a
 * namespace import, a dynamic import, a re-export and `export *` count; types are not counted. Shown on
 * planted files; the repository itself passes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exportProblems, exportUses } from "../../scripts/check-exports.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "exports-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("export check", () => {
  it("refuses a value exported and used by no other file, even when its own file uses it", () => {
    const root = repo({
      "src/a.ts":
        "export const used = 1;\nexport function lonely() { return used; }\nexport const x = lonely();\n",
      "src/b.ts": 'import { used, x } from "./a.ts";\nexport const y = used + x;\n',
      "scripts/c.ts": 'import { y } from "../src/b.ts";\nconsole.log(y);\n',
    });
    expect(exportProblems(root, {})).toEqual(["src/a.ts:2: lonely is exported and used by no other file"]);
  });

  it("does not count types, and counts a value used only in a type position (import type) as used", () => {
    const root = repo({
      "src/a.ts": "export interface Shape { n: number }\nexport type Id = string;\nexport class Box {}\n",
      "src/b.ts": 'import type { Box } from "./a.ts";\nexport const f = (b: Box) => b;\n',
      "bench/c.ts": 'import { f } from "../src/b.ts";\nf({});\n',
    });
    expect(exportProblems(root, {})).toEqual([]);
  });

  it("refuses a value only tests use unless TEST_ONLY lists it, and a TEST_ONLY entry that no longer holds", () => {
    const root = repo({
      "src/a.ts": "export const forTests = 1;\nexport const shipped = 2;\n",
      "src/b.ts": 'import { shipped } from "./a.ts";\nexport default shipped;\n',
      "test/a.test.ts":
        'import b from "../src/b.ts";\nimport { forTests, shipped } from "../src/a.ts";\nb; forTests; shipped;\n',
    });
    expect(exportProblems(root, {})).toEqual([
      "src/a.ts:1: forTests is used only by tests (test/a.test.ts); list it in TEST_ONLY with why",
      "src/b.ts:2: default is used only by tests (test/a.test.ts); list it in TEST_ONLY with why",
    ]);
    const listed = { "src/a.ts:forTests": "why", "src/b.ts:default": "why" };
    expect(exportProblems(root, listed)).toEqual([]);
    expect(exportProblems(root, { ...listed, "src/a.ts:shipped": "why", "src/a.ts:gone": "why" })).toEqual([
      "TEST_ONLY: src/a.ts:shipped is used outside test/; drop the entry",
      "TEST_ONLY: src/a.ts:gone is no exported value of src/; drop the entry",
    ]);
  });

  it("counts the members read from a namespace import and a dynamic import, not the others", () => {
    const root = repo({
      "src/rules.ts": "export const one = 1;\nexport const two = 2;\nexport const three = 3;\n",
      "src/use.ts":
        'import * as rules from "./rules.ts";\nexport const n = rules.one;\n' +
        'export async function m() { return (await import("./rules.ts")).two; }\n',
      "sandbox/s.ts": 'import { m, n } from "../src/use.ts";\nm(); n;\n',
    });
    expect(exportProblems(root, {})).toEqual(["src/rules.ts:3: three is exported and used by no other file"]);
  });

  it("follows a name imported through `export *` and a named re-export to the file that declares it", () => {
    const root = repo({
      "src/deep.ts": "export const viaStar = 1;\nexport const viaName = 2;\nexport const neither = 3;\n",
      "src/barrel.ts": 'export * from "./deep.ts";\nexport { viaName as renamed } from "./deep.ts";\n',
      "scripts/s.ts": 'import { renamed, viaStar } from "../src/barrel.ts";\nrenamed; viaStar;\n',
    });
    expect(exportUses(root).map((u) => [u.name, u.by])).toEqual([
      ["renamed", ["scripts/s.ts"]],
      ["viaStar", ["scripts/s.ts"]],
      ["viaName", ["src/barrel.ts"]],
      ["neither", []],
    ]);
  });

  it("finds nothing to refuse in this repository", () => {
    expect(exportProblems()).toEqual([]);
  });
});

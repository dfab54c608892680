/**
 * The function-size check `npm run check` runs (scripts/check-function-size.ts): a function under src/
 * longer than MAX_FUNCTION_LINES fails it, whatever its shape (declaration, method, arrow), shown on
 * planted files; the repository itself passes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { functionSpans, longFunctions, MAX_FUNCTION_LINES } from "../../scripts/check-function-size.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "fnsize-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A body of `n` statement lines. */
const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");

describe("function-size check", () => {
  it("refuses a function one line over the bound and names it with its line and length", () => {
    // The opening and closing lines count: a body of MAX - 1 statements spans MAX + 1 lines.
    const root = repo({
      "src/long.ts": `// a file\nexport function long() {\n${body(MAX_FUNCTION_LINES - 1)}\n}\n`,
    });
    expect(longFunctions(root)).toEqual([
      { file: "src/long.ts", name: "long", line: 2, lines: MAX_FUNCTION_LINES + 1 },
    ]);
  });

  it("accepts a function exactly at the bound", () => {
    const root = repo({ "src/ok.ts": `export function ok() {\n${body(MAX_FUNCTION_LINES - 2)}\n}\n` });
    expect(longFunctions(root)).toEqual([]);
  });

  it("refuses a long method and a long arrow, named by their class and variable", () => {
    const root = repo({
      "src/c.ts": `export class Chain {\n  prepare() {\n${body(MAX_FUNCTION_LINES)}\n  }\n}\n`,
      "src/a.ts": `export const run = async () => {\n${body(MAX_FUNCTION_LINES)}\n};\n`,
    });
    expect(
      longFunctions(root)
        .map((s) => s.name)
        .sort(),
    ).toEqual(["Chain.prepare", "run"]);
  });

  it("counts a nested function's lines in its holder as well as on its own", () => {
    const text = `function outer() {\n  const inner = () => {\n${body(10)}\n  };\n  return inner;\n}\n`;
    expect(functionSpans("x.ts", text).map((s) => [s.name, s.lines])).toEqual([
      ["outer", 15],
      ["inner", 12],
    ]);
  });

  it("reads only src/: a long function in test/ or scripts/ is not its business", () => {
    const long = `export function long() {\n${body(MAX_FUNCTION_LINES + 5)}\n}\n`;
    expect(longFunctions(repo({ "test/t.ts": long, "scripts/s.ts": long }))).toEqual([]);
  });

  it("finds no function over the bound in this repository", () => {
    expect(longFunctions().map((s) => `${s.file}:${s.line} ${s.name} (${s.lines})`)).toEqual([]);
  });
});

/**
 * The path check `npm run check` runs (scripts/check-paths.ts): a path named in a document or a
 * comment that is not in the repository fails it, shown on planted files; the repository itself passes.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { headingAnchors, type PathCheck, pathProblems, problemsIn } from "../../scripts/check-paths.ts";
import { REPO_ROOT } from "../../scripts/import-graph.ts";

const files = new Set([
  "src/main.ts",
  "src/swap/executor.ts",
  "docs/contract.md",
  "docs/operations.md",
  "README.md",
]);
const check: PathCheck = {
  exists: (p) => {
    const path = p.replace(/\/$/, "");
    return files.has(path) || [...files].some((f) => f.startsWith(`${path}/`));
  },
  anchors: (p) => headingAnchors(p === "docs/operations.md" ? "# Operations\n\n## The kill switch\n" : ""),
  tops: ["src", "docs", "test"],
};

describe("path check", () => {
  it("refuses a file a comment names that is not in the repository", () => {
    const code =
      "/** Both adapters pass test/quote-store.contract.ts (see src/swap/executor.ts). */\nexport {};\n";
    expect(problemsIn("src/quote-store/interface.ts", code, check)).toEqual([
      "src/quote-store/interface.ts: test/quote-store.contract.ts: named, but not in the repository",
    ]);
  });

  it("reads comments only: a path in a string, a template or a regular expression is not a comment's", () => {
    const code = [
      'const re = /^\\d+$/; const s = "src/nowhere.ts";',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the planted source holds a template
      "const t = `${`${re}`} // src/nowhere.ts`; const half = t.length / 2; // src/main.ts",
      "function f(x: string) { return /\\/\\/ src\\/gone.ts/.test(x) || half; }",
      "// the layout: src/swap/executor.ts, and src/gone/ is not a folder",
      "export { re, s, f };",
    ].join("\n");
    expect(problemsIn("src/a.ts", code, check)).toEqual([
      "src/a.ts: src/gone/: named, but not in the repository",
    ]);
  });

  it("resolves a Markdown link from the document's folder, and refuses one that leaves the repository", () => {
    const md = [
      "See [the contract](contract.md), [ops](operations.md#the-kill-switch) and [main](../src/main.ts).",
      "Not [this](docs/contract.md), read from the document's own folder, nor [that](../../notes.md).",
    ].join("\n");
    expect(problemsIn("docs/architecture.md", md, check)).toEqual([
      "docs/architecture.md: docs/contract.md: linked, but not in the repository",
      "docs/architecture.md: ../../notes.md: links outside the repository",
    ]);
  });

  it("refuses a link whose anchor is no heading of the linked document, its own included", () => {
    const md =
      "# Door\n\n[pause](docs/operations.md#the-kill-switch), [alerts](docs/operations.md#alerts), [up](#door), [x](#x)";
    expect(problemsIn("README.md", md, check)).toEqual([
      "README.md: docs/operations.md#alerts: no heading of docs/operations.md has the anchor #alerts",
      "README.md: #x: no heading of README.md has the anchor #x",
    ]);
  });

  it("spells a heading's anchor as GitHub does: lower case, punctuation dropped, spaces as hyphens, repeats numbered", () => {
    expect([
      ...headingAnchors("# GET /tokens and GET /permissioned-tokens\n## Two commands\n## Two commands\n"),
    ]).toEqual(["get-tokens-and-get-permissioned-tokens", "two-commands", "two-commands-1"]);
  });

  it("reads a backticked path in a document from the repository root", () => {
    expect(
      problemsIn("docs/operations.md", "`src/main.ts` and `test/monitoring/runbook.test.ts`", check),
    ).toEqual(["docs/operations.md: test/monitoring/runbook.test.ts: named, but not in the repository"]);
  });

  it("does not check the run-time folders (data/, dist/, results/) or names outside the top-level folders", () => {
    const tops = { ...check, tops: [...check.tops, "data", "dist", "results"] };
    const md = "`data/sandbox/stack.json`, `dist/src/main.js`, `results/sweep.html`, `tests/suites/a.ts`";
    expect(problemsIn("README.md", md, tops)).toEqual([]);
  });

  it("refuses a citation of the house style, which is no document of the repository", () => {
    const code = "/** One error type with a code (house style 3, 7, 8). */\nexport {};\n";
    expect(problemsIn("src/errors/index.ts", code, check)).toEqual([
      'src/errors/index.ts: "house style 3": cites the house style, which is no document of this repository',
    ]);
  });

  describe("on a repository with a planted bad path", () => {
    const root = mkdtempSync(join(tmpdir(), "paths-"));
    const plant = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    plant("README.md", "Start with [the docs](docs/guide.md) and `src/app.ts`.\n");
    plant("docs/guide.md", "The entry point is `src/main.ts`.\n");
    plant("src/app.ts", "/** Composed in src/compose.ts. */\nexport const app = 1;\n");
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("lists the planted path, and the check's command exits 1 naming it", () => {
      expect(pathProblems(root)).toEqual([
        "docs/guide.md: src/main.ts: named, but not in the repository",
        "src/app.ts: src/compose.ts: named, but not in the repository",
      ]);
      const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/check-paths.ts", "--root", root], {
        cwd: REPO_ROOT,
        encoding: "utf8",
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("src/app.ts: src/compose.ts: named, but not in the repository");
    });
  });

  it("passes on this repository: every path its documents and comments name exists", () => {
    expect(pathProblems()).toEqual([]);
  });
});

/**
 * The repository's import graph, for the layout checks in `npm run check` (check-layers.ts,
 * check-orphans.ts). Imports are read with TypeScript's own pre-processor (static imports, `export ...
 * from`, dynamic `import("...")` with a literal), so comments and strings never count as imports.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Top-level folders and what each may import (besides itself and npm packages). The folders that ship
 * come first; `amounts/` is the bottom layer, shared by `pricing/` and `inventory/`, which never import
 * each other; nothing that ships imports `sandbox/`, `tooling/`, `test/`, `bench/` or `scripts/`.
 */
export const LAYERS: Record<string, readonly string[] | "any"> = {
  amounts: [],
  config: ["amounts"],
  pricing: ["amounts", "config"],
  inventory: ["amounts", "config"],
  src: ["amounts", "config", "pricing", "inventory"],
  tooling: [],
  sandbox: ["amounts", "config", "pricing", "inventory", "src", "tooling"],
  test: "any",
  bench: "any",
  scripts: "any",
};

/**
 * Layers inside `src/`, bottom first: a folder may import its own layer and the layers below it, never
 * one above (docs/architecture.md). Files directly in `src/` (the composition, `main.ts`) are the edge.
 */
export const SRC_LAYERS: readonly (readonly [layer: string, folders: readonly string[]])[] = [
  ["lib", ["lib", "refusal", "crypto", "errors", "cli", "observability", "contract"]],
  [
    "infrastructure",
    ["redis", "chain", "program", "quote-store", "journal", "ledger", "operator-api", "signing", "health"],
  ],
  ["domain", ["fill", "issuance", "toxicity", "quote", "policy"]],
  ["services", ["swap", "signer", "rebalance", "rfq-v2", "wiring", "ops", "acceptance"]],
  ["edge", ["http", "routes", ""]],
];

/** The folder under `src/` of a repository-relative path ("" for a file directly in `src/`). */
export function srcFolderOf(path: string): string | undefined {
  if (!path.startsWith("src/")) return undefined;
  const rest = path.slice(4);
  const i = rest.indexOf("/");
  return i < 0 ? "" : rest.slice(0, i);
}

/** The folders whose code ships (the Docker image copies these). */
export const PRODUCTION = ["amounts", "config", "pricing", "inventory", "src"] as const;

/** Repository-relative path ("src/app.ts") -> the repository-relative files it imports. */
export type ImportGraph = Map<string, string[]>;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith(".d.ts")) out.push(p);
  }
}

/** Posix-style path relative to the repository root. */
export function rel(p: string): string {
  return relative(REPO_ROOT, p).split(sep).join("/");
}

function resolveSpecifier(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Every TypeScript file under the layer folders, with the repository files it imports. */
export function buildImportGraph(): { graph: ImportGraph; unresolved: string[] } {
  const files: string[] = [];
  for (const top of Object.keys(LAYERS)) {
    const dir = join(REPO_ROOT, top);
    if (existsSync(dir)) walk(dir, files);
  }
  const graph: ImportGraph = new Map();
  const unresolved: string[] = [];
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith(".")) continue; // an npm package or a node: builtin
      const target = resolveSpecifier(file, fileName);
      if (target) targets.push(rel(target));
      else unresolved.push(`${rel(file)}: cannot resolve "${fileName}"`);
    }
    graph.set(rel(file), targets);
  }
  return { graph, unresolved };
}

/** The top-level folder of a repository-relative path ("" for a file at the root). */
export function topOf(path: string): string {
  const i = path.indexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/**
 * `npm run check` (function size): no function under src/ may span more than MAX_FUNCTION_LINES
 * lines. Every function declaration, method, accessor, constructor, function expression and arrow
 * function counts, from its first line (the name or the parameters) to its last, nested functions
 * included in the one that holds them; a long function reads as its steps, each a named function.
 * Prints each function over the bound and exits 1.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { parseArgs } from "../src/cli/args.ts";
import { listFiles } from "./check-paths.ts";
import { REPO_ROOT } from "./import-graph.ts";

export const MAX_FUNCTION_LINES = 120;

export interface FunctionSpan {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** The name a reader finds a function by: its own, its variable's, its property's, or its class's. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  const own =
    node.name && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : "";
  const cls = node.parent && ts.isClassLike(node.parent) ? node.parent.name?.text : undefined;
  if (ts.isConstructorDeclaration(node)) return `${cls ?? "(class)"}.constructor`;
  if (own) return cls ? `${cls}.${own}` : own;
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    if (ts.isIdentifier(p.name) || ts.isPrivateIdentifier(p.name)) return p.name.text;
  return "(anonymous)";
}

/** Every function in one file with the lines it spans. */
export function functionSpans(file: string, text: string): FunctionSpan[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
      out.push({ file, name: nameOf(fn), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Every function under `root`/src/ longer than `max` lines, longest first. */
export function longFunctions(root: string = REPO_ROOT, max: number = MAX_FUNCTION_LINES): FunctionSpan[] {
  const files = listFiles(root).filter((f) => f.startsWith("src/") && /\.(ts|mts|cts)$/.test(f));
  return files
    .flatMap((f) => functionSpans(f, readFileSync(join(root, f), "utf8")))
    .filter((s) => s.lines > max)
    .sort((a, b) => b.lines - a.lines);
}

const USAGE = {
  command: "tsx scripts/check-function-size.ts",
  summary:
    `Checks that no function under src/ spans more than ${MAX_FUNCTION_LINES} lines (declarations, methods,\n` +
    "arrows and function expressions, nested ones counted in their holder). Exit 1 on any.",
  flags: {
    root: { type: "string", description: "the repository to check (default: this one)" },
  },
} as const;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const long = longFunctions(resolve(values.root ?? REPO_ROOT));
  if (long.length) {
    console.error(
      `function size: ${long.length} function(s) over ${MAX_FUNCTION_LINES} lines\n` +
        long.map((s) => `  ${s.file}:${s.line} ${s.name}: ${s.lines} lines`).join("\n"),
    );
    // exitCode, not exit(): a long report to a pipe is written out before the process ends.
    process.exitCode = 1;
  } else console.log(`function size: every function under src/ is at most ${MAX_FUNCTION_LINES} lines`);
}

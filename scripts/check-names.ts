/**
 * `npm run check` (names): every function, method or other code name a comment cites must exist, as
 * check-paths.ts does for paths. A cited name is a backticked token in a code file's comment that reads
 * as code: dotted (`Cluster.nodes`), called (`decide()`), or camelCase (`corkForTurn`); each of
 * its parts must be a name the repository's code declares or uses somewhere (an identifier or a string
 * key). A name cited right after a path (`src/quote-store/redis.ts` `corkForTurn`) must be in that
 * file. Names of other software that no code here uses are listed in FOREIGN_NAMES with the reason.
 * Prints each problem and exits 1.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { parseArgs } from "../src/cli/args.ts";
import { commentsOf, listFiles } from "./check-paths.ts";
import { REPO_ROOT } from "./import-graph.ts";

/** Names that comments cite from software whose code is not in this repository. */
export const FOREIGN_NAMES: Record<string, string> = {
  WrapOptions: "the operator toolkit's squads-sdk (Rust) wrap options",
  SquadsWrapConfig: "the operator toolkit's squads-sdk (Rust) wrap configuration",
  CreateAccount: "a System program instruction the chain emulation mirrors",
  CreateAccountWithSeed: "a System program instruction the chain emulation mirrors",
  InitializeImmutableOwner: "an SPL Token instruction the chain emulation mirrors",
  InitializeAccount3: "an SPL Token instruction the chain emulation mirrors",
  TransferChecked: "an SPL Token instruction the chain emulation mirrors",
  SyncNative: "an SPL Token instruction the chain emulation mirrors",
  TransactionError: "the SVM's transaction error type",
  increase: "PromQL's increase()",
  hasAssertions: "vitest's expect.hasAssertions()",
  SetComputeUnitLimit: "a ComputeBudget program instruction",
  SetComputeUnitPrice: "a ComputeBudget program instruction",
  CreateIdempotent: "an Associated Token program instruction",
  executeTransactionSyncV2: "the Squads smart-account program's instruction",
  compile: "@solana/web3.js' MessageV0.compile",
  MatchesOrParentMatches: "moby/patternmatcher (Go), which test/deploy/dockerignore.ts stands in for",
  ReadAll: "moby/patternmatcher's ignorefile.ReadAll (Go)",
  filepath: "Go's path/filepath package",
  Clean: "Go's filepath.Clean",
};

const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Every identifier and string key in a code file. */
export function namesIn(file: string, text: string): Set<string> {
  const out = new Set<string>();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) out.add(node.text.replace(/^#/, ""));
    else if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** A backticked token that reads as code, with the path cited just before it (if any). */
export function citedNames(comments: string): { name: string; parts: string[]; path?: string }[] {
  const out: { name: string; parts: string[]; path?: string }[] = [];
  const cite =
    /(?:((?:[\w.-]+\/)+[\w.-]+\.(?:ts|mts|js|mjs))`?[\s,:(]*)?`([A-Za-z_$#][\w$]*(?:\.[A-Za-z_$#][\w$]*)*)(\(\))?`/g;
  for (const m of comments.matchAll(cite)) {
    // A file name (`binding.gyp`) is no code name; an UPPER_CASE part is a placeholder or a setting.
    if (/\.(gyp|json|ya?ml|md|proto|sh)$/.test(m[2]!)) continue;
    const parts = m[2]!
      .split(".")
      .map((p) => p.replace(/^#/, ""))
      .filter((p) => !/^[A-Z][A-Z0-9_]*$/.test(p));
    if (!m[3] && parts.length === 1 && !/[a-z][A-Z]/.test(parts[0]!)) continue;
    out.push({ name: m[0].slice(m[0].indexOf(m[2]!) - 1), parts, ...(m[1] ? { path: m[1] } : {}) });
  }
  return out;
}

/** Every problem in the repository at `root`. */
export function nameProblems(root: string = REPO_ROOT): string[] {
  const files = listFiles(root).filter((f) => CODE.test(f));
  const every = new Set<string>(Object.keys(FOREIGN_NAMES));
  const byFile = new Map<string, Set<string>>();
  for (const f of files) {
    const names = namesIn(f, readFileSync(join(root, f), "utf8"));
    byFile.set(f, names);
    for (const n of names) every.add(n);
  }
  const problems: string[] = [];
  for (const f of files) {
    for (const c of citedNames(commentsOf(readFileSync(join(root, f), "utf8")))) {
      const missing = c.parts.filter((p) => !every.has(p));
      if (missing.length) {
        problems.push(`${f}: ${c.name}: ${missing.join(", ")} is named nowhere in the code`);
        continue;
      }
      const inPath = c.path && existsSync(resolve(root, c.path)) ? byFile.get(c.path) : undefined;
      if (inPath && !c.parts.every((p) => inPath.has(p) || p in FOREIGN_NAMES))
        problems.push(`${f}: ${c.name}: not in ${c.path}`);
    }
  }
  return problems;
}

const USAGE = {
  command: "tsx scripts/check-names.ts",
  summary:
    "Checks that every code name (function, method, field) a comment cites in backticks exists in the\n" +
    "code, and in the file the comment names with it. Exit 1 on any problem.",
  flags: {
    root: { type: "string", description: "the repository to check (default: this one)" },
  },
} as const;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const problems = nameProblems(resolve(values.root ?? REPO_ROOT));
  if (problems.length) {
    console.error(`names: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
    process.exit(1);
  }
  console.log("names: every code name a comment cites exists");
}

/**
 * `npm run check` (paths): every repository path a document or a comment names must exist. Read are
 * the Markdown files and the comments of the code (TypeScript and JavaScript) anywhere in the
 * repository. A path is a relative Markdown link (resolved from the document's folder, and kept inside
 * the repository), or a token that starts with one of the repository's top-level folders and ends in a
 * file name with an extension or in a slash (`src/swap/executor.ts`, `docs/`, `test/fill/`), read from
 * the repository root. A link's anchor into a Markdown document must be one of its headings. Citations of documents the repository does not hold are refused by name.
 * Prints each problem and exits 1.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { parseArgs } from "../src/cli/args.ts";
import { REPO_ROOT } from "./import-graph.ts";

/** Paths that exist only at run time or after a build; a name under them is not checked. */
export const RUNTIME_PATHS: Record<string, string> = {
  "data/": "generated state (paper keys, the embedded ledger, the sandbox's stack.json), git-ignored",
  "dist/": "the compiled build (npm run build), git-ignored",
  "results/": "load-test and mutation reports, git-ignored",
  "reports/": "Stryker's reports, git-ignored",
  "coverage/": "coverage reports, git-ignored",
  ".ci/node/": "the Node that .ci/run unpacks, git-ignored",
};

/** Citations of documents that are not in the repository. */
export const FOREIGN_DOCUMENTS: { pattern: RegExp; why: string }[] = [
  { pattern: /\bhouse style\s+\d/i, why: "cites the house style, which is no document of this repository" },
];

/** Folders never read: dependencies, version control, and the run-time folders above. */
const SKIPPED_DIRS = new Set([
  "node_modules",
  ".git",
  ".stryker-tmp",
  "data",
  "dist",
  "results",
  "reports",
  "coverage",
]);
/** A skipped folder, or one of Stryker's sandboxes (`.stryker-tmp`, `.stryker-tmp-deciders`, ...). */
const skipped = (name: string) => SKIPPED_DIRS.has(name) || name.startsWith(".stryker-tmp");

const CODE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;

/** Every Markdown and code file under `root`, relative to it with forward slashes. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        // The run-time folders are skipped wherever they are, .ci/node (CI's unpacked Node) at the root.
        if (!skipped(name) && relative(root, p) !== join(".ci", "node")) walk(p);
      } else if (name.endsWith(".md") || (CODE.test(name) && !name.endsWith(".d.ts"))) {
        out.push(relative(root, p).split(sep).join("/"));
      }
    }
  };
  walk(root);
  return out.sort();
}

const K = ts.SyntaxKind;

/** Tokens after which a `/` divides; after any other it starts a regular expression. */
const VALUE_END = new Set([
  K.Identifier,
  K.PrivateIdentifier,
  K.NumericLiteral,
  K.BigIntLiteral,
  K.StringLiteral,
  K.RegularExpressionLiteral,
  K.NoSubstitutionTemplateLiteral,
  K.TemplateTail,
  K.CloseParenToken,
  K.CloseBracketToken,
  K.CloseBraceToken,
  K.ThisKeyword,
  K.SuperKeyword,
  K.TrueKeyword,
  K.FalseKeyword,
  K.NullKeyword,
  K.PlusPlusToken,
  K.MinusMinusToken,
]);

/**
 * The text of every comment in a code file (strings, templates and regular expressions never count).
 * TypeScript's scanner, told where a `/` starts a regular expression and where a `}` resumes a
 * template, as its parser would tell it, without parsing the file.
 */
export function commentsOf(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const parts: string[] = [];
  const braces: boolean[] = [];
  let prev: ts.SyntaxKind = K.Unknown;
  for (let t = scanner.scan(); t !== K.EndOfFileToken; t = scanner.scan()) {
    if (t === K.SingleLineCommentTrivia || t === K.MultiLineCommentTrivia) {
      parts.push(scanner.getTokenText());
      continue;
    }
    if (t === K.WhitespaceTrivia || t === K.NewLineTrivia) continue;
    if ((t === K.SlashToken || t === K.SlashEqualsToken) && !VALUE_END.has(prev))
      t = scanner.reScanSlashToken();
    if (t === K.TemplateHead) braces.push(true);
    else if (t === K.OpenBraceToken) braces.push(false);
    else if (t === K.CloseBraceToken && braces.pop()) {
      t = scanner.reScanTemplateToken(false);
      if (t === K.TemplateMiddle) braces.push(true);
    }
    prev = t;
  }
  return parts.join("\n");
}

/** Relative Markdown links (no scheme): the path (empty for the document itself) and the anchor. */
function markdownLinks(text: string): { path: string; anchor: string }[] {
  const out: { path: string; anchor: string }[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path = "", anchor = ""] = target.replace(/\?[^#]*/, "").split("#");
    out.push({ path, anchor });
  }
  return out;
}

/** The anchors a Markdown document's headings get, spelled as GitHub spells them, and its HTML ids. */
export function headingAnchors(md: string): Set<string> {
  const out = new Set<string>();
  const counts = new Map<string, number>();
  let fence = false;
  for (const line of md.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const heading = fence ? null : line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (heading) {
      const slug = heading[1]!
        .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-");
      const n = counts.get(slug) ?? 0;
      counts.set(slug, n + 1);
      out.add(n ? `${slug}-${n}` : slug);
    }
    for (const id of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(id[1]!);
  }
  return out;
}

/** Tokens that name a path from the repository root: a top-level folder, then a file or a folder. */
function namedPaths(text: string, tops: readonly string[]): string[] {
  const out: string[] = [];
  const token = /(?<![\w./:@$~-])((?:\.?[\w-]+\/)+(?:[\w.-]*\.[A-Za-z]\w*|))(?![\w/*<{$-])/g;
  for (const m of text.matchAll(token)) {
    const p = m[1]!.replace(/\.$/, "");
    const top = p.split("/")[0]!;
    if (!tops.includes(top)) continue;
    // A trailing dot is the end of a sentence, not of a name: `src/main.ts.` reads as `src/main.ts`.
    if (!p.endsWith("/") && !/\.[A-Za-z]\w*$/.test(p)) continue;
    out.push(p);
  }
  return out;
}

export interface PathCheck {
  /** Whether a path relative to the repository root exists. */
  exists(path: string): boolean;
  /** The anchors of a Markdown file relative to the repository root. */
  anchors(path: string): Set<string>;
  /** The repository's top-level folders: a named path must start with one of them. */
  tops: readonly string[];
}

/** The problems in one file's text: missing paths, links leaving the repository, foreign documents. */
export function problemsIn(file: string, text: string, check: PathCheck): string[] {
  const problems: string[] = [];
  const isMarkdown = file.endsWith(".md");
  const prose = isMarkdown ? text : commentsOf(text);
  const runtime = (p: string) =>
    Object.keys(RUNTIME_PATHS).some((r) => p === r.slice(0, -1) || p.startsWith(r));
  const seen = new Set<string>();
  const report = (path: string, problem: string) => {
    const line = `${file}: ${path}: ${problem}`;
    if (!seen.has(line)) problems.push(line);
    seen.add(line);
  };
  if (isMarkdown) {
    for (const { path, anchor } of markdownLinks(text)) {
      const target = !path
        ? file
        : path.startsWith("/")
          ? path
          : posix.normalize(posix.join(posix.dirname(file), path));
      const shown = `${path}${anchor ? `#${anchor}` : ""}`;
      if (target.startsWith("/") || target === ".." || target.startsWith("../")) {
        report(shown, "links outside the repository");
      } else if (!runtime(target) && !check.exists(target)) {
        report(shown, "linked, but not in the repository");
      } else if (!runtime(target) && anchor && target.endsWith(".md")) {
        const anchors = target === file ? headingAnchors(text) : check.anchors(target);
        if (!anchors.has(anchor)) report(shown, `no heading of ${target} has the anchor #${anchor}`);
      }
    }
  }
  for (const p of namedPaths(prose, check.tops)) {
    if (!runtime(p) && !check.exists(p)) report(p, "named, but not in the repository");
  }
  for (const { pattern, why } of FOREIGN_DOCUMENTS) {
    for (const m of prose.matchAll(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`)))
      report(JSON.stringify(m[0]), why);
  }
  return problems;
}

/** Every problem in the repository at `root`. */
export function pathProblems(root: string = REPO_ROOT): string[] {
  const tops = readdirSync(root).filter((n) => !skipped(n) && statSync(join(root, n)).isDirectory());
  const check: PathCheck = {
    exists: (p) => existsSync(resolve(root, p)),
    anchors: (p) => headingAnchors(readFileSync(resolve(root, p), "utf8")),
    tops,
  };
  return listFiles(root).flatMap((f) => problemsIn(f, readFileSync(join(root, f), "utf8"), check));
}

const USAGE = {
  command: "tsx scripts/check-paths.ts",
  summary:
    "Checks that every repository path named in a document or a comment exists, that Markdown links\n" +
    "stay inside the repository, and that no document the repository does not hold is cited. Exit 1\n" +
    "on any problem.",
  flags: {
    root: { type: "string", description: "the repository to check (default: this one)" },
  },
} as const;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs(process.argv.slice(2), USAGE);
  const root = resolve(values.root ?? REPO_ROOT);
  const problems = pathProblems(root);
  if (problems.length) {
    console.error(`paths: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
    process.exit(1);
  }
  console.log(`paths: ${listFiles(root).length} documents and code files, every path they name exists`);
}

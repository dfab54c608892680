/**
 * A stand-in for Docker's build-context filter (no Docker engine runs on the project's machines): how
 * `docker build` (BuildKit) applies `.dockerignore` to the context, written from moby/patternmatcher
 * (`New`, `MatchesOrParentMatches`, `Pattern.compile`) and moby/patternmatcher/ignorefile (`ReadAll`):
 *
 * - a line is trimmed; empty lines and lines starting with `#` are skipped; `!` makes an exception;
 *   the pattern is cleaned as Go's `filepath.Clean` does (`data/` is `data`), and a leading `/` dropped;
 * - `*` is any run of characters but `/`, `?` one character but `/`, `**` any number of path segments
 *   (zero included: `**∕x` matches `x` at the root), `[...]` a class, `\` escapes the next character;
 *   a pattern matches the whole path from the context's root (not any suffix, unlike .gitignore);
 * - a path is excluded when the last pattern that matches it or one of its parent folders is not an
 *   exception.
 *
 * Where it may differ: the walk descends into an excluded folder only when an exception names a path
 * under it (BuildKit's own rule is the same idea, checked per pattern); symlinks are listed, not followed.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";

interface Pattern {
  exclusion: boolean;
  cleaned: string;
  regexp: RegExp;
}

/** Go's filepath.Clean for slash-separated paths. */
function clean(p: string): string {
  const out = posix.normalize(p);
  return out.length > 1 && out.endsWith("/") ? out.slice(0, -1) : out;
}

/** moby/patternmatcher's Pattern.compile, to a RegExp (its exact/prefix/suffix fast paths agree with it). */
function compile(pattern: string): RegExp {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === "*") {
      if (pattern[i + 1] === "*") {
        i++;
        if (pattern[i + 1] === "/") i++;
        re += i + 1 >= pattern.length ? ".*" : "(.*/)?";
      } else re += "[^/]*";
    } else if (ch === "?") re += "[^/]";
    else if (".+()|{}$".includes(ch)) re += `\\${ch}`;
    else if (ch === "\\") {
      if (i + 1 < pattern.length) {
        i++;
        re += `\\${pattern[i]}`;
      } else re += "\\\\";
    } else re += ch;
  }
  return new RegExp(`${re}$`);
}

/** ignorefile.ReadAll plus patternmatcher.New. */
export function parseDockerignore(text: string): Pattern[] {
  const patterns: Pattern[] = [];
  for (const raw of text.split("\n")) {
    let p = raw.trim();
    if (p === "" || p.startsWith("#")) continue;
    let exclusion = false;
    if (p.startsWith("!")) {
      exclusion = true;
      p = p.slice(1).trim();
    }
    p = clean(p);
    if (p.startsWith("/")) p = p.slice(1) || ".";
    patterns.push({ exclusion, cleaned: p, regexp: compile(p) });
  }
  return patterns;
}

/** patternmatcher.MatchesOrParentMatches: whether `file` (slash-separated, relative) is excluded. */
export function excluded(patterns: Pattern[], file: string): boolean {
  const parents = posix.dirname(file) === "." ? [] : posix.dirname(file).split("/");
  let matched = false;
  for (const p of patterns) {
    if (p.exclusion !== matched) continue;
    let match = p.regexp.test(file);
    for (let i = 0; !match && i < parents.length; i++)
      match = p.regexp.test(parents.slice(0, i + 1).join("/"));
    if (match) matched = !p.exclusion;
  }
  return matched;
}

/** Whether an exception could let something under the excluded folder `dir` back in. */
function exceptionUnder(patterns: Pattern[], dir: string): boolean {
  return patterns.some(
    (p) =>
      p.exclusion && (p.cleaned.startsWith(`${dir}/`) || p.cleaned.startsWith("**") || p.cleaned === dir),
  );
}

/**
 * The files `docker build <root>` sends as its context with `<root>/.dockerignore` applied, plus
 * `extra` (relative paths that do not exist on disk, e.g. a planted key), slash-separated and sorted.
 */
export function buildContext(root: string, extra: string[] = []): string[] {
  const patterns = parseDockerignore(readFileSync(join(root, ".dockerignore"), "utf8"));
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!excluded(patterns, path) || exceptionUnder(patterns, path)) walk(path);
      } else if (!excluded(patterns, path)) files.push(path);
    }
  };
  walk("");
  for (const path of extra) if (!excluded(patterns, path)) files.push(path);
  return files.sort();
}

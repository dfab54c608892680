/**
 * `npm run check` (README): README.md stays a door, at most README_MAX_LINES lines, and links the
 * documents a newcomer looks for first; details belong in docs/. Prints each problem and exits 1.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./import-graph.ts";

export const README_MAX_LINES = 250;

/** Documents the README links directly: every setting, and how a maker feeds its own prices. */
export const README_LINKS = ["docs/configuration.md", "pricing/README.md"] as const;

/** What keeps a README text from being a door. */
export function readmeProblems(text: string): string[] {
  const problems: string[] = [];
  const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
  if (lines > README_MAX_LINES)
    problems.push(`README.md: ${lines} lines, more than ${README_MAX_LINES}: move the details to docs/`);
  for (const target of README_LINKS)
    if (!text.includes(`](${target})`)) problems.push(`README.md: does not link ${target}`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = readmeProblems(readFileSync(join(REPO_ROOT, "README.md"), "utf8"));
  if (problems.length) {
    console.error(`readme: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
    process.exit(1);
  }
  console.log(`readme: at most ${README_MAX_LINES} lines, links ${README_LINKS.join(", ")}`);
}

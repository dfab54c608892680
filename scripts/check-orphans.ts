/**
 * `npm run check` (orphans): every file in the folders that ship is reached from an entry point that
 * ships. A file that only tests, benchmarks or the sandbox import belongs beside them, not in `src/`.
 * Entry points: the service and the ops commands below, plus every shipped file an npm script runs.
 * Prints each orphan and exits 1.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildImportGraph, type ImportGraph, PRODUCTION, REPO_ROOT, topOf } from "./import-graph.ts";

/** What ships and is started directly: the service and the operations commands. */
export const ENTRY_POINTS = [
  "src/main.ts",
  "src/signer/main.ts",
  "src/ops/doctor-main.ts",
  "src/ops/registration-main.ts",
  "src/rebalance/main.ts",
  "src/ops/report-main.ts",
];

/** Shipped files that package.json's scripts run (`tsx src/<command>.ts`), so a new command counts at once. */
function scriptEntries(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  const out: string[] = [];
  for (const cmd of Object.values(pkg.scripts ?? {})) {
    for (const m of cmd.matchAll(/(?:^|\s)((?:[\w.-]+\/)+[\w.-]+\.ts)\b/g)) {
      const file = m[1]!;
      if ((PRODUCTION as readonly string[]).includes(topOf(file))) out.push(file);
    }
  }
  return out;
}

/** Shipped files no entry point reaches (tests beside the code, `*.test.ts`, are not shipped code). */
export function orphans(graph: ImportGraph, entries: readonly string[]): string[] {
  const reached = new Set<string>();
  const stack = [...entries];
  while (stack.length) {
    const f = stack.pop()!;
    if (reached.has(f)) continue;
    reached.add(f);
    stack.push(...(graph.get(f) ?? []));
  }
  return [...graph.keys()]
    .filter((f) => (PRODUCTION as readonly string[]).includes(topOf(f)))
    .filter((f) => !f.endsWith(".test.ts") && !reached.has(f))
    .sort();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { graph } = buildImportGraph();
  const entries = [...new Set([...ENTRY_POINTS, ...scriptEntries()])];
  const missing = entries.filter((e) => !existsSync(join(REPO_ROOT, e)));
  const lost = orphans(graph, entries);
  if (missing.length || lost.length) {
    for (const e of missing) console.error(`orphans: entry point ${e} does not exist`);
    if (lost.length) {
      console.error(
        `orphans: ${lost.length} shipped file(s) that no entry point imports (move them to sandbox/, ` +
          `test/ or tooling/, or delete them):\n${lost.map((f) => `  ${f}`).join("\n")}`,
      );
    }
    process.exit(1);
  }
  console.log(`orphans: none (${entries.length} entry points: ${entries.join(", ")})`);
}

/**
 * `npm run check`: the type-check (tsc), Biome's lint and format check, then the layer, orphan and
 * supply-chain checks (scripts/check-layers.ts, check-orphans.ts, supply-chain.ts: native code in
 * production dependencies, the lockfile), that every path a document or comment names exists
 * (check-paths.ts) and every code name a comment cites (check-names.ts), that every refusal code is
 * in one list and every refusal `{ code, context }` (check-refusals.ts), that README.md stays a door of
 * at most 250 lines (check-readme.ts), that docs/configuration.md is current (config-doc.ts), that
 * every value src/ exports is used by another file (check-exports.ts) and that no function under src/
 * is over 120 lines (check-function-size.ts), as CI runs them; the first failure
 * stops it. `--write` lets Biome fix what it can (formatting, safe lint fixes) instead of only
 * reporting it.
 */
import { spawnSync } from "node:child_process";
import { parseArgs } from "../src/cli/args.ts";

const USAGE = {
  command: "npm run check",
  summary:
    "Type-checks the project (tsc --noEmit), lints and format-checks it (biome check .), then checks the\n" +
    "folder layers, that nothing shipped is orphaned, and the supply chain (native code in production\n" +
    "dependencies, the lockfile), that every path named in a document or a comment exists, that every\n" +
    "code name a comment cites exists, that every refusal code is in src/refusal/codes.ts and every\n" +
    "refusal is { code, context }, that README.md is at most 250 lines, that docs/configuration.md is\n" +
    "current, that every value src/ exports is used by another file, and that no function under src/ is\n" +
    "over 120 lines: scripts/check-layers.ts, check-orphans.ts, supply-chain.ts, check-paths.ts,\n" +
    "check-names.ts, check-refusals.ts, check-readme.ts, config-doc.ts --check, check-exports.ts,\n" +
    "check-function-size.ts, as CI does. Exit 0 when all pass.",
  flags: {
    write: { type: "boolean", description: "let Biome fix what it can (biome check --write .)" },
  },
} as const;

const { values } = parseArgs(process.argv.slice(2), USAGE);
const steps: [string, string[]][] = [
  ["tsc", ["--noEmit", "-p", "tsconfig.json"]],
  ["biome", ["check", ...(values.write ? ["--write"] : []), "."]],
  ["tsx", ["scripts/check-layers.ts"]],
  ["tsx", ["scripts/check-orphans.ts"]],
  ["tsx", ["scripts/supply-chain.ts"]],
  ["tsx", ["scripts/check-paths.ts"]],
  ["tsx", ["scripts/check-names.ts"]],
  ["tsx", ["scripts/check-refusals.ts"]],
  ["tsx", ["scripts/check-readme.ts"]],
  ["tsx", ["scripts/config-doc.ts", "--check"]],
  ["tsx", ["scripts/check-exports.ts"]],
  ["tsx", ["scripts/check-function-size.ts"]],
];
for (const [cmd, args] of steps) {
  // npm puts node_modules/.bin on PATH for scripts; `shell` resolves it the same way on every platform.
  const r = spawnSync(cmd, args, { stdio: "inherit", shell: process.platform === "win32" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

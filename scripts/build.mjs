#!/usr/bin/env node
/**
 * `npm run build`: compiles what the service ships (src/, pricing/, inventory/, amounts/, config/; see
 * tsconfig.build.json) to dist/ with TypeScript, and copies the default configuration (SHIPPED_CONFIG, by
 * name: nothing else under config/) next to the compiled dist/config/load.js, which finds it there, and the RFQ v2 .proto next to its loader.
 * The production start is then `node dist/src/main.js`: no tsx, no esbuild, one process that receives signals itself.
 *
 *   node scripts/build.mjs             # clean build
 *   node scripts/build.mjs --if-stale  # build only when a shipped source is newer than the last build
 *
 * Plain JavaScript on purpose: it runs before anything is compiled, with only `typescript` installed.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "dist");
const STAMP = join(OUT, ".build-stamp");
/** What the build reads: a change to any of these makes dist/ stale. */
const INPUTS = [
  "src",
  "pricing",
  "inventory",
  "amounts",
  "config",
  "tsconfig.json",
  "tsconfig.build.json",
  "package-lock.json",
  // What is copied changes with this script (a dist/ built by an older one may hold other files).
  "scripts/build.mjs",
];

/**
 * The configuration files dist/config/ gets, by name: only the default configuration, which
 * config/load.ts reads from beside itself where there is no checkout (the image). Never every
 * config/*.json: a maker keypair or a production configuration saved under config/ would then be
 * compiled into dist/ and copied into the image (issue 61, finding 5).
 */
export const SHIPPED_CONFIG = ["default.json"];

/** Copies the SHIPPED_CONFIG files from `from` (config/) to `to` (dist/config/), and nothing else. */
export function copyShippedConfig(from, to) {
  mkdirSync(to, { recursive: true });
  for (const f of SHIPPED_CONFIG) copyFileSync(join(from, f), join(to, f));
}

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function isStale() {
  if (!existsSync(STAMP) || !existsSync(join(OUT, "src", "main.js"))) return true;
  const built = statSync(STAMP).mtimeMs;
  // An image or a copy with dist/ but without sources is as built as it will get.
  return INPUTS.some((p) => newestMtime(join(ROOT, p)) > built);
}

function build() {
  let tsc;
  try {
    tsc = createRequire(join(ROOT, "package.json")).resolve("typescript/bin/tsc");
  } catch {
    console.error("build: typescript is not installed (a development dependency): run `npm ci` first");
    process.exit(1);
  }
  rmSync(OUT, { recursive: true, force: true });
  const started = Date.now();
  try {
    execFileSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json")], {
      cwd: ROOT,
      stdio: "inherit",
    });
  } catch {
    console.error("build: tsc failed (see above); nothing written to dist/");
    rmSync(OUT, { recursive: true, force: true });
    process.exit(1);
  }
  copyShippedConfig(join(ROOT, "config"), join(OUT, "config"));
  // The RFQ v2 service definition, which src/rfq-v2/proto.ts loads from beside itself.
  copyFileSync(join(ROOT, "src/rfq-v2/market_maker.proto"), join(OUT, "src/rfq-v2/market_maker.proto"));
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  console.error(`build: dist/ written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// The same conventions as src/cli/args.ts (which this plain-JavaScript step cannot import): --help
// prints the usage, an unknown flag is an error listing the known ones (exit 64).
const KNOWN = ["--if-stale", "-h", "--help"];
const unknown = process.argv.slice(2).find((a) => !KNOWN.includes(a));
// Run as a script (`node scripts/build.mjs`), not when a test imports SHIPPED_CONFIG.
const isMain =
  process.argv[1] !== undefined && pathToFileURL(resolve(process.argv[1])).href === import.meta.url;
if (!isMain) {
  // imported: nothing to do
} else if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(
    "usage: npm run build -- [--if-stale]\n\n" +
      "Compiles what the service ships (src/, pricing/, inventory/, amounts/, config/) to dist/ and copies\n" +
      "the default configuration (config/default.json, by name) beside it; `npm start` runs it with --if-stale before `node dist/src/main.js`.\n\n" +
      "flags:\n  --if-stale  build only when a shipped source is newer than the last build\n" +
      "  -h, --help  print this help and exit",
  );
} else if (unknown) {
  console.error(`npm run build: unknown flag ${unknown}; known flags: ${KNOWN.join(", ")}`);
  process.exit(64);
} else if (process.argv.includes("--if-stale") && !isStale()) {
  // Up to date: say nothing, `npm start` goes straight on.
} else {
  build();
}

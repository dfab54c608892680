/**
 * `npm run bench`: the swap path micro-benchmark
 * (bench/swap.ts), then what the pre-flight simulation adds to /swap (bench/preflight.ts), then what
 * the remote signer adds to /swap (bench/signer.ts), then the compute units of the largest
 * permissioned fill the configuration allows (bench/permissioned-cu.ts). Each can be run alone with its own flags:
 * `npm run bench:swap -- --help`, `npm run bench:preflight -- --help`,
 * `npm run bench:signer -- --help`.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "../src/cli/args.ts";
import { REPO_ROOT } from "../tooling/processes.ts";

const USAGE = {
  command: "npm run bench",
  summary:
    "Runs the swap path micro-benchmark (npm run bench:swap), the pre-flight latency benchmark (npm run bench:preflight) and the remote\n" +
    "signer latency benchmark (npm run bench:signer) and the compute units of the largest permissioned\n" +
    "fill (npm run bench:permissioned) with their defaults; figures are printed, not\n" +
    "asserted. For their flags: npm run bench:swap -- --help,\n" +
    "npm run bench:preflight -- --help, npm run bench:signer -- --help.",
  flags: {},
} as const;

parseArgs(process.argv.slice(2), USAGE);
for (const script of ["bench/swap.ts", "bench/preflight.ts", "bench/signer.ts", "bench/permissioned-cu.ts"]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, script)], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

/**
 * `npm run test:faults`: the fault suite (test/faults/*.fault.ts, vitest.faults.config.ts). Each
 * scenario starts its own redis-server and webhook processes on loopback, breaks them, prints its
 * figures and checks its pass criteria; scenarios run one after another. Positionals filter the
 * scenario files as vitest does (e.g. `npm run test:faults -- redis`).
 */
import { spawn } from "node:child_process";
import { parseArgs } from "../src/cli/args.ts";

const USAGE = {
  command: "npm run test:faults",
  positionals: "[scenario-filter...]",
  summary:
    "Runs the fault suite: Redis killed under quote load (with and without its data), a Sentinel\n" +
    "group's primary killed under quote load with swaps in flight, the chain RPC cut and restored\n" +
    "around fills, the RPC and the block engine stalling / answering 503 / dropping connections, the\n" +
    "signer service and PostgreSQL stopped (fast named 404s, priced again within 1 s), the webhook\n" +
    "and Redis restarted, a swap in flight across an RPC stall, PostgreSQL stopped under swaps,\n" +
    "the webhook killed with fills in flight, SIGTERM under load, the fill ledger across a\n" +
    "webhook SIGKILL in the load test's swap phase (checked against the chain). Needs redis-server,\n" +
    "redis-cli and PostgreSQL's initdb and pg_ctl. FAULT_QUOTE_RATE sets the quote rate (default 500/s).",
  flags: {},
} as const;

const { positionals } = parseArgs(process.argv.slice(2), USAGE);
const child = spawn("npx", ["vitest", "run", "--config", "vitest.faults.config.ts", ...positionals], {
  stdio: "inherit",
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

/**
 * Runs a command with REDIS_URL pointing at a Redis server: REDIS_URL as given, or else a throwaway
 * redis-server (no persistence, free port, temporary folder) started for the command and stopped after
 * it, so tests never touch a Redis someone else relies on. `npm test` runs vitest through this.
 *
 * With `--postgres` first, it also sets TEST_DATABASE_URL (the ledger suite's PostgreSQL server): as
 * given, or a throwaway server (initdb + pg_ctl in a temporary folder, free loopback port; as the
 * `postgres` user when run as root) started for the command and stopped after it. Never the
 * machine's own server.
 */
import { spawn } from "node:child_process";
import { formatUsage, parseArgs } from "../src/cli/args.ts";
import { startPostgres, startRedis } from "../tooling/processes.ts";

const USAGE = {
  command: "tsx scripts/with-redis.ts",
  positionals: "[--postgres] <command> [args...]",
  summary:
    "Runs <command> with REDIS_URL set: as given, or a throwaway redis-server started for it and\n" +
    "stopped after it. `npm test` runs vitest through it (`npm test -- <vitest args>`, e.g. a test\n" +
    "file); `npm run bench:pricing` runs bench/pricing.ts through it. With --postgres first, also\n" +
    "TEST_DATABASE_URL: as given, or a throwaway PostgreSQL server (initdb + pg_ctl, temporary folder,\n" +
    "free port) for the ledger's tests.",
  flags: {},
} as const;

const argv = process.argv.slice(2);
const withPostgres = argv[0] === "--postgres";
const [cmd, ...args] = withPostgres ? argv.slice(1) : argv;
if (!cmd || cmd === "--help" || cmd === "-h") {
  // Nothing to wrap: this wrapper's own usage (exit 0 when asked for, 64 when the command is missing).
  if (cmd) parseArgs(["--help"], USAGE);
  process.stderr.write(formatUsage(USAGE));
  process.exit(64);
}
if (args.includes("--help") || args.includes("-h")) {
  // The wrapped command's help needs no Redis: say what wraps it, then let the command print its own.
  process.stdout.write(`${formatUsage(USAGE)}\n${cmd} ${args.join(" ")}:\n`);
  const help = spawn(cmd, args, { stdio: "inherit" });
  help.on("exit", (c) => process.exit(c ?? 1));
} else {
  await run(cmd, args);
}

async function run(cmd: string, args: string[]): Promise<never> {
  let redis: Awaited<ReturnType<typeof startRedis>>;
  try {
    redis = await startRedis();
  } catch (e) {
    console.error((e as Error).message);
    process.exit(1);
  }
  let pg: Awaited<ReturnType<typeof startPostgres>> | undefined;
  if (withPostgres && !process.env.TEST_DATABASE_URL) {
    try {
      pg = await startPostgres();
    } catch (e) {
      console.error((e as Error).message);
      await redis.stop();
      process.exit(1);
    }
  }
  const env = { ...process.env, REDIS_URL: redis.url, ...(pg ? { TEST_DATABASE_URL: pg.url } : {}) };
  const child = spawn(cmd, args, { stdio: "inherit", env });
  const code = await new Promise<number>((resolve) =>
    child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))),
  );
  await pg?.stop().catch((e: Error) => console.error(`stopping the test PostgreSQL server: ${e.message}`));
  await redis.stop();
  process.exit(code);
}

/**
 * Runs a command with REDIS_URL pointing at a Redis server: REDIS_URL as given, or else a throwaway
 * redis-server (no persistence, free port, temporary folder) started for the command and stopped after
 * it, so tests never touch a Redis someone else relies on. `npm test` runs vitest through this.
 */
import { spawn } from "node:child_process";
import { startRedis } from "../tooling/processes.ts";

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error("usage: tsx scripts/with-redis.ts <command> [args...]");
  process.exit(2);
}

let redis: Awaited<ReturnType<typeof startRedis>>;
try {
  redis = await startRedis();
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
const child = spawn(cmd, args, { stdio: "inherit", env: { ...process.env, REDIS_URL: redis.url } });
const code = await new Promise<number>((resolve) =>
  child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
await redis.stop();
process.exit(code);

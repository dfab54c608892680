#!/usr/bin/env node
// Runs a command with REDIS_URL pointing at a Redis server. If REDIS_URL is already set, it is used as
// given; otherwise a throwaway redis-server (no persistence, random port, temporary folder) is started
// and stopped afterwards, so tests never touch a Redis someone else relies on.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error("usage: with-redis.mjs <command> [args...]");
  process.exit(2);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForPing(port, deadlineMs) {
  while (Date.now() < deadlineMs) {
    const r = spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" });
    if (r.stdout?.trim() === "PONG") return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function run(env) {
  const child = spawn(cmd, args, { stdio: "inherit", env, shell: process.platform === "win32" });
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

let code;
if (process.env.REDIS_URL) {
  code = await run(process.env);
} else {
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    console.error(
      "redis-server was not found, and REDIS_URL is not set.\n" +
        "Install Redis (Debian/Ubuntu: `sudo apt-get install -y redis-server`; macOS: `brew install redis`)\n" +
        "or point the tests at a running server: REDIS_URL=redis://127.0.0.1:6379 npm test",
    );
    process.exit(1);
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rfq-redis-"));
  const server = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    { stdio: "ignore" },
  );
  const up = await waitForPing(port, Date.now() + 10_000);
  if (!up) {
    server.kill("SIGKILL");
    console.error(`redis-server did not answer on port ${port} within 10 s`);
    process.exit(1);
  }
  code = await run({ ...process.env, REDIS_URL: `redis://127.0.0.1:${port}` });
  server.kill("SIGTERM");
  await new Promise((r) => server.on("exit", r));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);

/**
 * A redis-server of its own (a test's, the soak's), on a free loopback port, that its user may kill
 * (SIGKILL), freeze (SIGSTOP, a server that accepts but never answers) and start again on the same
 * port, with or without its data. Never the shared test Redis (REDIS_URL) and never the machine's default one.
 *
 * With `persistence`, every write is appended and fsynced (`appendonly yes`, `appendfsync always`), so
 * a SIGKILL loses nothing; without it, a restart comes back empty.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./processes.ts";

export interface KillableRedis {
  url: string;
  port: number;
  /** SIGKILL: connections reset, nothing flushed beyond what persistence already wrote. */
  kill(): Promise<void>;
  /** Starts it again on the same port and folder; resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: the socket stays open, nothing is answered. */
  freeze(): void;
  thaw(): void;
  /** Stops it for good and removes its folder. */
  stop(): Promise<void>;
}

export async function killableRedis(opts: { persistence?: boolean } = {}): Promise<KillableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rfq-fault-redis-"));
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""];
  args.push(
    ...(opts.persistence ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
  );
  let proc: ChildProcess | undefined;

  const start = async () => {
    proc = spawn("redis-server", args, { stdio: "ignore" });
    const until = Date.now() + 10_000;
    for (;;) {
      const r = spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" });
      if (r.stdout?.trim() === "PONG") return;
      if (Date.now() > until) throw new Error(`redis-server did not answer on port ${port} within 10 s`);
      await new Promise((res) => setTimeout(res, 25));
    }
  };
  const kill = async () => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once("exit", () => resolve());
      p.kill("SIGCONT");
      p.kill("SIGKILL");
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start,
    freeze: () => proc?.kill("SIGSTOP"),
    thaw: () => proc?.kill("SIGCONT"),
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A Sentinel-guarded Redis of the fault suite's own, on free loopback ports: a primary, one replica
 * (`--replicaof`) and one sentinel (`redis-server --sentinel`, quorum 1, the primary judged down after
 * 1 s). The test kills the primary and watches the sentinel promote the replica. Nothing beyond
 * redis-server and redis-cli is needed.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, stopChild } from "../../tooling/processes.ts";

export const MASTER_NAME = "rfq";

export interface SentinelGroup {
  primaryPort: number;
  replicaPort: number;
  sentinelPort: number;
  /** The REDIS_SENTINELS / REDIS_SENTINEL_MASTER environment for the webhook. */
  env: Record<string, string>;
  /** SIGKILL the primary. */
  killPrimary(): Promise<void>;
  /** The port the sentinel currently names as the master (asked without blocking the event loop). */
  masterPort(): Promise<number | undefined>;
  stop(): Promise<void>;
}

const cli = (port: number, ...args: string[]) =>
  spawnSync("redis-cli", ["-p", String(port), ...args], { encoding: "utf8", timeout: 5_000 }).stdout ?? "";

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`sentinel group: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function sentinelGroup(): Promise<SentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), "rfq-sentinel-"));
  const [primaryPort, replicaPort, sentinelPort] = [await freePort(), await freePort(), await freePort()];
  const server = (port: number, extra: string[]) => {
    const d = join(dir, String(port));
    mkdirSync(d);
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    return spawn("redis-server", [...args, "--dir", d, ...extra], { stdio: "ignore" });
  };
  const procs: ChildProcess[] = [];
  let primary: ChildProcess | undefined = server(primaryPort, []);
  procs.push(primary);
  await until("the primary did not answer", () => cli(primaryPort, "ping").trim() === "PONG");
  procs.push(server(replicaPort, ["--replicaof", "127.0.0.1", String(primaryPort)]));
  await until("the replica did not sync", () =>
    cli(replicaPort, "info", "replication").includes("master_link_status:up"),
  );
  const conf = join(dir, "sentinel.conf");
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${primaryPort} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
      `sentinel failover-timeout ${MASTER_NAME} 10000`,
      `sentinel parallel-syncs ${MASTER_NAME} 1`,
      "",
    ].join("\n"),
  );
  procs.push(spawn("redis-server", [conf, "--sentinel"], { stdio: "ignore" }));
  const sentinel = new Redis(sentinelPort, "127.0.0.1", { maxRetriesPerRequest: 1 });
  sentinel.on("error", () => {});
  const masterPort = async () => {
    try {
      const addr = (await sentinel.call("SENTINEL", "get-master-addr-by-name", MASTER_NAME)) as
        | string[]
        | null;
      return addr ? Number(addr[1]) : undefined;
    } catch {
      return undefined;
    }
  };
  const named = () => cli(sentinelPort, "sentinel", "get-master-addr-by-name", MASTER_NAME);
  await until("the sentinel did not name the primary", () => named().includes(String(primaryPort)));
  // The sentinel must know the replica before a failover can promote it.
  await until("the sentinel did not discover the replica", () =>
    cli(sentinelPort, "sentinel", "replicas", MASTER_NAME).includes(String(replicaPort)),
  );
  return {
    primaryPort,
    replicaPort,
    sentinelPort,
    env: { REDIS_URL: "", REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`, REDIS_SENTINEL_MASTER: MASTER_NAME },
    async killPrimary() {
      const p = primary;
      primary = undefined;
      if (!p) return;
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGKILL");
      await exited;
    },
    masterPort,
    async stop() {
      sentinel.disconnect();
      await Promise.all(procs.map((p) => stopChild(p, 2_000)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Child processes for the sandbox, demo, load test, benchmarks and `npm test`'s Redis wrapper: free
 * ports, a throwaway Redis, TypeScript entry points run under tsx, readiness polling, and orderly stops
 * (each child by its own pid).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface Child {
  name: string;
  proc: ChildProcess;
  /** Where its stdout and stderr go. */
  logPath: string;
  /** SIGTERM, then SIGKILL after `graceMs` (5 s). */
  stop(graceMs?: number): Promise<void>;
}

/** Runs a repository TypeScript entry point (`node --import tsx <script>`), output to `logPath`. */
export function spawnTs(
  name: string,
  script: string,
  env: Record<string, string>,
  logPath: string,
  args: string[] = [],
  nodeArgs: string[] = [],
): Child {
  return spawnNode(name, [...nodeArgs, "--import", "tsx", join(REPO_ROOT, script), ...args], env, logPath);
}

/**
 * Node's flags for the webhook, as `npm start` and the image's CMD give them (test/production/
 * signal.test.ts holds the three together): none, V8's defaults.
 */
export const WEBHOOK_NODE_FLAGS: string[] = [];

/** Whether this process has run the build check (once per run; see ensureBuilt). */
let builtThisRun = false;

/**
 * `dist/` as `npm start` runs it: `scripts/build.mjs --if-stale`, once per process (every webhook
 * instance, worker restart and kill-and-start, and every benchmark variant, runs the same build).
 */
export function ensureBuilt(): void {
  if (builtThisRun) return;
  const built = spawnSync(process.execPath, [join(REPO_ROOT, "scripts/build.mjs"), "--if-stale"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr || built.stdout}`);
  builtThisRun = true;
}

/**
 * Runs the webhook as `npm start` does: the TypeScript build (`dist/`, built first when stale), no
 * tsx. What a load test measures should be what is deployed: under tsx every function gets esbuild's
 * `__name` wrapper (keepNames), a few percent of the quote path's CPU that production never pays.
 */
export function spawnBuiltWebhook(
  name: string,
  env: Record<string, string>,
  logPath: string,
  nodeArgs: string[] = [],
): Child {
  ensureBuilt();
  return spawnWebhookBuild(REPO_ROOT, name, env, logPath, nodeArgs);
}

/**
 * Runs the build in `root`'s `dist/` (this repository's, or another checkout's, already built) as
 * `npm start` does: Node's production flags, no tsx.
 */
export function spawnWebhookBuild(
  root: string,
  name: string,
  env: Record<string, string>,
  logPath: string,
  nodeArgs: string[] = [],
): Child {
  return spawnNode(name, [...WEBHOOK_NODE_FLAGS, ...nodeArgs, join(root, "dist/src/main.js")], env, logPath);
}

function spawnNode(name: string, argv: string[], env: Record<string, string>, logPath: string): Child {
  return spawnLogged(name, process.execPath, argv, env, logPath);
}

/**
 * Runs `command` from the repository root with this environment plus `env`, its stdout and stderr
 * appended to `logPath`.
 */
export function spawnLogged(
  name: string,
  command: string,
  argv: string[],
  env: Record<string, string>,
  logPath: string,
): Child {
  mkdirSync(dirname(logPath), { recursive: true });
  // The child writes straight to the file: piping through this process would bill its log volume
  // to whoever spawned it (the load generator).
  const fd = openSync(logPath, "a");
  const proc = spawn(command, argv, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  return { name, proc, logPath, stop: (graceMs?: number) => stopChild(proc, graceMs) };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export function stopChild(proc: ChildProcess, graceMs = 5_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
    proc.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill("SIGTERM");
  });
}

/** Polls `url` until it answers 200, the child exits, or the deadline passes. */
export async function waitForHttp(url: string, child: Child | undefined, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.proc.exitCode !== null || child.proc.signalCode !== null)) {
      throw new Error(
        `${child.name} exited (code ${child.proc.exitCode}) before it was ready; see ${child.logPath}`,
      );
    }
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (r.status === 200) return;
    } catch {}
    if (Date.now() > until)
      throw new Error(`${url} not ready within ${timeoutMs} ms${child ? `; see ${child.logPath}` : ""}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/**
 * A Redis for this run: REDIS_URL when given, else a throwaway redis-server (no persistence). With
 * `socket`, always a throwaway server (only a server started here offers a socket), listening on a
 * unix socket in its folder as well: `url` names that (`unix:///tmp/rfq-redis-.../redis.sock`). With
 * `own`, always a throwaway server over loopback TCP, even when REDIS_URL is set.
 */
export async function startRedis(opts: { socket?: boolean; own?: boolean } = {}): Promise<{
  url: string;
  /** With `socket`: the same server over loopback TCP (it listens on both). */
  tcpUrl?: string;
  stop(): Promise<void>;
  owned: boolean;
  pid?: number;
}> {
  if (process.env.REDIS_URL && !opts.socket && !opts.own)
    return { url: process.env.REDIS_URL, owned: false, stop: async () => {} };
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      "redis-server was not found, and REDIS_URL is not set.\n" +
        "Install Redis (Debian/Ubuntu: `sudo apt-get install -y redis-server`; macOS: `brew install redis`)\n" +
        "or point at a running server: REDIS_URL=redis://127.0.0.1:6379",
    );
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rfq-redis-"));
  const socketPath = join(dir, "redis.sock");
  const proc = spawn(
    "redis-server",
    [
      ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
      ...(opts.socket ? ["--unixsocket", socketPath, "--unixsocketperm", "700"] : []),
    ],
    { stdio: "ignore" },
  );
  const until = Date.now() + 10_000;
  for (;;) {
    const r = spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" });
    if (r.stdout?.trim() === "PONG") break;
    if (Date.now() > until) {
      proc.kill("SIGKILL");
      throw new Error(`redis-server did not answer on port ${port} within 10 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: opts.socket ? `unix://${socketPath}` : `redis://127.0.0.1:${port}`,
    ...(opts.socket ? { tcpUrl: `redis://127.0.0.1:${port}` } : {}),
    owned: true,
    ...(proc.pid !== undefined ? { pid: proc.pid } : {}),
    stop: async () => {
      await stopChild(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True when `port` can be bound on loopback right now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

/**
 * A port p for a Redis Cluster node: a node also listens on p + 10000 (the cluster bus), so both must
 * be free and below 65536. Random in 20000-55535, away from the usual ephemeral range's top.
 */
export async function freeClusterPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const p = 20_000 + Math.floor(Math.random() * 35_535);
    if (taken.has(p) || taken.has(p + 10_000) || taken.has(p - 10_000)) continue;
    if ((await portFree(p)) && (await portFree(p + 10_000))) return p;
  }
  throw new Error("no free port pair (p, p + 10000) for a Redis Cluster node");
}

function redisCli(args: string[]): string {
  const r = spawnSync("redis-cli", args, { encoding: "utf8", timeout: 10_000 });
  return `${r.stdout ?? ""}${r.stderr ?? ""}`;
}

export interface RedisClusterHandle {
  /** "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3": the REDIS_CLUSTER_NODES form. */
  nodes: string;
  ports: number[];
  /** The redis-server processes (for CPU accounting). */
  pids: number[];
  stop(): Promise<void>;
}

/**
 * A throwaway three-master Redis Cluster (no replicas, no persistence): three `redis-server
 * --cluster-enabled yes` on free port pairs, joined by `redis-cli --cluster create`, ready once every
 * node reports `cluster_state:ok`. Needs nothing beyond redis-server and redis-cli.
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterHandle> {
  const ports: number[] = [];
  const taken = new Set<number>();
  for (let i = 0; i < masters; i++) {
    const p = await freeClusterPort(taken);
    ports.push(p);
    taken.add(p);
  }
  const dir = mkdtempSync(join(tmpdir(), "rfq-redis-cluster-"));
  const procs = ports.map((port) => {
    const nodeDir = join(dir, String(port));
    mkdirSync(nodeDir);
    return spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "2000",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        nodeDir,
      ],
      { stdio: "ignore" },
    );
  });
  const stop = async () => {
    await Promise.all(procs.map((p) => stopChild(p)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const until = Date.now() + 15_000;
    const waitFor = async (what: string, ok: () => boolean) => {
      while (!ok()) {
        if (Date.now() > until) throw new Error(`redis cluster on ports ${ports.join(", ")}: ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await waitFor("a node did not answer PING within 15 s", () =>
      ports.every((p) => redisCli(["-p", String(p), "ping"]).trim() === "PONG"),
    );
    const created = redisCli([
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${p}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    if (!created.includes("All 16384 slots covered")) {
      throw new Error(`redis-cli --cluster create failed:\n${created}`);
    }
    await waitFor("not cluster_state:ok on every node within 15 s", () =>
      ports.every((p) => redisCli(["-p", String(p), "cluster", "info"]).includes("cluster_state:ok")),
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(","),
    ports,
    pids: procs.map((p) => p.pid).filter((p): p is number => p !== undefined),
    stop,
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc; undefined where unavailable. */
export function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(rest[11]) + Number(rest[12]);
    return ticks / CLOCK_TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds a process has used so far, to the nanosecond: the sum over its threads of the time the
 * scheduler ran them (`/proc/<pid>/task/<tid>/schedstat`, user and kernel alike), where /proc's
 * utime and stime count whole 10 ms ticks. Threads that have exited are no longer counted. Falls
 * back to `cpuSecondsOf` where schedstat is unavailable.
 */
export function preciseCpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  if (!existsSync(`/proc/${pid}/schedstat`)) return cpuSecondsOf(pid);
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // A thread that exited since the listing.
      }
    }
  } catch {
    return undefined;
  }
  return ns / 1e9;
}

/** `preciseCpuSecondsOf` summed over a process and all its descendants (a server and its workers). */
export function treeCpuSeconds(root: number): number {
  return [root, ...descendantPids(root)].reduce((a, p) => a + (preciseCpuSecondsOf(p) ?? 0), 0);
}

/**
 * A process's resident memory now and at its peak (VmRSS and VmHWM in /proc/<pid>/status, bytes);
 * undefined where unavailable.
 */
export function residentMemoryOf(
  pid: number | undefined,
): { rssBytes: number; peakBytes: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
      return m ? Number(m[1]) * 1024 : undefined;
    };
    const rssBytes = kb("VmRSS");
    const peakBytes = kb("VmHWM");
    return rssBytes === undefined || peakBytes === undefined ? undefined : { rssBytes, peakBytes };
  } catch {
    return undefined;
  }
}

/** Every descendant of a process (children, their children, ...), from /proc; empty where unavailable. */
export function descendantPids(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      let children = "";
      try {
        children = readFileSync(`/proc/${p}/task/${t}/children`, "utf8");
      } catch {}
      for (const c of children.split(" ").filter(Boolean).map(Number)) {
        out.push(c);
        visit(c);
      }
    }
  };
  visit(pid);
  return out;
}

/**
 * The descendants of a process that run this node binary: a webhook's node:cluster workers, without
 * the helpers a server under tsx also has as children (esbuild's service, started when tsx's cache is
 * cold), which are not workers.
 */
export function nodeDescendantPids(pid: number): number[] {
  const node = realpathSync(process.execPath);
  return descendantPids(pid).filter((p) => {
    try {
      return readlinkSync(`/proc/${p}/exe`) === node;
    } catch {
      return false; // gone meanwhile
    }
  });
}

/** USER_HZ: 100 on every mainstream Linux build. */
const CLOCK_TICKS_PER_S = 100;

/**
 * The machine's CPU seconds so far, all cores (/proc/stat): `busy` (user, nice, system, irq, softirq
 * and steal) and, of it, `steal`, the time the hypervisor gave this machine's cores to another guest
 * (a stall every process here sees at once); undefined where unavailable.
 */
export function machineCpuSeconds(): { busy: number; steal: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce((a: number, b) => a + (b ?? 0), 0);
    return { busy: busy / CLOCK_TICKS_PER_S, steal: (steal ?? 0) / CLOCK_TICKS_PER_S };
  } catch {
    return undefined;
  }
}

/** The folder holding PostgreSQL's server binaries (initdb, pg_ctl), newest version first; undefined if none. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  const onPath = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  return onPath ? dirname(onPath) : undefined;
}

/**
 * A throwaway PostgreSQL server for the ledger's tests: initdb into a temporary folder, then pg_ctl on
 * a free loopback port (no fsync; trust authentication, loopback only), stopped and removed by `stop`.
 * Never the machine's own server. initdb refuses to run as root, so as root both run as the
 * `postgres` user (Debian's package creates it), else `nobody`, through runuser.
 */
export async function startPostgres(): Promise<{
  url: string;
  stop(): Promise<void>;
  /**
   * Stops the server, keeping its data (a PostgreSQL outage); `resume` starts it again on its port.
   * Both wait for pg_ctl without blocking this process (a load generator keeps sending meanwhile).
   */
  halt(): Promise<void>;
  resume(): Promise<void>;
  pid?: number;
}> {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error(
      "PostgreSQL's server binaries (initdb, pg_ctl) were not found.\n" +
        "Install them (Debian/Ubuntu: `sudo apt-get install -y postgresql`; macOS: `brew install postgresql`).",
    );
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rfq-pg-"));
  const data = join(dir, "data");
  let asUser: string | undefined;
  if (process.getuid?.() === 0) {
    asUser = spawnSync("id", ["-u", "postgres"]).status === 0 ? "postgres" : "nobody";
    const ids = spawnSync("id", ["-u", asUser], { encoding: "utf8" }).stdout.trim();
    const gid = spawnSync("id", ["-g", asUser], { encoding: "utf8" }).stdout.trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asUser ? ["runuser", ["-u", asUser, "--", cmd, ...args]] : [cmd, args];
    const r = spawnSync(file, argv, { encoding: "utf8", cwd: dir, timeout: 120_000 });
    if (r.error || r.status !== 0) {
      throw new Error(
        `${cmd} ${args[0] ?? ""} failed: ${r.error?.message ?? ""}${r.stderr ?? ""}${r.stdout ?? ""}`,
      );
    }
  };
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const startArgs = ["-D", data, "-l", join(dir, "server.log"), "-o", opts, "-w", "-t", "60", "start"];
  const runAsync = (cmd: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const [file, argv] = asUser ? ["runuser", ["-u", asUser, "--", cmd, ...args]] : [cmd, args];
      const child = spawn(file, argv, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`${cmd} ${args.at(-1)} failed (${code}): ${stderr}`)),
      );
    });
  try {
    run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]);
    run(join(bin, "pg_ctl"), startArgs);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  const pidLine = (() => {
    try {
      return Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      return undefined;
    }
  })();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    ...(pidLine ? { pid: pidLine } : {}),
    halt: () => runAsync(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"]),
    resume: () => runAsync(join(bin, "pg_ctl"), startArgs),
    stop: async () => {
      try {
        run(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

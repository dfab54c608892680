/**
 * The production start receives signals: the compiled service, started with the Dockerfile's own
 * ENTRYPOINT and CMD (read from the Dockerfile, so the test follows the image), is sent SIGTERM the way
 * `docker stop` sends it (to PID 1), and must stop its listener and exit 0 by itself.
 *
 * Stand-in for the container: no Docker daemon runs here, so the image's PID 1 is reproduced with
 * `unshare --pid --fork`: tini is PID 1 of a fresh PID namespace, with node as its only child, as in
 * the container. The service runs the paper setup (no RPC, Redis or key needed); the signal path is the
 * same in every mode. tini comes from Debian (`apt-get install tini`; .ci/run installs it); without it,
 * or without permission for a PID namespace, only the direct `node` start is tested.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { WEBHOOK_NODE_FLAGS } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const dataDir = fileTempDir("signal");

/** The JSON-array form of a Dockerfile instruction, e.g. CMD ["node", "dist/src/main.js"]. */
function instruction(name: "CMD" | "ENTRYPOINT"): string[] {
  const line = readFileSync(join(ROOT, "Dockerfile"), "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`Dockerfile has no ${name}`);
  return JSON.parse(line.slice(name.length + 1)) as string[];
}

const CMD = instruction("CMD");
const ENTRYPOINT = instruction("ENTRYPOINT");
const tini = ["/usr/bin/tini", "/usr/local/bin/tini"].find((p) => existsSync(p));
const pidNamespace =
  process.platform === "linux" &&
  spawnSync("unshare", ["--pid", "--fork", "--kill-child", "true"], { stdio: "ignore" }).status === 0;

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `argv` in the repository (where dist/ was built) and waits for the listening banner. */
async function start(argv: string[]): Promise<Started> {
  const [cmd, ...args] = argv as [string, ...string[]];
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: "production",
      PORT: "0",
      HOST: "127.0.0.1",
      ADMIN_PORT: "0",
      DATA_DIR: dataDir,
      LOG_LEVEL: "info",
      // The embedded ledger's first initdb takes seconds of CPU; this test is about signals.
      LEDGER: "off",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m) return { child, port: Number(m[1]), output: () => out, exited };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`did not start (exit ${child.exitCode}):\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** GET /health on a fresh connection that is closed after the answer (no keep-alive left behind). */
function health(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/health", agent: false, headers: { connection: "close" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.on("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.on("error", () => resolve(true));
  });
}

/** Host PIDs of a process's children (Linux). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(() => {
  // The image runs what `npm run build` compiled; build it unless dist/ is already current.
  execFileSync(process.execPath, [join(ROOT, "scripts", "build.mjs"), "--if-stale"], {
    cwd: ROOT,
    stdio: "inherit",
  });
}, 240_000);

describe("production start and SIGTERM", () => {
  it("the image's CMD is node running the compiled service directly, under tini", () => {
    expect(CMD).toEqual(["node", ...WEBHOOK_NODE_FLAGS, "dist/src/main.js"]);
    expect(ENTRYPOINT).toEqual(["/usr/bin/tini", "--"]);
    expect(existsSync(join(ROOT, "dist", "src", "main.js"))).toBe(true);
  });

  it("npm start runs node with the image's flags (WEBHOOK_NODE_FLAGS), as the load test runs it", () => {
    const start = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start as string;
    expect(start).toBe("exec sh scripts/start.sh");
    const script = readFileSync(join(ROOT, "scripts", "start.sh"), "utf8");
    expect(script).toContain(
      `\nexec ${["node", ...WEBHOOK_NODE_FLAGS, "dist/src/main.js"].join(" ")} "$@"\n`,
    );
  });

  it("node dist/src/main.js stops serving and exits 0 on SIGTERM", async () => {
    const s = await start(CMD);
    expect(await health(s.port)).toBe(200);
    s.child.kill("SIGTERM");
    const { code, signal } = await s.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(s.output()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down"/);
    expect(await refusesConnections(s.port)).toBe(true);
  });

  it.runIf(tini && pidNamespace)(
    "as in the container (tini as PID 1, node its child), SIGTERM to PID 1 reaches node, which exits 0",
    async () => {
      const entry = [tini as string, ...ENTRYPOINT.slice(1)];
      const s = await start(["unshare", "--pid", "--fork", "--kill-child", ...entry, ...CMD]);
      // unshare -> tini (PID 1 inside) -> node: find the host PIDs of tini and node.
      const tiniPid = childrenOf(s.child.pid as number)[0] as number;
      const nodePid = childrenOf(tiniPid)[0] as number;
      expect(readFileSync(`/proc/${tiniPid}/cmdline`, "utf8")).toContain("tini");
      expect(readFileSync(`/proc/${nodePid}/cmdline`, "utf8").split("\0").slice(0, CMD.length)).toEqual(CMD);
      expect(readFileSync(`/proc/${tiniPid}/status`, "utf8")).toMatch(/NSpid:\s+\d+\s+1\n/);
      expect(await health(s.port)).toBe(200);

      process.kill(tiniPid, "SIGTERM"); // what `docker stop` does
      const { code, signal } = await s.exited;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(s.output()).toMatch(/"signal":"SIGTERM".*"msg":"shutting down"/);
      expect(alive(nodePid)).toBe(false);
      expect(await refusesConnections(s.port)).toBe(true);
    },
  );
});

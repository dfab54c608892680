/**
 * The webhook as its own process (`node --import tsx src/main.ts`, signals delivered to node itself,
 * as under an init in a container), for tests about start-up and shutdown; and `npm run loadtest` as
 * its own process (`node --import tsx sandbox/loadtest/main.ts`). Output is captured.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../tooling/processes.ts";

export interface CapturedProcess {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) and when it happened (ms epoch). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
}

export type WebhookProcess = CapturedProcess;

/** `node --import tsx <script> <args>` from the repository root, stdout and stderr captured. */
function spawnCaptured(
  script: string,
  args: string[],
  env: Record<string, string>,
  opts: { ownGroup?: boolean } = {},
): CapturedProcess {
  const proc = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, script), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own (its pid), which everything it starts joins and keeps when orphaned.
    detached: opts.ownGroup === true,
  });
  let out = "";
  let err = "";
  proc.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  proc.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>(
    (resolve) => proc.once("exit", (code, signal) => resolve({ code, signal, atMs: Date.now() })),
  );
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/**
 * The load test with its own stack (a throwaway redis-server, not REDIS_URL or a cluster from the
 * test's environment, unless `env` sets them). `ownGroup`: in a process group of its own (the group's
 * id is its pid), so that what it started can be found by that group in /proc even once orphaned.
 */
export function startLoadtest(
  args: string[],
  opts: { ownGroup?: boolean; env?: Record<string, string> } = {},
): CapturedProcess {
  const env = { REDIS_URL: "", REDIS_CLUSTER_NODES: "", ...opts.env };
  return spawnCaptured("sandbox/loadtest/main.ts", args, env, opts);
}

/** Starts it; ADMIN_PORT 0 (any free port) unless given, so parallel tests never collide on 8081. */
export function startWebhook(env: Record<string, string>): WebhookProcess {
  const dataDir = mkdtempSync(join(tmpdir(), "rfq-webhook-"));
  return spawnCaptured("src/main.ts", [], {
    REDIS_URL: "",
    RPC_URL: "",
    // The paper setup on purpose: tests give it Redis or a key without RPC_URL (config/load.ts).
    PAPER: "1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    // No fill ledger: an embedded one would initdb into every fresh DATA_DIR (seconds of CPU each);
    // the ledger has its own suite (test/ledger/).
    LEDGER: "off",
    ADMIN_PORT: "0",
    ADMIN_HOST: "127.0.0.1",
    // One process unless a test asks for workers (production mode would default to every core).
    WORKERS: "1",
    ...env,
  });
}

/** The signer service (`npm run signer`) as its own process, on the settings given. */
export function startSignerProcess(env: Record<string, string>): CapturedProcess {
  return spawnCaptured("src/signer/main.ts", [], { LOG_LEVEL: "warn", ...env });
}

/** JSON log lines the process wrote to stdout. */
export function logLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A listening socket's backlog as the kernel holds it (`ss`'s Send-Q for a listener; iproute2). */
export function kernelBacklog(port: number): number {
  const line = execFileSync("ss", ["-ltnH", `sport = :${port}`], { encoding: "utf8" }).trim();
  return Number(line.split(/\s+/)[2]);
}

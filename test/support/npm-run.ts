/**
 * Runs an npm script as an operator runs it (`npm run -s <script> -- <args>`), asynchronously, so
 * servers in the test's own process keep serving. The child sees PATH, HOME, LOG_LEVEL=silent and
 * `env` (which may override LOG_LEVEL), nothing else of the test's environment. It is killed after
 * `timeoutMs` (90 s), so a command that hangs fails its test instead of the whole run.
 */
import { spawn } from "node:child_process";
import { REPO_ROOT } from "../../tooling/processes.ts";

export interface NpmRunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function npmRun(
  script: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 90_000,
): Promise<NpmRunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "-s", script, "--", ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

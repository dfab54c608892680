/**
 * What build is running, for the rfq_build_info metric: the package version and, when it can be
 * known, the git commit (GIT_SHA from the image build, else `git rev-parse` in a checkout). Never an
 * empty value: "unknown" when there is no way to tell.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface BuildInfo {
  version: string;
  gitSha: string;
  node: string;
}

let cached: BuildInfo | undefined;

export function buildInfo(env: Record<string, string | undefined> = process.env): BuildInfo {
  if (cached) return cached;
  let version = "unknown";
  try {
    version =
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version?: string }).version ??
      version;
  } catch {
    // a packaged build without package.json beside it
  }
  let gitSha = env.GIT_SHA?.trim() || "";
  if (!gitSha) {
    const git = spawnSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 2_000,
    });
    gitSha = git.status === 0 ? git.stdout.trim() : "";
  }
  cached = { version, gitSha: gitSha || "unknown", node: process.version };
  return cached;
}

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
  // Sources run from the repository root; the compiled build from dist/, one level further down.
  for (const dir of [ROOT, join(ROOT, "..")]) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "rfq-maker-webhook" && pkg.version) {
        version = pkg.version;
        break;
      }
    } catch {
      // not this folder
    }
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

/**
 * Finding 8 of issue 61: Node 20 ran the service silently (`npm ci` warned EBADENGINE among the
 * install-script noise, `npm start` served, and once ignored SIGTERM for minutes). Below package.json's
 * `engines` both entry points refuse with one line, exit 78, before anything else runs: `npm start`'s
 * built entry (dist/src/main.js) and the signer's (`npm run signer`), each spawned under the machine's
 * own older Node when it has one (/usr/bin/node), and the check itself for the versions around the bound.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MIN_NODE, nodeVersionProblem } from "../../src/cli/node-version.ts";
import { ensureBuilt, REPO_ROOT } from "../../tooling/processes.ts";

const OLD_NODE = "/usr/bin/node";
const oldVersion = existsSync(OLD_NODE)
  ? execFileSync(OLD_NODE, ["-p", "process.versions.node"], { encoding: "utf8" }).trim()
  : undefined;
const older = oldVersion !== undefined && nodeVersionProblem(oldVersion) !== undefined;

const refusal = (version: string) =>
  `cannot start: Node.js ${version} is older than this service needs (>= 24.11, package.json "engines"): install Node.js 24 (.nvmrc; e.g. \`nvm install\`) and run it again`;

describe("finding 8: a Node.js below engines is refused with one line", () => {
  it("holds the bound package.json's engines states", () => {
    const engines = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).engines.node as string;
    expect(engines).toBe(`>=${MIN_NODE[0]}.${MIN_NODE[1]}`);
  });

  it("refuses 20.20.2 and 24.10.0, takes 24.11.0, 24.12.1 and 25.0.0", () => {
    expect(nodeVersionProblem("20.20.2")).toBe(refusal("20.20.2"));
    expect(nodeVersionProblem("24.10.0")).toBe(refusal("24.10.0"));
    for (const v of ["24.11.0", "24.12.1", "25.0.0", process.versions.node])
      expect(nodeVersionProblem(v), v).toBeUndefined();
  });

  // Builds dist/ first when stale, as npm start does.
  it.runIf(older)(
    "npm start's built entry under the machine's older Node: exit 78, that one line",
    {
      timeout: 240_000,
    },
    () => {
      ensureBuilt();
      const r = spawnSync(OLD_NODE, [join(REPO_ROOT, "dist", "src", "main.js")], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, PAPER: "1", PORT: "0", ADMIN_PORT: "0" },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(r.status).toBe(78);
      expect(r.stderr).toBe(`${refusal(oldVersion as string)}\n`);
      expect(r.stdout).toBe("");
    },
  );

  it.runIf(older)(
    "the signer's entry (npm run signer) under the machine's older Node: exit 78, that one line",
    {
      timeout: 60_000,
    },
    () => {
      const r = spawnSync(OLD_NODE, ["--import", "tsx", join(REPO_ROOT, "src", "signer", "main.ts")], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH },
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(r.status).toBe(78);
      expect(r.stderr).toBe(`${refusal(oldVersion as string)}\n`);
    },
  );
});

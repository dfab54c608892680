/**
 * The native-code check of `npm run check` (scripts/supply-chain.ts), run as the command it is against
 * small projects made here: a real package.json, package-lock.json and node_modules/ that `npm ls`
 * reads, with `.node` files where a native dependency has them. The last test runs it on this
 * repository as CI does.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileTempDir } from "../support/tmp.ts";

const SCRIPT = join(import.meta.dirname, "..", "..", "scripts", "supply-chain.ts");
const TSX = join(import.meta.dirname, "..", "..", "node_modules", "tsx", "dist", "cli.mjs");
const base = fileTempDir("supply-chain");
let n = 0;

interface Pkg {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  files?: string[];
  lock?: Record<string, unknown>;
  /** Locked but not installed on this machine (another platform's binary package). */
  notInstalled?: boolean;
}

/** A project whose lockfile and node_modules/ hold `packages` (key: location under node_modules). */
function project(
  packages: Record<string, Pkg & { dev?: boolean }>,
  rootDeps: Record<string, string>,
  devDeps: Record<string, string> = {},
) {
  const root = join(base, `p${n++}`);
  mkdirSync(root, { recursive: true });
  const pkg = { name: "fixture-service", version: "1.0.0", dependencies: rootDeps, devDependencies: devDeps };
  writeFileSync(join(root, "package.json"), JSON.stringify(pkg));
  const lockPackages: Record<string, unknown> = {
    "": { name: pkg.name, version: pkg.version, dependencies: rootDeps, devDependencies: devDeps },
  };
  for (const [loc, p] of Object.entries(packages)) {
    const name = loc.slice(loc.lastIndexOf("node_modules/") + 13);
    const version = p.version ?? "1.0.0";
    lockPackages[loc] = {
      version,
      ...(p.dev ? { dev: true } : {}),
      ...(p.dependencies ? { dependencies: p.dependencies } : {}),
      ...(p.optionalDependencies ? { optionalDependencies: p.optionalDependencies } : {}),
      ...p.lock,
    };
    if (p.notInstalled) continue;
    const dir = join(root, loc);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({
        name,
        version,
        dependencies: p.dependencies,
        optionalDependencies: p.optionalDependencies,
        ...(p.lock?.os ? { os: p.lock.os, cpu: p.lock.cpu } : {}),
      }),
    );
    for (const f of p.files ?? []) {
      mkdirSync(join(dir, f, ".."), { recursive: true });
      writeFileSync(join(dir, f), "not really ELF");
    }
  }
  writeFileSync(
    join(root, "package-lock.json"),
    JSON.stringify({
      name: pkg.name,
      version: pkg.version,
      lockfileVersion: 3,
      requires: true,
      packages: lockPackages,
    }),
  );
  return root;
}

function allowlist(root: string, addons: { package: string; reason: string }[]) {
  const file = join(root, "allow.json");
  writeFileSync(file, JSON.stringify({ addons }));
  return file;
}

function runCheck(root: string, allowFile: string): { code: number; out: string } {
  try {
    const out = execFileSync(process.execPath, [TSX, SCRIPT, "--root", root, "--allow", allowFile], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, out: `${err.stdout}${err.stderr}` };
  }
}

const REASON = "a reason long enough to say why this native code may run";

describe("native-code check (npm run check)", () => {
  it("passes a production tree whose only native code is allowlisted", () => {
    const root = project(
      {
        "node_modules/web-client": { dependencies: { speedup: "^1.0.0" } },
        "node_modules/speedup": { files: ["prebuilds/linux-x64/speedup.node"] },
      },
      { "web-client": "^1.0.0" },
    );
    const r = runCheck(root, allowlist(root, [{ package: "speedup", reason: REASON }]));
    expect(r.out).toContain("supply chain: ok (native code in production: speedup@1.0.0");
    expect(r.code).toBe(0);
  });

  it("fails on a newly added dependency that brings a .node addon, naming it and its dependency path", () => {
    const root = project(
      {
        "node_modules/web-client": { dependencies: { speedup: "^1.0.0" } },
        "node_modules/speedup": { files: ["prebuilds/linux-x64/speedup.node"] },
        "node_modules/new-sdk": { dependencies: { "old-bignum": "^1.1.0" } },
        "node_modules/old-bignum": { version: "1.1.5", files: ["build/Release/old_bignum.node"] },
      },
      { "web-client": "^1.0.0", "new-sdk": "^2.0.0" },
    );
    const r = runCheck(root, allowlist(root, [{ package: "speedup", reason: REASON }]));
    expect(r.code).toBe(1);
    expect(r.out).toContain("native code not in native-addons.json: old-bignum@1.1.5");
    expect(r.out).toContain("dependency path: fixture-service > new-sdk > old-bignum");
    expect(r.out).toContain("build/Release/old_bignum.node");
    expect(r.out).not.toContain("native code not in native-addons.json: speedup");
  });

  it("fails on a binding.gyp or an install script even before any .node file is built", () => {
    const root = project(
      {
        "node_modules/gyp-thing": { files: ["binding.gyp"] },
        "node_modules/scripted": { lock: { hasInstallScript: true } },
      },
      { "gyp-thing": "1.0.0", scripted: "1.0.0" },
    );
    const r = runCheck(root, allowlist(root, []));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/gyp-thing@1\.0\.0\n.*fixture-service > gyp-thing\n.*binding\.gyp/);
    expect(r.out).toMatch(/scripted@1\.0\.0\n.*fixture-service > scripted\n.*install script/);
  });

  it("fails on another platform's binary package that the image would install, though it is absent here", () => {
    const root = project(
      {
        "node_modules/fast-engine": { optionalDependencies: { "fast-engine-linux-arm64-gnu": "1.0.0" } },
        "node_modules/fast-engine-linux-arm64-gnu": {
          notInstalled: true,
          lock: { optional: true, os: ["linux"], cpu: ["arm64"], libc: ["glibc"] },
        },
      },
      { "fast-engine": "1.0.0" },
    );
    const r = runCheck(root, allowlist(root, []));
    expect(r.code).toBe(1);
    expect(r.out).toContain("fast-engine-linux-arm64-gnu@1.0.0");
    expect(r.out).toContain("fixture-service > fast-engine > fast-engine-linux-arm64-gnu");
    expect(r.out).toContain("platform package (linux, arm64, glibc)");
  });

  it("ignores native code in development dependencies (npm ci --omit=dev leaves them out)", () => {
    const root = project(
      {
        "node_modules/local-chain": { dev: true, files: ["local_chain.node"] },
        "node_modules/plain": {},
      },
      { plain: "1.0.0" },
      { "local-chain": "1.0.0" },
    );
    const r = runCheck(root, allowlist(root, []));
    expect(r.out).toContain("native code in production: none");
    expect(r.code).toBe(0);
  });

  it("fails on an allowlist entry whose package left the production tree, and on an entry without a reason", () => {
    const root = project({ "node_modules/plain": {} }, { plain: "1.0.0" });
    const stale = runCheck(root, allowlist(root, [{ package: "gone-addon", reason: REASON }]));
    expect(stale.code).toBe(1);
    expect(stale.out).toContain("gone-addon is allowed but no longer in the production tree");
    const bare = runCheck(root, allowlist(root, [{ package: "plain", reason: "" }]));
    expect(bare.code).toBe(1);
    expect(bare.out).toContain("addons.0.reason: say why plain may run native code");
  });

  it("fails on a lockfile that lacks an optional platform package, which npm ci would refuse", () => {
    const root = project(
      { "node_modules/fast-engine": { optionalDependencies: { "fast-engine-darwin-arm64": "1.0.0" } } },
      { "fast-engine": "1.0.0" },
    );
    const r = runCheck(root, allowlist(root, []));
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      "no entry for optional dependency fast-engine-darwin-arm64@1.0.0 (needed by node_modules/fast-engine)",
    );
  });

  it("--complete-lockfile adds the missing platform entry with its platform, and npm ci's check then passes", () => {
    const root = project(
      { "node_modules/fast-engine": { optionalDependencies: { "fast-engine-linux-arm64-musl": "1.2.3" } } },
      { "fast-engine": "1.0.0" },
    );
    const allow = allowlist(root, [{ package: "fast-engine-linux-arm64-musl", reason: REASON }]);
    const out = execFileSync(
      process.execPath,
      [TSX, SCRIPT, "--root", root, "--allow", allow, "--complete-lockfile"],
      { encoding: "utf8" },
    );
    expect(out).toContain("added fast-engine-linux-arm64-musl@1.2.3");
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));
    expect(lock.packages["node_modules/fast-engine-linux-arm64-musl"]).toEqual({
      version: "1.2.3",
      cpu: ["arm64"],
      libc: ["musl"],
      optional: true,
      os: ["linux"],
    });
    expect(runCheck(root, allow).code).toBe(0);
  });

  it("passes on this repository: its production native code is exactly what native-addons.json allows", () => {
    const repo = join(import.meta.dirname, "..", "..");
    const r = runCheck(repo, join(repo, "native-addons.json"));
    expect(r.out).toContain("supply chain: ok");
    expect(r.out).not.toMatch(/bigint-buffer|litesvm|esbuild/);
    expect(r.code).toBe(0);
  });
});

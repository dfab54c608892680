/**
 * Supply-chain checks run by `npm run check` (scripts/supply-chain.ts is the command):
 *
 * 1. Native code in production. Every package that `npm ci --omit=dev` installs from the lockfile (on
 *    any platform) or that is installed here as a production dependency (`npm ls --omit=dev --all
 *    --parseable`), and that carries native code, must be named in the allowlist
 *    (native-addons.json) with a reason. Native code is: a `*.node` file in the package, a
 *    `binding.gyp` (compiles one at install), an install script (lockfile `hasInstallScript`), or a
 *    platform restriction (lockfile `os`/`cpu`/`libc`: a prebuilt binary package, possibly for a
 *    platform this machine is not). A finding outside the allowlist fails with its dependency path;
 *    an allowlist entry whose package is gone fails too, so the list stays true.
 * 2. The lockfile is complete: every optional dependency of every locked package has its own entry.
 *    `npm ci` refuses a lockfile without them ("Missing: X from lock file").
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

interface LockEntry {
  name?: string;
  version?: string;
  dev?: boolean;
  optional?: boolean;
  hasInstallScript?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

interface Lockfile {
  name?: string;
  lockfileVersion?: number;
  packages: Record<string, LockEntry>;
}

export interface AllowEntry {
  package: string;
  reason: string;
}

export interface NativeFinding {
  /** Package name as installed (an npm alias shows under its alias). */
  name: string;
  version: string;
  /** node_modules location, relative to the project root. */
  location: string;
  /** `root > a > b > name`: how the production tree reaches it. */
  path: string;
  evidence: string[];
}

export interface CheckResult {
  findings: NativeFinding[];
  /** Findings whose package is not allowlisted. */
  unlisted: NativeFinding[];
  /** Allowlist entries with no finding. */
  stale: AllowEntry[];
  /** `name@spec (needed by X)` for each optional dependency without a lockfile entry. */
  lockfileMissing: string[];
}

const nameOf = (location: string) => location.slice(location.lastIndexOf("node_modules/") + 13);

/** Where `name`, required from the package at `from`, resolves in the lockfile (Node's lookup). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!dir) return undefined;
    const idx = dir.lastIndexOf("/node_modules/");
    dir = idx < 0 ? "" : dir.slice(0, idx);
  }
}

/** Dependency path (shortest, breadth-first from the root) to every production location. */
function productionPaths(lock: Lockfile, rootName: string): Map<string, string> {
  const { packages } = lock;
  const paths = new Map<string, string>([["", rootName]]);
  const queue = [""];
  while (queue.length) {
    const at = queue.shift() as string;
    const entry = packages[at];
    if (!entry) continue;
    // The root's devDependencies are what --omit=dev leaves out; a package's own are never installed.
    const deps = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies };
    for (const dep of Object.keys(deps)) {
      const loc = resolveIn(packages, at, dep);
      if (!loc || paths.has(loc) || packages[loc]?.dev) continue;
      paths.set(loc, `${paths.get(at)} > ${dep}`);
      queue.push(loc);
    }
  }
  paths.delete("");
  return paths;
}

/** `*.node` files under a package folder, not descending into its own node_modules. */
function nodeFiles(dir: string, base = dir, out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e === "node_modules") continue;
    const p = join(dir, e);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) nodeFiles(p, base, out);
    else if (e.endsWith(".node")) out.push(relative(base, p).split(sep).join("/"));
  }
  return out;
}

/** Production package folders that npm says are installed here (absolute paths). */
function installedProduction(root: string): string[] {
  let out: string;
  try {
    out = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (e) {
    // npm ls exits non-zero on problems such as a missing optional package, and still lists the tree.
    out = String((e as { stdout?: string }).stdout ?? "");
  }
  return out
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && l !== root);
}

export function loadAllowlist(file: string): AllowEntry[] {
  const raw = JSON.parse(readFileSync(file, "utf8")) as { addons?: unknown };
  if (!Array.isArray(raw.addons)) throw new Error(`${file}: addons: must be an array`);
  return raw.addons.map((a, i) => {
    const e = a as Partial<AllowEntry>;
    if (typeof e.package !== "string" || !e.package)
      throw new Error(`${file}: addons.${i}.package: required`);
    if (typeof e.reason !== "string" || e.reason.trim().length < 20) {
      throw new Error(`${file}: addons.${i}.reason: say why ${e.package} may run native code (20+ chars)`);
    }
    return { package: e.package, reason: e.reason };
  });
}

export function checkSupplyChain(root: string, allow: AllowEntry[]): CheckResult {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as Lockfile;
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: string };
  const rootName = pkg.name ?? "(root)";
  const paths = productionPaths(lock, rootName);

  // Installed production packages that the lockfile walk did not reach (a hand-installed package, or
  // a tree that differs from the lockfile) are checked too, under npm's own path.
  for (const dir of installedProduction(root)) {
    const loc = relative(root, dir).split(sep).join("/");
    if (!paths.has(loc)) paths.set(loc, `${rootName} > ${nameOf(loc)} (installed, not in the lockfile)`);
  }

  const findings: NativeFinding[] = [];
  for (const [loc, path] of paths) {
    const entry = lock.packages[loc] ?? {};
    const evidence: string[] = [];
    const dir = join(root, loc);
    if (existsSync(dir)) {
      for (const f of nodeFiles(dir)) evidence.push(f);
      if (existsSync(join(dir, "binding.gyp"))) evidence.push("binding.gyp (compiled at install)");
    }
    if (entry.hasInstallScript) evidence.push("install script");
    const platform = [...(entry.os ?? []), ...(entry.cpu ?? []), ...(entry.libc ?? [])];
    if (platform.length) evidence.push(`platform package (${platform.join(", ")})`);
    if (evidence.length) {
      findings.push({ name: nameOf(loc), version: entry.version ?? "?", location: loc, path, evidence });
    }
  }

  const allowed = new Set(allow.map((a) => a.package));
  const found = new Set(findings.map((f) => f.name));
  const lockfileMissing: string[] = [];
  for (const [loc, entry] of Object.entries(lock.packages)) {
    for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      if (!resolveIn(lock.packages, loc, dep))
        lockfileMissing.push(`${dep}@${spec} (needed by ${loc || rootName})`);
    }
  }
  return {
    findings,
    unlisted: findings.filter((f) => !allowed.has(f.name)),
    stale: allow.filter((a) => !found.has(a.package)),
    lockfileMissing,
  };
}

export function formatResult(r: CheckResult, allowFile: string): { ok: boolean; text: string } {
  const lines: string[] = [];
  for (const f of r.unlisted) {
    lines.push(
      `native code not in ${allowFile}: ${f.name}@${f.version}`,
      `  dependency path: ${f.path}`,
      `  found: ${f.evidence.join("; ")}`,
      `  remove the dependency, or add {"package": "${f.name}", "reason": "..."} to ${allowFile}`,
    );
  }
  for (const s of r.stale) {
    lines.push(
      `${allowFile}: ${s.package} is allowed but no longer in the production tree: remove the entry`,
    );
  }
  for (const m of r.lockfileMissing) {
    lines.push(
      `package-lock.json: no entry for optional dependency ${m}: npm ci would refuse the lockfile (tsx scripts/supply-chain.ts --complete-lockfile adds it)`,
    );
  }
  const ok = lines.length === 0;
  if (ok) {
    const names = r.findings.map((f) => `${f.name}@${f.version}`).join(", ");
    lines.push(`supply chain: ok (native code in production: ${names || "none"}; all allowlisted)`);
  }
  return { ok, text: lines.join("\n") };
}

const PLATFORM_NAME =
  /-(darwin|linux|win32|android|freebsd|openbsd|openharmony|aix|sunos)-(x64|arm64|arm|ia32|ppc64|s390x|riscv64|loong64)(?:-(gnu|musl|msvc|gnueabihf|musleabihf|eabi))?$/;

/**
 * Adds a lockfile entry for every optional platform package that `npm install` left out because the
 * registry does not have it (the platform is read from the package name, e.g. `x-linux-arm64-musl`).
 * `npm ci` then accepts the lockfile; on the platforms concerned it tries the package and, as for any
 * optional dependency that cannot be had, goes on without it. Returns the names added.
 */
export function completeLockfile(root: string): string[] {
  const file = join(root, "package-lock.json");
  const lock = JSON.parse(readFileSync(file, "utf8")) as Lockfile;
  const added: string[] = [];
  for (const [loc, entry] of Object.entries(lock.packages)) {
    for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      if (resolveIn(lock.packages, loc, dep)) continue;
      const m = PLATFORM_NAME.exec(dep);
      if (!m || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) {
        throw new Error(`${dep}@${spec} (needed by ${loc}): not a platform package with an exact version`);
      }
      const [, os, cpu, abi] = m;
      const libc = abi?.startsWith("musl") ? ["musl"] : abi?.startsWith("gnu") ? ["glibc"] : undefined;
      lock.packages[`node_modules/${dep}`] = {
        version: spec,
        cpu: [cpu as string],
        ...(entry.dev ? { dev: true } : {}),
        ...(libc ? { libc } : {}),
        optional: true,
        os: [os as string],
      };
      added.push(`${dep}@${spec}`);
    }
  }
  const sorted = Object.keys(lock.packages).sort((a, b) => a.localeCompare(b, "en"));
  lock.packages = Object.fromEntries(sorted.map((k) => [k, lock.packages[k] as LockEntry]));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  return added;
}

/**
 * Issue 61, finding 5: a key under config/ went into the image. `.dockerignore`'s `*keypair*.json` is
 * anchored at the context's root (Docker's patterns are), so a maker keypair saved in config/ was sent with
 * the context, and `scripts/build.mjs` copied every config/*.json into dist/config/, which the image
 * copies. No Docker engine runs here: the context is computed as Docker computes it from
 * `.dockerignore` (test/deploy/dockerignore.ts, a stand-in for moby/patternmatcher, says where it may
 * differ), over this checkout's files plus keys planted where a maker saves them; dist/config/ is
 * what `scripts/build.mjs` writes. Keys are also git-ignored at every depth (`git check-ignore`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript (it runs before anything is compiled), no declarations
import { copyShippedConfig, SHIPPED_CONFIG } from "../../scripts/build.mjs";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";
import { buildContext, excluded, parseDockerignore } from "./dockerignore.ts";

/** Where a maker (or a tool) leaves key material in a checkout. */
const PLANTED = [
  "config/maker-keypair.json",
  "config/keys/issuer-keypair.json",
  "src/maker-keypair.json",
  "data/sandbox/maker-keypair.json",
  "maker-keypair.json",
  "config/signer.pem",
  "deploy/tls/client.key",
  "config/.env",
  ".env.production",
];
const KEYLIKE = /(keypair[^/]*\.json|\.pem|\.key|\.p12|(^|\/)\.env(\.[^/]*)?)$/;

/** A JSON file holding a 64-byte Solana secret key (what `solana-keygen` writes). */
function holdsSecretKey(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) && v.length === 64 && v.every((n) => Number.isInteger(n) && n >= 0 && n < 256);
  } catch {
    return false;
  }
}

/** The sources of the Dockerfile's build-stage COPY lines (what the context must still hold). */
function copiedSources(): string[] {
  return readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("COPY ") && !l.includes("--from="))
    .flatMap((l) => l.slice(5).trim().split(/\s+/).slice(0, -1));
}

describe("finding 5: the image's build context holds no key", () => {
  const context = buildContext(REPO_ROOT, PLANTED);

  it("a key planted under config/, src/, data/ or the root is not in the context Docker computes from .dockerignore", () => {
    for (const p of PLANTED) expect(context, p).not.toContain(p);
    expect(context.filter((p) => KEYLIKE.test(p))).toEqual([]);
  });

  it("no file in the context holds a 64-byte secret key, whatever its name", () => {
    const withKeys = context
      .filter((p) => p.endsWith(".json") && !PLANTED.includes(p))
      .filter((p) => holdsSecretKey(readFileSync(join(REPO_ROOT, p), "utf8")));
    expect(withKeys).toEqual([]);
  });

  it("still holds everything the Dockerfile copies (and nothing of sandbox/, test/ or docs/)", () => {
    for (const src of copiedSources())
      expect(
        context.some((p) => p === src || p.startsWith(`${src}/`)),
        `${src} (a COPY source)`,
      ).toBe(true);
    for (const f of [
      "src/main.ts",
      "config/default.json",
      "scripts/build.mjs",
      "src/rfq-v2/market_maker.proto",
    ])
      expect(context).toContain(f);
    expect(context.filter((p) => /^(sandbox|test|docs|mutation|bench)\//.test(p))).toEqual([]);
  });

  it("the matcher stand-in anchors as Docker does: `*keypair*.json` matches at the root only, `**/` at any depth", () => {
    const rootOnly = parseDockerignore("*keypair*.json");
    expect(excluded(rootOnly, "maker-keypair.json")).toBe(true);
    expect(excluded(rootOnly, "config/maker-keypair.json")).toBe(false);
    const anyDepth = parseDockerignore("**/*keypair*.json");
    expect(excluded(anyDepth, "maker-keypair.json")).toBe(true);
    expect(excluded(anyDepth, "config/a/maker-keypair.json")).toBe(true);
    // A folder's pattern covers what is inside it; the last matching line wins.
    const folder = parseDockerignore("data/\n*\n!src\n**/*.key");
    expect(excluded(folder, "data/sandbox/x.json")).toBe(true);
    expect(excluded(folder, "src/main.ts")).toBe(false);
    expect(excluded(folder, "src/tls/a.key")).toBe(true);
  });
});

describe("finding 5: dist/config/ gets the named configuration files only", () => {
  it("copyShippedConfig copies default.json and leaves a keypair and a production config saved in config/ behind", () => {
    const dir = fileTempDir("shipped-config");
    const from = join(dir, "config");
    mkdirSync(from);
    writeFileSync(join(from, "default.json"), readFileSync(join(REPO_ROOT, "config/default.json")));
    writeFileSync(join(from, "maker-keypair.json"), JSON.stringify(Array.from(Keypair.generate().secretKey)));
    writeFileSync(join(from, "production.json"), "{}");
    copyShippedConfig(from, join(dir, "out"));
    expect(readdirSync(join(dir, "out")).sort()).toEqual(["default.json"]);
    expect(SHIPPED_CONFIG).toEqual(["default.json"]);
  });

  it("`npm run build` (scripts/build.mjs) leaves exactly SHIPPED_CONFIG's JSON files in dist/config/", {
    timeout: 240_000,
  }, () => {
    execFileSync(process.execPath, [join(REPO_ROOT, "scripts/build.mjs"), "--if-stale"], {
      cwd: REPO_ROOT,
      stdio: "inherit",
    });
    const json = readdirSync(join(REPO_ROOT, "dist/config")).filter((f) => f.endsWith(".json"));
    expect(json.sort()).toEqual([...SHIPPED_CONFIG].sort());
  });
});

describe("finding 5: keys are git-ignored at every depth", () => {
  it.each([
    "maker-keypair.json",
    "config/maker-keypair.json",
    "a/b/taker-keypair.json",
    "config/tls.pem",
    "x/y.key",
  ])("git check-ignore ignores %s", (path) => {
    const r = spawnSync("git", ["check-ignore", "--no-index", "-q", path], { cwd: REPO_ROOT });
    expect(r.status).toBe(0);
  });
});

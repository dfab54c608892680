/**
 * Finding 8 of issue 47: errors a person can act on. Each case is one item of the finding, seen on
 * main: a `.env` file silently ignored (now read, as every entry point reads it); a near-miss name not
 * named in the refusal it causes (settings missing from the documentation: test/layout/config-doc.test.ts);
 * REDIS_URL without a scheme given as "Invalid URL"; EADDRINUSE as a
 * stack trace; the banner naming dist/config/default.json while the maker edits config/default.json.
 * The start-up cases run the compiled service (`npm start`'s dist/src/main.js) as its own process.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../config/load.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";
import { fileTempDir } from "../support/tmp.ts";

beforeAll(() => {
  execFileSync(process.execPath, [join(REPO_ROOT, "scripts", "build.mjs"), "--if-stale"], {
    cwd: REPO_ROOT,
    stdio: "inherit",
  });
}, 240_000);

function refusal(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("started");
}

/** Runs the compiled service from `cwd` until it prints its banner or exits; then stops it. */
async function startBuilt(
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(REPO_ROOT, "dist", "src", "main.js")], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOST: "127.0.0.1",
      PORT: "0",
      ADMIN_PORT: "0",
      LEDGER: "off",
      DATA_DIR: fileTempDir("errors-data"),
      ...env,
    },
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
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const until = Date.now() + 60_000;
  while (!stderr.includes("/permissioned-tokens") && child.exitCode === null && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  if (child.exitCode === null) child.kill("SIGTERM");
  const code = await exited;
  return { code, stdout, stderr };
}

describe("finding 8: errors a person can act on", () => {
  it("reads a .env file in the working directory (the environment's own values win) and names it and what it set in the banner", {
    timeout: 90_000,
  }, async () => {
    const dir = fileTempDir("dotenv");
    const path = join(dir, ".env");
    writeFileSync(path, "API_KEY=from-dotenv-0123456789\nPAPER=1\nHOST=10.255.255.1\n");
    const r = await startBuilt(dir, {});
    expect(r.stderr).toContain(`.env:        ${path} (set API_KEY, PAPER; the environment's own values win)`);
    expect(r.stderr).toContain("api key:     required (X-API-KEY)");
    expect(r.stderr).toMatch(/listening on http:\/\/127\.0\.0\.1:/);
    expect(r.stdout).not.toContain("from-dotenv-0123456789");
    expect(r.stderr).not.toContain("from-dotenv-0123456789");
  });

  it("prints the banner on stderr: stdout holds JSON log lines only (issue 61, finding 11: the banner was among them)", {
    timeout: 90_000,
  }, async () => {
    const r = await startBuilt(REPO_ROOT, {});
    expect(r.stderr).toMatch(/^RFQ maker webhook listening on http:\/\/127\.0\.0\.1:/m);
    const lines = r.stdout.split("\n").filter((l) => l.trim() !== "");
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });

  it("names the config file the maker edits (config/default.json), not the compiled copy", {
    timeout: 90_000,
  }, async () => {
    const r = await startBuilt(REPO_ROOT, {});
    expect(r.stderr).toContain(`config:      ${join(REPO_ROOT, "config", "default.json")}\n`);
  });

  it("prints the pairs in the banner in tokens and USD with spreads, caps, price, source and age (finding 7)", {
    timeout: 90_000,
  }, async () => {
    const r = await startBuilt(REPO_ROOT, {});
    expect(r.stderr).toMatch(
      /\n {2}pairs:\n {4}PAIR\s+SIZE\s+SIZE \(USD\)\s+SPREADS\s+CAPS\s+PRICE\s+SOURCE\s+PRICE AGE\n/,
    );
    expect(r.stderr).toMatch(
      /\n {4}SOL\/USDC\s+0\.001 - 500 SOL\s+\$0\.18 - \$90,125\.00\s+5 bps to 10 SOL, 10 bps to 100 SOL, 25 bps to 500 SOL\s+none\s+180\.250000\s+static \(static\)\s+static\n/,
    );
  });

  it("gives EADDRINUSE as one line naming PORT and the address, exit 69, no stack trace", {
    timeout: 90_000,
  }, async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await startBuilt(REPO_ROOT, { PORT: String(port) });
      expect(r.code).toBe(69);
      const lines = r.stderr.split("\n").filter((l) => l.trim());
      expect(lines).toEqual([
        `cannot start: PORT: 127.0.0.1:${port}: address in use (EADDRINUSE): another process listens there; stop it or set another PORT`,
      ]);
      expect(r.stdout).not.toMatch(/\n\s+at /);
    } finally {
      busy.close();
    }
  });

  it.runIf(process.getuid?.() === 0 && existsSync("/usr/bin/setpriv"))(
    "names the user a keypair file is not readable by (EACCES), as the image's user meets it",
    { timeout: 90_000 },
    async (ctx) => {
      // A checkout under a directory only root may enter (git clone into `mktemp -d`) is out of
      // `nobody`'s reach altogether: there the refusal cannot be the key file's, so the case is skipped.
      const main = join(REPO_ROOT, "dist", "src", "main.js");
      const reach = spawnSync(
        "setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", "0"],
        { cwd: "/", encoding: "utf8", timeout: 30_000 },
      );
      const readable = spawnSync(
        "setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", "test", "-r", main],
        { encoding: "utf8", timeout: 30_000 },
      );
      if (reach.status !== 0 || readable.status !== 0)
        ctx.skip("the checkout (or node) is not reachable by uid 65534 here");
      const dir = fileTempDir("eacces");
      chmodSync(dir, 0o777);
      const key = join(dir, "maker.json");
      writeFileSync(key, JSON.stringify(Array.from(Keypair.generate().secretKey)), { mode: 0o600 });
      // As `nobody`, the way the image's `node` user meets a key file owned by someone else.
      const run = spawnSync(
        "setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, main],
        {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env.PATH,
            PAPER: "1",
            MAKER_KEYPAIR: key,
            DATA_DIR: dir,
            LEDGER: "off",
            PORT: "0",
            ADMIN_PORT: "0",
          },
          encoding: "utf8",
          timeout: 60_000,
        },
      );
      expect(run.status).toBe(69);
      expect(run.stderr.trim()).toMatch(
        new RegExp(
          `^cannot start: MAKER_KEYPAIR: .*${key}.*EACCES.*\\(not readable by user nobody \\(uid 65534, gid 65534\\): chown it to that uid, mode 0600\\)$`,
        ),
      );
    },
  );

  it("names a near-miss variable in the refusal it causes (REDIS_ULR for REDIS_URL)", () => {
    const message = refusal({
      RPC_URL: "https://rpc.example",
      MAKER_KEYPAIR: "/k.json",
      REDIS_ULR: "redis://r",
    });
    expect(message).toContain("env: REDIS_ULR: not a setting of this service (did you mean REDIS_URL?)");
  });

  it("says REDIS_URL has no scheme, with the URL to write instead of 'Invalid URL'", () => {
    expect(refusal({ REDIS_URL: "127.0.0.1:6379", PAPER: "1" })).toBe(
      "env: REDIS_URL: 127.0.0.1:6379: no scheme: write redis://127.0.0.1:6379 (rediss:// for TLS, unix:///path/to/redis.sock for a socket)",
    );
  });
});

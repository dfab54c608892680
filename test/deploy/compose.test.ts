/**
 * Finding 3 of issue 47 and finding 6 of issue 61: the compose file starts, with the kill switch on,
 * a bounded Redis and a documented way in for the maker's price feed. No Docker daemon runs here, so docker-compose.yml is
 * parsed (the `yaml` package) and its `${VAR:?message}` / `${VAR:-default}` / `${VAR}` interpolation is
 * done as `docker compose config` does it: every setting the webhook cannot start without is required,
 * each service restarts and has a healthcheck, and a .dockerignore keeps keys, data/ and node_modules/
 * out of the build context. Then the webhook's compose environment, with the mounted production
 * configuration and keypair, is run the way the image's CMD runs it (`node <flags> dist/src/main.js`
 * from the compiled build) against the sandbox chain (the local chain's JSON-RPC server), the test
 * Redis and the test PostgreSQL in place of the compose network's `redis` and `postgres`, and reaches
 * /ready. Its Redis is a redis-server started with the compose `redis` service's own command (maxmemory,
 * noeviction): the maker's price feed publishes to it at the port compose publishes on the host's
 * loopback (pricing/README.md's key and channel), as the compose file's comment says, and the webhook
 * quotes from those prices; the admin API, on with the required ADMIN_API_KEY, pauses and resumes
 * quoting. What it does not check: the image build itself, tini as PID 1
 * (test/production/signal.test.ts).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig, parseFileConfig } from "../../config/load.ts";
import { publishPrice } from "../../pricing/redis.ts";
import { startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { seedFromConfig } from "../../src/chain/local/seed.ts";
import { freePort, REPO_ROOT, stopChild } from "../../tooling/processes.ts";
import { freshDatabase } from "../ledger/support.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { fileTempDir } from "../support/tmp.ts";

interface Service {
  command?: string[];
  ports?: string[];
  image?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  restart?: string;
  healthcheck?: unknown;
  profiles?: string[];
}
const COMPOSE = parse(readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8")) as {
  services: Record<string, Service>;
};

/** Compose's interpolation: `${VAR:?err}` fails when VAR is unset or empty, `${VAR:-d}` defaults. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{([A-Z0-9_]+)(?:(:\?|:-)([^}]*))?\}/g,
    (_m, name: string, op?: string, arg?: string) => {
      const value = env[name];
      if (op === ":?" && !value) throw new Error(`required variable ${name} is missing a value: ${arg}`);
      if (op === ":-" && !value) return arg ?? "";
      return value ?? "";
    },
  );
}

const webhook = () => COMPOSE.services.webhook as Service;
/** The webhook's environment and volumes with the host's variables `env` put in. */
function resolved(env: Record<string, string>) {
  return {
    environment: Object.fromEntries(
      Object.entries(webhook().environment ?? {}).map(([k, v]) => [k, interpolate(String(v), env)]),
    ),
    volumes: (webhook().volumes ?? []).map((v) => interpolate(v, env)),
  };
}

const dir = fileTempDir("compose");
const keyPath = join(dir, "maker.json");
const maker = Keypair.generate();
writeFileSync(keyPath, JSON.stringify(Array.from(maker.secretKey)));
chmodSync(keyPath, 0o600);
const HOST_ENV = {
  RPC_URL: "http://127.0.0.1:8899",
  API_KEY: "operator-key-0123456789",
  MAKER_KEYPAIR_FILE: keyPath,
  CONFIG_FILE: join(REPO_ROOT, "config", "production.example.json"),
  ADMIN_API_KEY: "admin-key-0123456789abcdef",
};
const REQUIRED = ["RPC_URL", "API_KEY", "MAKER_KEYPAIR_FILE", "CONFIG_FILE", "ADMIN_API_KEY"] as const;

/** The redis service's command and host port with the host's variables `env` put in. */
function redisService(env: Record<string, string>) {
  const redis = COMPOSE.services.redis as Service;
  const published = (redis.ports ?? []).map((p) => interpolate(p, env));
  return { command: (redis.command ?? []).map((a) => interpolate(a, env)), published };
}

/** Container paths of the mounted files mapped back to the host's (what the container reads). */
function hostEnv(env: Record<string, string>, hostVars: Record<string, string>): Record<string, string> {
  const out = { ...env };
  for (const v of resolved(hostVars).volumes) {
    const [host, container] = v.split(":") as [string, string];
    for (const [k, value] of Object.entries(out)) if (value === container) out[k] = host;
  }
  return out;
}

describe("finding 3: docker-compose.yml as `docker compose config` reads it", () => {
  it.each(REQUIRED)("refuses to start without %s, naming it", (name) => {
    const env: Record<string, string> = { ...HOST_ENV };
    delete env[name];
    expect(() => resolved(env)).toThrow(
      new RegExp(`required variable ${name} is missing a value: set ${name}`),
    );
  });

  it("mounts the production configuration as CONFIG and the keypair as MAKER_KEYPAIR, read-only", () => {
    const r = resolved(HOST_ENV);
    expect(r.environment.CONFIG).toBe("/run/config/production.json");
    expect(r.volumes).toContain(`${HOST_ENV.CONFIG_FILE}:/run/config/production.json:ro`);
    expect(r.volumes).toContain(`${keyPath}:/run/secrets/maker-keypair.json:ro`);
  });

  it("gives a configuration the production guards accept (no hazard to allow)", () => {
    const config = loadConfig(hostEnv(resolved(HOST_ENV).environment, HOST_ENV));
    expect(config.mode).toBe("production");
    expect(config.hazards).toEqual([]);
  });

  it("requires ADMIN_API_KEY: the admin API and its kill switch are never off in the production compose", () => {
    expect(webhook().environment?.ADMIN_API_KEY).toMatch(/^\$\{ADMIN_API_KEY:\?/);
    expect(resolved(HOST_ENV).environment.ADMIN_API_KEY).toBe(HOST_ENV.ADMIN_API_KEY);
  });

  it("bounds Redis' memory and evicts nothing (maxmemory, maxmemory-policy noeviction); REDIS_MAXMEMORY moves the bound", () => {
    const arg = (cmd: string[], flag: string) => cmd[cmd.indexOf(flag) + 1];
    const { command } = redisService(HOST_ENV);
    expect(arg(command, "--maxmemory")).toBe("256mb");
    expect(arg(command, "--maxmemory-policy")).toBe("noeviction");
    expect(arg(redisService({ ...HOST_ENV, REDIS_MAXMEMORY: "2gb" }).command, "--maxmemory")).toBe("2gb");
  });

  it("publishes Redis for the maker's price feed on the host's loopback only (REDIS_HOST_PORT, default 6380), the port the webhook's REDIS_URL names inside", () => {
    expect(redisService(HOST_ENV).published).toEqual(["127.0.0.1:6380:6379"]);
    expect(redisService({ ...HOST_ENV, REDIS_HOST_PORT: "16380" }).published).toEqual([
      "127.0.0.1:16380:6379",
    ]);
    expect(resolved(HOST_ENV).environment.REDIS_URL).toBe("redis://redis:6379");
    // Every pair of the production example is priced from that Redis (the feed's job).
    const file = parseFileConfig(JSON.parse(readFileSync(HOST_ENV.CONFIG_FILE, "utf8")));
    for (const p of file.pairs)
      expect(file.priceSources[p.priceSource]?.kind, `${p.base}/${p.quote}`).toBe("redis");
  });

  it("restarts every service unless stopped, and health-checks redis, postgres and the webhook", () => {
    for (const [name, s] of Object.entries(COMPOSE.services)) expect(s.restart, name).toBe("unless-stopped");
    for (const name of ["redis", "postgres", "webhook"])
      expect(COMPOSE.services[name]?.healthcheck, name).toBeTruthy();
  });

  it("keeps keys, data/ and node_modules/ out of the build context (.dockerignore)", () => {
    const ignore = readFileSync(join(REPO_ROOT, ".dockerignore"), "utf8").split("\n");
    // At any depth (`**/`): test/deploy/image-context.test.ts computes the whole context.
    for (const p of ["**/*keypair*.json", "**/*.pem", "**/*.key", "**/.env", "**/data", "**/node_modules"])
      expect(ignore).toContain(p);
  });
});

describe("finding 3: the image's start with the compose environment reaches /ready", () => {
  let rpc: Awaited<ReturnType<typeof startRpcServer>>;
  let child: ChildProcess | undefined;
  let redisServer: ChildProcess | undefined;
  let composeRedisUrl = "";
  let stopPublishing = () => {};
  beforeAll(async () => {
    // The compose `redis` service: its own command (maxmemory, noeviction), here on a free port of the
    // host's loopback standing in for the published REDIS_HOST_PORT (and for redis:6379 inside).
    const [bin, ...args] = redisService(HOST_ENV).command as [string, ...string[]];
    const redisPort = await freePort();
    redisServer = spawn(bin, [...args, "--port", String(redisPort), "--bind", "127.0.0.1", "--dir", dir], {
      stdio: "ignore",
    });
    composeRedisUrl = `redis://127.0.0.1:${redisPort}`;
    for (let i = 0; i < 100; i++) {
      const ping = spawnSync("redis-cli", ["-p", String(redisPort), "ping"], { encoding: "utf8" });
      if (ping.stdout?.trim() === "PONG") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    execFileSync(process.execPath, [join(REPO_ROOT, "scripts", "build.mjs"), "--if-stale"], {
      cwd: REPO_ROOT,
      stdio: "inherit",
    });
    const chain = LocalChain.create();
    const file = parseFileConfig(JSON.parse(readFileSync(HOST_ENV.CONFIG_FILE, "utf8")));
    seedFromConfig(chain, file, maker.publicKey);
    rpc = await startRpcServer(chain, { host: "127.0.0.1", port: 0 });
    // The maker's price feed, on the host: a fresh price for every pair of the production
    // configuration, every second, to the Redis compose publishes (pricing/README.md's format).
    const redis = new Redis(composeRedisUrl);
    const publish = async () => {
      for (const p of file.pairs) {
        const mid =
          p.quote === "SOL"
            ? "0.0045"
            : p.base === "SOL"
              ? "180.25"
              : p.base === "USDC"
                ? "1.0001"
                : "0.8125";
        await publishPrice(redis, `${p.base}/${p.quote}`, { ts: Date.now(), mid });
      }
    };
    await publish();
    const timer = setInterval(() => void publish().catch(() => {}), 1_000);
    stopPublishing = () => {
      clearInterval(timer);
      redis.disconnect();
    };
  }, 240_000);
  afterAll(async () => {
    if (child) await stopChild(child);
    stopPublishing();
    if (redisServer) await stopChild(redisServer);
    await rpc?.close();
  });

  it("node <flags> dist/src/main.js with the compose environment answers /ready 200 in production mode", {
    timeout: 180_000,
  }, async () => {
    const cmd = (() => {
      const line = readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8")
        .split("\n")
        .find((l) => l.startsWith("CMD ")) as string;
      return JSON.parse(line.slice(4)) as string[];
    })();
    const [port, adminPort] = [await freePort(), await freePort()];
    const env = hostEnv(resolved({ ...HOST_ENV, RPC_URL: rpc.url }).environment, HOST_ENV);
    // The compose network's services are this machine's test servers.
    env.REDIS_URL = composeRedisUrl;
    env.DATABASE_URL = await freshDatabase();
    Object.assign(env, {
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      ADMIN_HOST: "127.0.0.1",
      HOST: "127.0.0.1",
    });
    const [node, ...args] = cmd as [string, ...string[]];
    expect(node).toBe("node");
    child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: "production", DATA_DIR: dir, WORKERS: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      out += d;
    });
    const until = Date.now() + 150_000;
    let status = 0;
    let body: { status?: string; mode?: string } = {};
    while (Date.now() < until && child.exitCode === null) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/ready`);
        status = r.status;
        body = (await r.json()) as typeof body;
        if (status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status, out).toBe(200);
    expect(body.mode).toBe("production");
    expect(out).toContain(`config:      ${HOST_ENV.CONFIG_FILE}`);

    // The compose Redis is the one compose configures (no eviction) ...
    const policy = spawnSync("redis-cli", ["-u", composeRedisUrl, "config", "get", "maxmemory-policy"], {
      encoding: "utf8",
    });
    expect(policy.stdout).toContain("noeviction");
    // ... the feed's prices reach the quote path through it ...
    const quote = () =>
      fetch(
        `http://127.0.0.1:${port}/quote`,
        jsonPost(quoteBody({ amount: "10000000" }), { "x-api-key": HOST_ENV.API_KEY }),
      );
    const priced = await quote();
    expect(priced.status, await priced.clone().text()).toBe(200);
    // ... and the kill switch works: the admin API pauses quoting and resumes it.
    const admin = (path: string) =>
      fetch(`http://127.0.0.1:${adminPort}${path}`, {
        method: "POST",
        headers: { "x-admin-api-key": HOST_ENV.ADMIN_API_KEY },
      });
    /** The first answer within 5 s whose status `ok` accepts (every instance obeys within a poll). */
    const quoteUntil = async (ok: (status: number) => boolean) => {
      let r = await quote();
      for (const until = Date.now() + 5_000; !ok(r.status) && Date.now() < until; r = await quote())
        await new Promise((res) => setTimeout(res, 100));
      return r;
    };
    expect((await admin("/admin/pause")).status).toBe(200);
    const paused = await quoteUntil((s) => s !== 200);
    expect(paused.status).not.toBe(200);
    expect(await paused.text()).toMatch(/paus/i);
    expect((await admin("/admin/resume")).status).toBe(200);
    expect((await quoteUntil((s) => s === 200)).status).toBe(200);
  });
});

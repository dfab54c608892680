/**
 * The Redis topology settings and the one factory that reads them (src/redis/client.ts): which
 * settings name which topology, what is refused, and TLS for real against a redis-server of the
 * test's own started with a certificate signed by a throwaway CA (openssl).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, parseEnv } from "../../config/load.ts";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { createRedisClient, redisTarget, unixSocketOptions, waitReady } from "../../src/redis/client.ts";
import { freePort, startRedis, stopChild } from "../../tooling/processes.ts";
import { sampleQuote } from "../quote-store/contract.ts";
import { clusterNodes } from "../support/redis.ts";
import { fileTempDir } from "../support/tmp.ts";

describe("Redis topology settings", () => {
  it("reads a single node, a cluster's seed nodes and a Sentinel group, each with its address for logs", () => {
    expect(redisTarget(parseEnv({ REDIS_URL: "redis://u:secret@10.0.0.5:6380/2" }))).toMatchObject({
      kind: "single",
      setting: "REDIS_URL",
      address: "redis://10.0.0.5:6380/2",
    });
    expect(redisTarget(parseEnv({ REDIS_CLUSTER_NODES: "10.0.0.1:7000, 10.0.0.2:7001,redis://h3" }))).toEqual(
      {
        kind: "cluster",
        nodes: [
          { host: "10.0.0.1", port: 7000 },
          { host: "10.0.0.2", port: 7001 },
          { host: "h3", port: 6379 },
        ],
        setting: "REDIS_CLUSTER_NODES",
        address: "cluster redis://10.0.0.1:7000,10.0.0.2:7001,h3:6379",
      },
    );
    const sentinel = redisTarget(
      parseEnv({
        REDIS_SENTINELS: "s1:26379,s2:26379",
        REDIS_SENTINEL_MASTER: "rfq",
        REDIS_PASSWORD: "pw",
        REDIS_SENTINEL_PASSWORD: "spw",
      }),
    );
    expect(sentinel).toMatchObject({
      kind: "sentinel",
      master: "rfq",
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26379 },
      ],
      password: "pw",
      sentinelPassword: "spw",
      address: "sentinel rfq@s1:26379,s2:26379",
    });
    expect(JSON.stringify(sentinel?.address)).not.toContain("pw");
    expect(redisTarget(parseEnv({}))).toBeUndefined();
  });

  it("turns TLS on for rediss:// and for REDIS_TLS=1, with the TLS options", () => {
    expect(redisTarget(parseEnv({ REDIS_URL: "rediss://h:6380" }))?.tls).toEqual({
      rejectUnauthorized: true,
    });
    expect(redisTarget(parseEnv({ REDIS_URL: "redis://h:6380" }))?.tls).toBeUndefined();
    expect(
      redisTarget(
        parseEnv({ REDIS_CLUSTER_NODES: "h:7000", REDIS_TLS: "1", REDIS_TLS_SERVERNAME: "x.example" }),
      )?.tls,
    ).toEqual({ rejectUnauthorized: true, servername: "x.example" });
    expect(
      redisTarget(parseEnv({ REDIS_CLUSTER_NODES: "rediss://h:7000", REDIS_TLS_REJECT_UNAUTHORIZED: "0" }))
        ?.tls,
    ).toEqual({ rejectUnauthorized: false });
    expect(() =>
      redisTarget(parseEnv({ REDIS_URL: "rediss://h:6380", REDIS_TLS_CA_FILE: "/nonexistent/ca.pem" })),
    ).toThrow(/REDIS_TLS_CA_FILE: \/nonexistent\/ca.pem: cannot read/);
  });

  it("reads a unix socket URL: its path and database, credentials from REDIS_USERNAME/PASSWORD, no TLS", () => {
    const target = redisTarget(
      parseEnv({
        REDIS_URL: "unix:///run/redis/redis.sock?db=3",
        REDIS_USERNAME: "rfq",
        REDIS_PASSWORD: "pw",
      }),
    );
    expect(target).toEqual({
      kind: "single",
      url: "unix:///run/redis/redis.sock?db=3",
      setting: "REDIS_URL",
      address: "unix:///run/redis/redis.sock",
      username: "rfq",
      password: "pw",
    });
    expect(unixSocketOptions("unix:///run/redis/redis.sock?db=3")).toEqual({
      path: "/run/redis/redis.sock",
      db: 3,
    });
    expect(unixSocketOptions("unix:///tmp/a%20b.sock")).toEqual({ path: "/tmp/a b.sock" });
    expect(unixSocketOptions("redis://h:6379")).toBeUndefined();
    expect(() => redisTarget(parseEnv({ REDIS_URL: "unix:///run/redis.sock", REDIS_TLS: "1" }))).toThrow(
      /REDIS_TLS: 1: TLS does not apply to a unix socket/,
    );
  });

  it("refuses a unix socket URL with a host, an option other than db, or a db that is not a number, naming REDIS_URL", () => {
    expect(() => parseEnv({ REDIS_URL: "unix://redis-host/run/redis.sock" })).toThrow(
      /REDIS_URL: a unix socket URL names no host/,
    );
    expect(() => parseEnv({ REDIS_URL: "unix:///run/redis.sock?password=pw" })).toThrow(
      /REDIS_URL: unknown option password/,
    );
    expect(() => parseEnv({ REDIS_URL: "unix:///run/redis.sock?db=two" })).toThrow(
      /REDIS_URL: db must be a database number, not "two"/,
    );
    expect(() => parseEnv({ REDIS_URL: "unix://" })).toThrow(/REDIS_URL/);
    expect(() => parseEnv({ REDIS_URL: "http://h:6379" })).toThrow(/REDIS_URL/);
  });

  it("refuses two topologies at once, and a Sentinel group without its master's name", () => {
    expect(() => parseEnv({ REDIS_URL: "redis://h", REDIS_CLUSTER_NODES: "h:7000" })).toThrow(
      /REDIS_URL, REDIS_CLUSTER_NODES: set only one Redis topology/,
    );
    expect(() => parseEnv({ REDIS_SENTINELS: "s:26379" })).toThrow(/REDIS_SENTINEL_MASTER/);
    expect(() => redisTarget(parseEnv({ REDIS_CLUSTER_NODES: "h:99999" }))).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it("counts a cluster or a Sentinel group as the shared store production mode requires", () => {
    const prod = { RPC_URL: "http://127.0.0.1:8899", MAKER_KEYPAIR: "/k.json" };
    const modeWith = (env: Record<string, string>) =>
      loadConfig({ ...prod, ...env }, { hazards: "report" }).mode;
    expect(modeWith({ REDIS_CLUSTER_NODES: "h:7000" })).toBe("production");
    expect(modeWith({ REDIS_SENTINELS: "s:26379", REDIS_SENTINEL_MASTER: "m" })).toBe("production");
    expect(() => loadConfig(prod)).toThrow(/REDIS_URL: required when RPC_URL is set/);
  });

  it.skipIf(!clusterNodes())("builds an ioredis Cluster for REDIS_CLUSTER_NODES that answers", async () => {
    const env = parseEnv({ REDIS_CLUSTER_NODES: process.env.REDIS_TEST_CLUSTER_NODES as string });
    const target = redisTarget(env);
    if (!target) throw new Error("no target");
    const client = createRedisClient(target);
    try {
      expect(client).toBeInstanceOf(Cluster);
      await waitReady(client, target.setting, target.address);
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.disconnect();
    }
  });
});

const openssl = spawnSync("openssl", ["version"]).status === 0;

describe.skipIf(!openssl)("TLS (rediss://) against a real redis-server", () => {
  const dir = fileTempDir("redis-tls");
  let server: ChildProcess;
  let port: number;
  const file = (name: string) => join(dir, name);

  beforeAll(async () => {
    const run = (args: string[]) => {
      const r = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}`);
    };
    run([
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "1",
      "-subj",
      "/CN=rfq-test-ca",
    ]);
    run([
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
      "-subj",
      "/CN=redis.test",
    ]);
    run([
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.crt",
      "-days",
      "1",
    ]);
    port = await freePort();
    server = spawn(
      "redis-server",
      [
        "--port",
        "0",
        "--tls-port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--tls-cert-file",
        file("server.crt"),
        "--tls-key-file",
        file("server.key"),
        "--tls-ca-cert-file",
        file("ca.crt"),
        "--tls-auth-clients",
        "no",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
  });
  afterAll(() => stopChild(server));

  const connect = async (env: Record<string, string>) => {
    const target = redisTarget(parseEnv({ REDIS_URL: `rediss://127.0.0.1:${port}`, ...env }));
    if (!target) throw new Error("no target");
    const client = createRedisClient(target);
    try {
      await waitReady(client, target.setting, target.address, 2_000);
      return await client.ping();
    } finally {
      client.disconnect();
    }
  };

  it("connects with the CA file and the certificate's server name", async () => {
    expect(await connect({ REDIS_TLS_CA_FILE: file("ca.crt"), REDIS_TLS_SERVERNAME: "redis.test" })).toBe(
      "PONG",
    );
  });

  it("refuses a server whose certificate does not verify (no CA given), naming REDIS_URL", async () => {
    await expect(connect({})).rejects.toThrow(/REDIS_URL: rediss:\/\/127\.0\.0\.1:\d+: not reachable/);
  });

  it("accepts it with REDIS_TLS_REJECT_UNAUTHORIZED=0 (testing only)", async () => {
    expect(await connect({ REDIS_TLS_REJECT_UNAUTHORIZED: "0" })).toBe("PONG");
  });
});

describe("a single node on a unix socket (REDIS_URL=unix://...) against a real redis-server", () => {
  // The tooling's throwaway server with its socket (as `npm run loadtest -- --redis-socket` starts it);
  // CLIENT INFO below shows the connection is the socket's, not its loopback port's.
  let server: Awaited<ReturnType<typeof startRedis>>;
  let socket: string;

  beforeAll(async () => {
    server = await startRedis({ socket: true });
    socket = server.url.slice("unix://".length);
  });
  afterAll(() => server?.stop());

  it("stores, reads and claims a quote over the socket, in the database the URL names", async () => {
    const target = redisTarget(parseEnv({ REDIS_URL: `unix://${socket}?db=2` }));
    if (!target) throw new Error("no target");
    const client = createRedisClient(target);
    try {
      await waitReady(client, target.setting, target.address, 5_000);
      const info = String(await client.call("CLIENT", "INFO"));
      expect(info).toContain(`laddr=${socket}`);
      expect(info).toMatch(/ db=2 /);
      const store = new RedisQuoteStore(client, "rfq:unix:");
      const quote = sampleQuote("q-unix-1", "r-unix-1", Date.now());
      expect(await store.put(quote)).toBe(true);
      expect(await store.get("q-unix-1")).toEqual(quote);
      expect(await store.claim("q-unix-1", "ab".repeat(32), Date.now())).toEqual({ kind: "claimed" });
      expect(await client.select(0).then(() => client.exists("rfq:unix:{q-unix-1}:q"))).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it("names REDIS_URL and the socket when nothing listens there", async () => {
    const missing = `unix://${join(dirname(socket), "absent.sock")}`;
    const target = redisTarget(parseEnv({ REDIS_URL: missing }));
    if (!target) throw new Error("no target");
    const client = createRedisClient(target);
    try {
      await expect(waitReady(client, target.setting, target.address, 500)).rejects.toThrow(
        /REDIS_URL: unix:\/\/.*absent\.sock: not reachable within 500 ms: ENOENT/,
      );
    } finally {
      client.disconnect();
    }
  });
});

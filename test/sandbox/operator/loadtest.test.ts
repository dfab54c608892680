/**
 * The load generator's own correctness (not its speed): percentiles, the request mix, the raw HTTP
 * client against a real node:http server, and the open-loop runner's classification against the real
 * webhook (composed as `npm start` does, served on a socket).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BaselineResult,
  baselineText,
  meetsTail,
  parseBaselineKind,
  runBaselinePhase,
} from "../../../sandbox/loadtest/baseline.ts";
import { buildMix, DEFAULT_MIX } from "../../../sandbox/loadtest/mix.ts";
import { Outcome, runOpenLoop } from "../../../sandbox/loadtest/open-loop.ts";
import { RawHttpPool } from "../../../sandbox/loadtest/raw-http.ts";
import { percentile, series, slowestBuckets, summarize } from "../../../sandbox/loadtest/stats.ts";
import {
  descendantPids,
  nodeDescendantPids,
  REPO_ROOT,
  residentMemoryOf,
} from "../../../tooling/processes.ts";
import { defaultFileConfig } from "../../support/config.ts";
import { createHarness, type Harness, listen } from "../../support/harness.ts";

describe("load test statistics", () => {
  it("takes nearest-rank percentiles", () => {
    const v = Float64Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(percentile(v, 50)).toBe(500);
    expect(percentile(v, 99)).toBe(990);
    expect(percentile(v, 99.9)).toBe(999);
    expect(percentile(v, 100)).toBe(1000);
    expect(Number.isNaN(percentile(new Float64Array(0), 50))).toBe(true);
  });

  it("leaves unanswered requests out of the summary and buckets by scheduled time", () => {
    const s = summarize(Float64Array.from([1, Number.NaN, 3]));
    expect(s).toMatchObject({ count: 2, max: 3, mean: 2 });
    const pts = series(Float64Array.from([0, 500, 1000, 1500]), Float64Array.from([1, 2, 3, 4]), 1000);
    expect(pts.map((p) => [p.t, p.count, p.max])).toEqual([
      [0, 2, 2],
      [1, 2, 4],
    ]);
  });

  it("gives each bucket the generator's worst send lag, and names who held up the slowest buckets", () => {
    // Bucket 0: a 30 ms answer sent 25 ms late (the generator's stall); bucket 1: 40 ms with a
    // 1 ms send lag (the server's); bucket 2: quiet.
    const sched = Float64Array.from([0, 500, 1000, 1500, 2000]);
    const lat = Float64Array.from([30, 2, 3, 40, 1]);
    const lag = Float64Array.from([25, 0.5, 0.2, 1, 0.1]);
    const pts = series(sched, lat, 1000, lag);
    expect(pts.map((p) => [p.t, p.max, p.sendLagMax])).toEqual([
      [0, 30, 25],
      [1, 40, 1],
      [2, 1, 0.1],
    ]);
    expect(slowestBuckets(pts, 2).map((p) => [p.t, p.heldUpBy])).toEqual([
      [1, "server"],
      [0, "generator"],
    ]);
    // Without send lags the series has no such field and no side is named.
    const bare = series(sched, lat, 1000);
    expect(bare[0]).not.toHaveProperty("sendLagMax");
    expect(slowestBuckets(bare, 1)[0]?.heldUpBy).toBe("unknown");
  });
});

describe("load test mix", () => {
  const file = defaultFileConfig();

  it("is repeatable from its seed, with a unique quoteId per request", () => {
    const a = buildMix(file, 500, { ...DEFAULT_MIX, seed: "s" });
    const b = buildMix(file, 500, { ...DEFAULT_MIX, seed: "s" });
    expect(a.map((r) => r.requestId)).toEqual(b.map((r) => r.requestId));
    expect(new Set(a.map((r) => r.quoteId)).size).toBe(500);
  });

  it("mixes both quote types, takers and none, and a share that must be declined", () => {
    const mix = buildMix(file, 5000, { ...DEFAULT_MIX, seed: "shares" });
    const bodies = mix.map((r) => JSON.parse(r.body.toString()) as Record<string, unknown>);
    const share = (f: (b: Record<string, unknown>) => boolean) => bodies.filter(f).length / bodies.length;
    expect(share((b) => b.quoteType === "exactOut")).toBeGreaterThan(0.3);
    expect(share((b) => b.quoteType === "exactOut")).toBeLessThan(0.5);
    expect(share((b) => typeof b.taker === "string")).toBeGreaterThan(0.5);
    expect(share((b) => b.taker === undefined)).toBeGreaterThan(0.3);
    const declined = mix.filter((r) => r.expect === "noQuote");
    expect(declined.length / mix.length).toBeGreaterThan(0.04);
    expect(new Set(declined.map((r) => r.kind))).toEqual(new Set(["unknownMint", "oversize"]));
    expect(bodies.every((b) => b.protocol === "v1" && /^\d+$/.test(b.amount as string))).toBe(true);
  });
});

describe("raw HTTP pool", () => {
  let server: http.Server;
  let url: URL;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString();
        if (req.url === "/chunked") {
          res.writeHead(200, { "content-type": "text/plain" });
          res.write("ab");
          res.end(`c${body}`);
        } else if (req.url === "/slow") {
          setTimeout(() => res.end("late"), 300);
        } else {
          res.writeHead(404, { "content-length": String(body.length + 5) });
          res.end(`echo:${body}`);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const req = (path: string, body: string) =>
    Buffer.from(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body}`);

  it("reads Content-Length and chunked answers over one kept-alive connection", async () => {
    const pool = new RawHttpPool(url, 1);
    const a = await pool.request(req("/echo", "hi"), 2_000);
    const b = await pool.request(req("/chunked", "d"), 2_000);
    const c = await pool.request(req("/echo", "again"), 2_000);
    expect(a).toMatchObject({ ok: true, res: { status: 404 } });
    expect(a.ok && a.res.body.toString()).toBe("echo:hi");
    expect(b.ok && b.res.body.toString()).toBe("abcd");
    expect(c.ok && c.res.body.toString()).toBe("echo:again");
    expect(pool.connections).toBe(1);
    pool.close();
  });

  it("reads a Content-Length that is the last header, as @hono/node-server 2.x sends it", async () => {
    // node:http always puts Date and Connection after Content-Length; this server does not.
    const raw = net.createServer((sock) => {
      sock.on("data", () => {
        const body = "x".repeat(423);
        sock.write(
          `HTTP/1.1 200 OK\r\nconnection: keep-alive\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
      });
    });
    await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
    const pool = new RawHttpPool(new URL(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/`), 1);
    const a = await pool.request(req("/", "a"), 2_000);
    const b = await pool.request(req("/", "b"), 2_000);
    expect(a.ok && [a.res.status, a.res.body.length]).toEqual([200, 423]);
    expect(b.ok && [b.res.status, b.res.body.length]).toEqual([200, 423]);
    pool.close();
    await new Promise((r) => raw.close(r));
  });

  it("never writes a request on a connection whose answer said Connection: close (a draining webhook's)", async () => {
    // Each connection: one answer with Connection: close, then nothing more, closed 50 ms later (a
    // server that closes after its answer, as a draining webhook does, and is slower to than the client).
    const raw = net.createServer((sock) => {
      let answered = false;
      sock.on("data", () => {
        if (answered) return;
        answered = true;
        sock.write("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 2\r\n\r\nno");
        setTimeout(() => sock.destroy(), 50);
      });
    });
    await new Promise<void>((r) => raw.listen(0, "127.0.0.1", r));
    const pool = new RawHttpPool(new URL(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/`), 4);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await pool.request(req("/", String(i)), 2_000));
    expect(answers.map((a) => (a.ok ? a.res.status : a.error))).toEqual([404, 404, 404, 404, 404]);
    pool.close();
    await new Promise((r) => raw.close(r));
  });

  it("queues requests beyond its connection cap and reports a timeout as a value", async () => {
    const pool = new RawHttpPool(url, 1);
    const [slow, queued] = await Promise.all([
      pool.request(req("/slow", ""), 50),
      pool.request(req("/echo", "q"), 2_000),
    ]);
    expect(slow).toMatchObject({ ok: false, error: "timeout" });
    expect(queued.ok && queued.res.body.toString()).toBe("echo:q");
    pool.close();
  });
});

describe("open-loop runner against the real webhook", () => {
  let h: Harness;
  let webhook: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    h = await createHarness();
    webhook = await listen(h.app);
  });
  afterAll(async () => {
    await webhook.close();
    await h.close();
  });

  it("gets a 200 for every quotable request and a 404 for every one that must be declined", async () => {
    const mix = buildMix(h.config.file, 300, { ...DEFAULT_MIX, seed: "runner" });
    const r = await runOpenLoop(mix, {
      url: new URL(`${webhook.url}/quote`),
      rate: 200,
      durationS: 1,
      warmupS: 0.5,
      // The runner's classification, not the webhook's speed (that is `npm run loadtest` and
      // `npm run bench`): a budget no loaded test machine can miss, so no answer is a deadline 404.
      budgetMs: 10_000,
      requestTimeoutMs: 5_000,
      maxSockets: 16,
    });
    const counts = new Map<number, number>();
    for (const o of r.outcome) counts.set(o, (counts.get(o) ?? 0) + 1);
    expect(r.outcome.length).toBe(200);
    expect((counts.get(Outcome.quoted) ?? 0) + (counts.get(Outcome.noQuote) ?? 0)).toBe(200);
    expect(counts.get(Outcome.noQuote) ?? 0).toBeGreaterThan(0);
    expect(r.errorSamples).toEqual([]);
    expect(r.latencyMs.every((l) => Number.isFinite(l))).toBe(true);
  });
});

describe("load test baseline (--baseline)", () => {
  const file = defaultFileConfig();
  const lat = (p99: number, p999: number) => ({ count: 1, p50: 1, p90: 2, p99, p999, max: p999, mean: 1 });

  it("refuses a baseline kind it does not know, naming the flag", () => {
    expect(parseBaselineKind("none")).toBeUndefined();
    expect(parseBaselineKind("http")).toBe("http");
    expect(() => parseBaselineKind("nginx")).toThrow(/--baseline: "nginx"/);
  });

  it("runs the quote phase's requests against a real bare server and judges its tail by the webhook's targets", async () => {
    const mix = buildMix(file, 300, { ...DEFAULT_MIX, seed: "baseline" });
    const dir = mkdtempSync(join(tmpdir(), "baseline-"));
    const b = await runBaselinePhase({
      kind: "http",
      workers: 1,
      mix,
      rate: 200,
      durationS: 1,
      warmupS: 0.5,
      budgetMs: 10_000,
      maxSockets: 16,
      dir,
      targets: { p99Ms: 10_000, p999Ms: 10_000 },
    });
    expect(b.step.target).toBe("bare node:http ×1");
    expect(b.step.measured).toBe(200);
    // The bare server prices every request, the ones the webhook must decline included.
    expect(b.step.withinBudget * b.step.measured).toBe(200);
    expect(b.meetsTail).toBe(true);
    expect(baselineText(b, lat(1, 2)).at(-1)).toMatch(/the bare server meets p99 < 10000 ms/);
  }, 60_000);

  it("says the machine sets the tail when the bare server itself misses the targets", () => {
    const b: BaselineResult = {
      step: {
        target: "bare node:http ×1",
        rate: 5000,
        kind: "sweep",
        measured: 1000,
        p50: 1.3,
        p99: 31.4,
        p999: 41.8,
        max: 50,
        withinBudget: 1,
        pricedWithinBudget: 1,
        unexpectedNoQuote: 0,
        errors: 0,
        holds: true,
        cpuUsPerRequest: { server: 57, generator: 60 },
        cpuCoreShare: { server: 0.29, generator: 0.3 },
        processes: { server: 1, generator: 1 },
        sendLagP99: 22,
      },
      targets: { p99Ms: 10, p999Ms: 20 },
      meetsTail: false,
    };
    const text = baselineText(b, lat(48, 67.4)).join("\n");
    expect(text).toMatch(/p99 1\.53x, p99\.9 1\.61x/);
    expect(text).toMatch(/itself misses p99 < 10 ms or p99\.9 < 20 ms .*measure the machine here/);
    expect(meetsTail(lat(9.9, 19.9), b.targets)).toBe(true);
    expect(meetsTail(lat(9.9, 20), b.targets)).toBe(false);
  });
});

describe("load test process tree", () => {
  it("counts a server's node children as its workers, not tsx's esbuild service (a cold cache starts one beside them)", {
    timeout: 30_000,
  }, async () => {
    // A server under tsx with its cache off (as a fresh clone's first run): esbuild's service is its
    // child, beside the node child it starts itself (as node:cluster starts a worker).
    const dir = mkdtempSync(join(tmpdir(), "rfq-tree-"));
    const script = join(dir, "server.ts");
    writeFileSync(
      script,
      'import { spawn } from "node:child_process";\n' +
        'const worker: { pid?: number } = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });\n' +
        'process.stdout.write("worker " + worker.pid + "\\n");\n' +
        "setInterval(() => {}, 1000);\n",
    );
    const server = spawn(process.execPath, ["--import", "tsx", script], {
      cwd: REPO_ROOT,
      env: { ...process.env, TSX_DISABLE_CACHE: "1" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const workerPid = await new Promise<number>((resolve, reject) => {
        let out = "";
        server.stdout?.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /worker (\d+)\n/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        server.once("exit", (code) => reject(new Error(`server exited ${code}`)));
      });
      const pid = server.pid as number;
      const cmdline = (p: number) => readFileSync(`/proc/${p}/cmdline`, "utf8").replaceAll("\0", " ");
      // The case this pins: the tree holds a helper that is not node.
      expect(descendantPids(pid).map(cmdline)).toEqual(
        expect.arrayContaining([expect.stringContaining("esbuild"), expect.stringContaining("setInterval")]),
      );
      expect(nodeDescendantPids(pid)).toEqual([workerPid]);
    } finally {
      for (const k of descendantPids(server.pid as number)) process.kill(k, "SIGKILL");
      server.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads a process's resident memory and its peak from /proc, as the report gives them", {
    timeout: 30_000,
  }, async () => {
    // A child that touches 96 MiB, lets 64 MiB of it go and then waits: its peak holds what its
    // resident set gave back.
    const child = spawn(
      process.execPath,
      [
        "--expose-gc",
        "-e",
        "let a = Buffer.alloc(64 * 2 ** 20, 1); const b = Buffer.alloc(32 * 2 ** 20, 1);" +
          "a = undefined; globalThis.gc(); process.stdout.write('ready ' + b.length + '\\n'); setInterval(() => {}, 1000);",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
        child.once("exit", (code) => reject(new Error(`child exited ${code}`)));
      });
      const m = residentMemoryOf(child.pid);
      expect(m).toBeDefined();
      const MiB = 2 ** 20;
      expect(m?.rssBytes).toBeGreaterThanOrEqual(32 * MiB);
      expect(m?.peakBytes).toBeGreaterThanOrEqual(96 * MiB);
      expect(m?.peakBytes).toBeGreaterThanOrEqual(m?.rssBytes as number);
    } finally {
      child.kill("SIGKILL");
    }
    // This process, against Node's own figure; and nothing for a process that is not there.
    const self = residentMemoryOf(process.pid);
    expect(Math.abs((self?.rssBytes as number) - process.memoryUsage().rss)).toBeLessThan(32 * 2 ** 20);
    expect(residentMemoryOf(2 ** 22 + 1)).toBeUndefined();
    expect(residentMemoryOf(undefined)).toBeUndefined();
  });
});

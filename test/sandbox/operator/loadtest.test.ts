/**
 * The load generator's own correctness (not its speed): percentiles, the request mix, the raw HTTP
 * client against a real node:http server, and the open-loop runner's classification against the real
 * webhook (composed as `npm start` does, served on a socket).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMix, DEFAULT_MIX } from "../../../sandbox/loadtest/mix.ts";
import { Outcome, runOpenLoop } from "../../../sandbox/loadtest/open-loop.ts";
import { RawHttpPool } from "../../../sandbox/loadtest/raw-http.ts";
import { percentile, series, summarize } from "../../../sandbox/loadtest/stats.ts";
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
      budgetMs: 250,
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

/**
 * `npm run loadtest -- --trace-server`: the tracer (sandbox/loadtest/server-trace.mjs) preloaded into a
 * real node:http server process that writes to a real Redis through ioredis, as the webhook does, and
 * the load test's reading of its record (sandbox/loadtest/server-trace.ts). The split it reports means
 * something only if every request and every store write is in it, with their own times, and only those
 * of the measured window.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  collectServerTraces,
  type RawServerTrace,
  SERVER_TRACE_PRELOAD,
  summarizeServerTraces,
} from "../../../sandbox/loadtest/server-trace.ts";
import { REPO_ROOT } from "../../../tooling/processes.ts";
import { redisUrl } from "../../support/redis.ts";

const dir = mkdtempSync(join(tmpdir(), "server-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A server that, per request, runs one EVAL in Redis, holds the answer `holdMs`, then answers. */
const SERVER = `
import { createServer } from "node:http";
import { createRequire } from "node:module";
const Redis = createRequire(${JSON.stringify(join(REPO_ROOT, "package.json"))})("ioredis");
const redis = new Redis(process.env.REDIS);
const holdMs = Number(process.env.HOLD_MS);
const server = createServer((req, res) => {
  req.resume();
  req.on("end", async () => {
    await redis.eval("return 1", 0);
    setTimeout(() => res.end("ok"), holdMs);
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
process.on("SIGTERM", () => { server.close(); redis.disconnect(); process.exit(0); });
`;

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const script = join(dir, "server.mjs");
  writeFileSync(script, SERVER);
  const child = spawn(process.execPath, ["--import", SERVER_TRACE_PRELOAD, script], {
    env: { ...process.env, REDIS: redisUrl(), ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  return { child, port: Number(line.toString().trim()) };
}

const post = (port: number, scheduled: number) =>
  fetch(`http://127.0.0.1:${port}/quote`, {
    method: "POST",
    headers: { "x-request-start": String(scheduled) },
    body: "{}",
  });

describe("load test: --trace-server", () => {
  it("records every request's lag from its scheduled send, its handling and every store write, on SIGUSR2 since the last record, and the summary keeps only the measured window", async () => {
    const traceDir = join(dir, "trace");
    const { child, port } = await startServer({ SERVER_TRACE_DIR: traceDir, HOLD_MS: "20" });
    try {
      // Warm-up requests scheduled long before the window, then 12 scheduled 30 ms before they are sent.
      for (let i = 0; i < 3; i++) expect((await post(port, Date.now() - 60_000)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      // The window opens after the warm-up's store writes, and before the first scheduled send.
      const from = Date.now() - 50;
      for (let i = 0; i < 12; i++) expect((await post(port, Date.now() - 30)).status).toBe(200);
      const to = Date.now();

      const traces = await collectServerTraces([child.pid as number], traceDir);
      expect(traces.map((t) => t.pid)).toEqual([child.pid]);
      const raw = traces[0] as RawServerTrace;
      expect(raw.requests.length).toBe(15 * 3);
      expect(raw.storeCalls.length).toBe(15 * 2);
      expect(raw.loop.length).toBeGreaterThan(0);

      const s = summarizeServerTraces(traces, from, to);
      expect(s.processes).toBe(1);
      expect(s.requests).toBe(12);
      expect(s.arrivalLagMs.count).toBe(12);
      // Scheduled 30 ms before the send (x-request-start is whole ms, and two processes read the clock).
      expect(s.arrivalLagMs.p50).toBeGreaterThanOrEqual(29);
      expect(s.arrivalLagMs.max).toBeLessThan(60_000);
      // The server held each answer 20 ms after its store write.
      expect(s.handlingMs.count).toBe(12);
      expect(s.handlingMs.p50).toBeGreaterThanOrEqual(19);
      // Each request's handling holds its own store write and then the 20 ms hold; the write alone is
      // recorded apart (a slow write under load makes both longer, never one without the other).
      expect(s.storeCallMs.count).toBe(12);
      expect(s.handlingMs.p50).toBeGreaterThanOrEqual(s.storeCallMs.p50 + 19);
      expect(s.loopBusy.windows).toBeGreaterThan(0);

      // The next record holds only what came after this one (a sweep's steps each get their own).
      for (let i = 0; i < 2; i++) expect((await post(port, Date.now())).status).toBe(200);
      const next = await collectServerTraces([child.pid as number], traceDir);
      expect(next.map((t) => t.requests.length)).toEqual([2 * 3]);
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
  });

  it("installs nothing without SERVER_TRACE_DIR: the server answers as before and SIGUSR2 keeps its default action", async () => {
    const { child, port } = await startServer({ HOLD_MS: "0" });
    expect((await post(port, Date.now())).status).toBe(200);
    child.kill("SIGUSR2");
    const [code, signal] = await once(child, "exit");
    expect([code, signal]).toEqual([null, "SIGUSR2"]);
  });

  it("summarizes by scheduled send (by arrival without x-request-start) over every process that served in the window, and counts saturated loop windows", () => {
    const a: RawServerTrace = {
      pid: 1,
      // arrival, scheduled, handling: in the window, in it without a header, before it, after it.
      requests: [1_010, 1_000, 2, 1_020, null, 4, 500, 400, 100, 2_100, 2_000, 100],
      storeCalls: [1_001, 1, 1_500, 3, 999, 50, 2_000, 60],
      loop: [1_050, 0.5, 1_100, 0.95, 1_150, 0.9, 1_200, 0.2, 1_000, 1],
    };
    // A process that served nothing in the window is not counted, nor are its windows.
    const idle: RawServerTrace = { pid: 2, requests: [10, 5, 1], storeCalls: [], loop: [1_050, 1] };
    const s = summarizeServerTraces([a, idle], 1_000, 2_000);
    expect(s.processes).toBe(1);
    expect(s.requests).toBe(2);
    expect(s.arrivalLagMs.count).toBe(1);
    expect(s.arrivalLagMs.max).toBe(10);
    expect([s.handlingMs.p50, s.handlingMs.max]).toEqual([2, 4]);
    expect([s.storeCallMs.count, s.storeCallMs.max]).toEqual([2, 3]);
    expect(s.loopBusy.windows).toBe(4);
    expect(s.loopBusy.saturatedShare).toBe(0.5);
  });
});

/**
 * The parts `npm run bench:shed` (bench/shed.ts) measures with: Node's floor (sandbox/loadtest/bare.ts
 * --kind floor) must answer what a shed answers without reading the body and keep the connection
 * usable, and the open-loop sender's `startSkewMs` must date every request that much earlier, or the
 * figures would compare other work than they claim.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../../config/load.ts";
import { buildMix, DEFAULT_MIX } from "../../../sandbox/loadtest/mix.ts";
import { runOpenLoop } from "../../../sandbox/loadtest/open-loop.ts";
import { startBareTarget } from "../../../sandbox/loadtest/sweep.ts";
import { OVERLOADED_MESSAGE } from "../../../src/http/shed.ts";
import { cpuSecondsOf, preciseCpuSecondsOf } from "../../../tooling/processes.ts";

const dir = mkdtempSync(join(tmpdir(), "shed-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);

describe("bench:shed's instruments", () => {
  it("the floor server answers every quote with the shed's 404 without reading it, on one kept-alive connection", async () => {
    const t = await startBareTarget("floor", 1, dir);
    const url = t.urls[0] as URL;
    try {
      const mix = buildMix(file, 60, { ...DEFAULT_MIX, seed: "floor" });
      // One connection: each answer must leave the connection ready for the next request, which
      // Node ensures by dumping the unread body.
      const r = await runOpenLoop(mix, {
        url,
        rate: 200,
        durationS: 0.3,
        warmupS: 0,
        budgetMs: 250,
        requestTimeoutMs: 2_000,
        maxSockets: 1,
      });
      expect(r.status.length).toBe(60);
      expect([...r.status].every((s) => s === 404)).toBe(true);
      const one = await fetch(url, { method: "POST", body: "{}" });
      expect(one.status).toBe(404);
      expect(await one.json()).toEqual({
        message: OVERLOADED_MESSAGE,
      });
    } finally {
      await t.close();
    }
  });

  it("startSkewMs dates each request's x-request-start that many ms before its scheduled send", async () => {
    const seen: number[] = [];
    const server = createServer((req, res) => {
      seen.push(Date.now() - Number(req.headers["x-request-start"]));
      req.resume();
      req.on("end", () => {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"message":"no"}');
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as AddressInfo;
      const mix = buildMix(file, 40, { ...DEFAULT_MIX, seed: "skew" });
      const run = (startSkewMs?: number) =>
        runOpenLoop(mix, {
          url: new URL(`http://127.0.0.1:${port}/quote`),
          rate: 200,
          durationS: 0.2,
          warmupS: 0,
          budgetMs: 250,
          requestTimeoutMs: 2_000,
          maxSockets: 4,
          ...(startSkewMs === undefined ? {} : { startSkewMs }),
        });
      await run();
      const fresh = seen.splice(0);
      await run(200);
      const skewed = seen.splice(0);
      expect(fresh).toHaveLength(40);
      expect(skewed).toHaveLength(40);
      // Arrival minus the header: a few ms of sending (and rounding to the ms) without the skew,
      // the skew on top of that with it.
      expect(Math.max(...fresh)).toBeLessThan(100);
      expect(Math.min(...skewed)).toBeGreaterThanOrEqual(199);
      expect(Math.max(...skewed)).toBeLessThan(300);
    } finally {
      server.close();
    }
  });

  it("preciseCpuSecondsOf counts a 30 ms busy loop's CPU to the microsecond, where /proc's ticks are 10 ms", () => {
    const before = preciseCpuSecondsOf(process.pid) as number;
    const ticksBefore = cpuSecondsOf(process.pid) as number;
    const until = performance.now() + 30;
    let x = 0;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    const used = (preciseCpuSecondsOf(process.pid) as number) - before;
    expect(x).toBeGreaterThan(0);
    // The loop ran ~30 ms on a CPU (less only if the machine took the core away for a while).
    expect(used).toBeGreaterThan(0.015);
    expect(used).toBeLessThan(0.5);
    // Not whole ticks: the nanosecond sum is almost never a multiple of 10 ms.
    expect(Math.abs(used * 100 - Math.round(used * 100))).toBeGreaterThan(1e-6);
    // The two agree within a tick or two (the tick count rounds each thread down).
    expect(Math.abs(used - ((cpuSecondsOf(process.pid) as number) - ticksBefore))).toBeLessThan(0.05);
  });
});

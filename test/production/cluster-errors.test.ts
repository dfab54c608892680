/**
 * Finding 9 of issue 61: cluster mode says what one worker says. With WORKERS=2 (`npm start`'s built
 * entry, production shape): PORT in use exited 1 (the docs and WORKERS=1 say 69); ADMIN_PORT in use was
 * a JSON stack trace with no fix; the banner's `.env` line said the file "set nothing" while it set
 * settings. Each case here is one of those, against what WORKERS=1 prints.
 */
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProductionBed, productionBed, startBuilt, until } from "../support/production-bed.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("cluster-errors");
let bed: ProductionBed;
beforeAll(async () => {
  bed = await productionBed(dir);
}, 240_000);
afterAll(async () => {
  await bed?.close();
});

async function busyPort(): Promise<[Server, number]> {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  return [busy, (busy.address() as { port: number }).port];
}

/** stderr's non-empty lines. */
const lines = (text: string) => text.split("\n").filter((l) => l.trim());

describe("finding 9: WORKERS=2 exits and explains as WORKERS=1 does", () => {
  it.each(["1", "2"])(
    "PORT in use, WORKERS=%s: exit 69 and one line naming PORT and the fix",
    {
      timeout: 90_000,
    },
    async (workers) => {
      const [busy, port] = await busyPort();
      try {
        const s = startBuilt({ ...bed.env, WORKERS: workers, PORT: String(port), LOG_LEVEL: "silent" });
        expect(await s.exited).toBe(69);
        expect(lines(s.stderr())).toEqual([
          `cannot start: PORT: 127.0.0.1:${port}: address in use (EADDRINUSE): another process listens there; stop it or set another PORT`,
        ]);
      } finally {
        busy.close();
      }
    },
  );

  it.each(["1", "2"])(
    "ADMIN_PORT in use, WORKERS=%s: exit 69 and one line naming ADMIN_PORT and the fix",
    {
      timeout: 90_000,
    },
    async (workers) => {
      const [busy, port] = await busyPort();
      try {
        const s = startBuilt({ ...bed.env, WORKERS: workers, ADMIN_PORT: String(port), LOG_LEVEL: "silent" });
        expect(await s.exited).toBe(69);
        expect(lines(s.stderr())).toEqual([
          `cannot start: ADMIN_PORT: 127.0.0.1:${port}: address in use (EADDRINUSE): another process listens there; stop it or set another ADMIN_PORT`,
        ]);
        expect(s.stdout()).not.toMatch(/"stack"|\n\s+at /);
      } finally {
        busy.close();
      }
    },
  );

  it("the banner's .env line names what the file set, with WORKERS=2 as with one", {
    timeout: 90_000,
  }, async () => {
    const cwd = fileTempDir("cluster-dotenv");
    const path = join(cwd, ".env");
    writeFileSync(path, "SHUTDOWN_DRAIN_MS=200\nLOG_QUOTE_SAMPLE=0\n");
    const s = startBuilt({ ...bed.env, WORKERS: "2" }, { cwd });
    try {
      await s.started;
      // Stopped once both serve (a signal during a worker's start is a case of its own, below).
      await until(() => s.stdout().includes('"msg":"all workers listening"'));
      expect(s.stderr()).toContain(
        `.env:        ${path} (set LOG_QUOTE_SAMPLE, SHUTDOWN_DRAIN_MS; the environment's own values win)`,
      );
      expect(s.stderr()).toContain("  workers:     2 (node:cluster;");
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  it("SIGTERM while the second worker still starts: that worker drains too once it listens, exit 0", {
    timeout: 90_000,
  }, async () => {
    const s = startBuilt({ ...bed.env, WORKERS: "2", SHUTDOWN_DRAIN_MS: "200" });
    // At the first worker's banner the second is usually still composing.
    await s.started;
    const stopped = Date.now();
    expect(await s.stop()).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(15_000);
  });
});

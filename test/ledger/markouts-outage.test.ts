/**
 * Issue 60: no markout is lost to a Redis outage. A markout that comes due while the ledger outbox (a
 * Redis stream) cannot take it ("Stream isn't writeable and enableOfflineQueue options is false") is
 * kept, counted in rfq_markouts_pending, and appended once Redis answers again, in order. A real
 * redis-server of the test's own (with its append-only file, so what it held before the kill is still
 * there) is SIGKILLed across the markout's due time and started again; the service's own fail-fast
 * client and the Redis fill journal are the path under test.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { PriceSource } from "../../pricing/interface.ts";
import { RedisFillJournal } from "../../src/journal/redis.ts";
import { MAX_PENDING_MARKOUTS, MarkoutTracker } from "../../src/ledger/markouts.ts";
import type { LedgerRecord, MarkoutRecord } from "../../src/ledger/records.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { createRedisClient, type RedisClient } from "../../src/redis/client.ts";
import { metricSum } from "../../tooling/metrics.ts";
import { type KillableRedis, killableRedis } from "../../tooling/redis-server.ts";
import { testConfig } from "../support/config.ts";

const source: PriceSource = {
  name: "static",
  maxAgeMs: Number.POSITIVE_INFINITY,
  price: (pair) =>
    pair === "SOL/USDC" ? { mid: { num: 100n, den: 1n }, updatedAtMs: Date.now() } : undefined,
  start: async () => {},
  close: async () => {},
};
/** The maker sold 1 SOL for 100.5 USDC. */
const SOLD = { pair: "SOL/USDC", side: "sell", baseAmount: "1000000000", quoteAmount: "100500000" } as const;

let server: KillableRedis | undefined;
let client: RedisClient | undefined;
let tracker: MarkoutTracker | undefined;
afterEach(async () => {
  tracker?.close();
  client?.disconnect();
  await server?.stop();
  server = tracker = client = undefined;
});

const until = async (what: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("markouts across a Redis outage", () => {
  it("keeps a markout that came due while Redis was down (counted as pending) and appends it once Redis is back", {
    timeout: 30_000,
  }, async () => {
    server = await killableRedis({ persistence: true });
    client = createRedisClient(server.url, { client: "test" });
    const journal = new RedisFillJournal(client, "markouts-outage:");
    const metrics = new Metrics();
    const pending = async () => metricSum(await metrics.registry.metrics(), "rfq_markouts_pending");
    tracker = new MarkoutTracker({
      config: testConfig(),
      priceSources: new Map([["static", source]]),
      journal,
      metrics,
      log: createLogger("silent"),
      horizons: [
        { label: "0s", ms: 0 },
        { label: "1s", ms: 1_000 },
      ],
      sampleMs: 100,
      retryMs: 50,
    });
    tracker.start();
    await until(() => client?.status === "ready");
    tracker.onLanded("sig-outage", "q-outage", SOLD);
    await tracker.idle();
    const s = server;
    await s.kill();
    // The 1 s horizon comes due with Redis down: kept, not lost.
    await until(() => (tracker as MarkoutTracker).kept === 1, 5_000);
    expect(await pending()).toBe(1);
    await s.start();
    await until(() => (tracker as MarkoutTracker).kept === 0);
    await tracker.idle();
    expect(await pending()).toBe(0);

    const entries = await journal.takeLedger("test", 10, 30_000);
    const markouts = entries
      .map((e) => e.record)
      .filter((r: LedgerRecord): r is MarkoutRecord => r.kind === "markout");
    expect(markouts.map((m) => [m.txSignature, m.horizon])).toEqual([
      ["sig-outage", "0s"],
      ["sig-outage", "1s"],
    ]);
    expect(metricSum(await metrics.registry.metrics(), "rfq_markouts_dropped_total")).toBe(0);
  });

  it("keeps at most MAX_PENDING_MARKOUTS, dropping the oldest and counting it", async () => {
    const metrics = new Metrics();
    const refused = {
      appendLedger: async () => {
        throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
      },
    } as unknown as RedisFillJournal;
    tracker = new MarkoutTracker({
      config: testConfig(),
      priceSources: new Map([["static", source]]),
      journal: refused,
      metrics,
      log: createLogger("silent"),
      horizons: [{ label: "0s", ms: 0 }],
      retryMs: 60_000,
    });
    for (let i = 0; i < MAX_PENDING_MARKOUTS + 3; i++) tracker.onLanded(`sig-${i}`, `q-${i}`, SOLD);
    await until(() => (tracker as MarkoutTracker).kept === MAX_PENDING_MARKOUTS);
    const text = await metrics.registry.metrics();
    expect(metricSum(text, "rfq_markouts_pending")).toBe(MAX_PENDING_MARKOUTS);
    expect(metricSum(text, "rfq_markouts_dropped_total")).toBe(3);
  });
});

/**
 * The ledger's PostgreSQL client across an outage of its server: queries made while it is down fail
 * (each a failed connection), and once it accepts connections again the next query is answered
 * within a second, however long the outage was. postgres.js' own wait before connecting again grows
 * to 20 s with the failures in a row (3^n / 100 s), so after a few seconds down the first query after
 * the server's return waited seconds, and quoting with it (the fill path's ledger health). A server
 * of the test's own (tooling/processes.ts startPostgres), stopped and started again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RECONNECT_DELAY_S, PostgresSqlClient, reconnectDelayS } from "../../src/ledger/postgres.ts";
import { startPostgres } from "../../tooling/processes.ts";

describe("reconnectDelayS", () => {
  it("follows postgres.js' curve (3^n / 100 s, jittered down to half) and never waits longer than the cap", () => {
    expect(reconnectDelayS(1, () => 1)).toBeCloseTo(0.03);
    expect(reconnectDelayS(1, () => 0)).toBeCloseTo(0.015);
    for (let n = 1; n <= 40; n++) {
      expect(reconnectDelayS(n, () => 1)).toBeLessThanOrEqual(MAX_RECONNECT_DELAY_S);
      expect(reconnectDelayS(n, () => 0)).toBeGreaterThan(0);
    }
    expect(reconnectDelayS(10, () => 1)).toBe(MAX_RECONNECT_DELAY_S);
  });
});

describe("the ledger's PostgreSQL client across a server outage", () => {
  let pg: Awaited<ReturnType<typeof startPostgres>>;
  let db: PostgresSqlClient;
  beforeAll(async () => {
    pg = await startPostgres();
    db = new PostgresSqlClient(pg.url);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await pg?.stop();
  });

  it("answers a query within a second of the server accepting connections again after 5 s down with queries failing throughout", {
    timeout: 60_000,
  }, async () => {
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    await pg.halt();
    // A query every 100 ms while it is down (the health probe and the ledger writer do as much).
    const downUntil = Date.now() + 5_000;
    let failed = 0;
    while (Date.now() < downUntil) {
      await Promise.race([
        db.query("SELECT 1").then(
          () => undefined,
          () => failed++,
        ),
        new Promise((r) => setTimeout(r, 1_000)),
      ]);
      await new Promise((r) => setTimeout(r, 100));
    }
    await pg.resume();
    const backAt = Date.now();
    let answeredMs = Number.NaN;
    while (Date.now() - backAt < 15_000) {
      const ok = await Promise.race([
        db.query("SELECT 1").then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((r) => setTimeout(() => r(false), 250)),
      ]);
      if (ok) {
        answeredMs = Date.now() - backAt;
        break;
      }
    }
    console.log(
      `[postgres outage] ${failed} queries failed while down; answered ${answeredMs} ms after it was back`,
    );
    expect(failed).toBeGreaterThan(5);
    expect(answeredMs).toBeLessThan(1_000);
  });
});

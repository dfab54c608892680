/**
 * The ledger writer drains the fill journal's outbox (Redis stream, or memory) into the ledger
 * (a real PostgreSQL server): every record lands once, the outbox empties, a writer that died holding
 * entries is taken over (and then leaves the consumer group), and a failed database write leaves its batch in the outbox for the next pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FillJournal } from "../../src/journal/interface.ts";
import { MemoryFillJournal } from "../../src/journal/memory.ts";
import { journalKeys, RedisFillJournal } from "../../src/journal/redis.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { LedgerRecord } from "../../src/ledger/records.ts";
import { LedgerWriter } from "../../src/ledger/writer.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { fileRedis } from "../support/redis.ts";
import { decision, freshLedger, settlement } from "./support.ts";

const { redis, prefix } = fileRedis();
const log = createLogger("silent");
let ledger: Ledger;
let journals = 0;

beforeAll(async () => {
  ledger = await freshLedger("postgres");
}, 60_000);
afterAll(async () => {
  await ledger?.db.close();
});

const makers: [string, () => FillJournal][] = [
  ["redis", () => new RedisFillJournal(redis, `${prefix}${journals++}:`)],
  ["memory", () => new MemoryFillJournal()],
];

const rowsOf = async (records: LedgerRecord[]) => {
  const ids = new Set(records.map((r) => r.quoteId));
  const decisions = (await ledger.decisions()).filter((r) => ids.has(r.quote_id));
  const fills = (await ledger.fills()).filter((r) => ids.has(r.quote_id));
  return { decisions, fills };
};

describe.each(makers)("ledger writer over the %s journal", (_name, makeJournal) => {
  it("finding 4: stamps every decision and fill row with the mode and the maker that wrote it", async () => {
    const journal = makeJournal();
    const d = decision();
    const records: LedgerRecord[] = [d, settlement(d)];
    for (const r of records) await journal.appendLedger(r);
    const stamp = { mode: "production", maker: "Maker1111111111111111111111111111111111111" };
    const writer = new LedgerWriter({ journal, ledger, metrics: new Metrics(), log, stamp });
    expect(await writer.drain()).toBe(2);
    for (const table of ["swap_decisions", "fills"]) {
      const rows = await ledger.db.query<{ mode: string; maker: string }>(
        `SELECT mode, maker FROM ${table} WHERE quote_id = $1`,
        [d.quoteId],
      );
      expect(rows).toEqual([stamp]);
    }
  });

  it("writes every journaled decision and settlement once and empties the outbox", async () => {
    const journal = makeJournal();
    const metrics = new Metrics();
    const records: LedgerRecord[] = [];
    for (let i = 0; i < 25; i++) {
      const d = decision();
      records.push(d, settlement(d));
    }
    for (const r of records) await journal.appendLedger(r);
    const writer = new LedgerWriter({ journal, ledger, metrics, log, batch: 7 });
    expect(await writer.drain()).toBe(50);
    expect(await journal.ledgerBacklog()).toBe(0);
    const { decisions, fills } = await rowsOf(records);
    expect(decisions).toHaveLength(25);
    expect(fills).toHaveLength(25);
    expect(await writer.drain()).toBe(0);
    const text = await metrics.registry.metrics();
    expect(text).toContain('rfq_ledger_records_written_total{kind="decision"} 25');
    expect(text).toContain("rfq_ledger_backlog 0");
  });

  it("takes over entries a dead writer took and never acknowledged, once they are stale", async () => {
    const journal = makeJournal();
    const records = [decision(), decision(), decision()];
    for (const r of records) await journal.appendLedger(r);
    // A writer takes them, writes one of them, and dies before acknowledging anything.
    const taken = await journal.takeLedger("dead-writer", 10, 60_000);
    expect(taken).toHaveLength(3);
    await ledger.write([taken[0]?.record as LedgerRecord]);
    const fresh = new LedgerWriter({ journal, ledger, metrics: new Metrics(), log, staleMs: 60_000 });
    expect(await fresh.drain()).toBe(0); // not stale yet: still the dead writer's
    const takeover = new LedgerWriter({ journal, ledger, metrics: new Metrics(), log, staleMs: 0 });
    expect(await takeover.drain()).toBe(3);
    expect(await journal.ledgerBacklog()).toBe(0);
    expect((await rowsOf(records)).decisions).toHaveLength(3);
  });

  it("leaves a batch whose write failed in the outbox and writes it on the next pass", async () => {
    const journal = makeJournal();
    const records = [decision(), decision()];
    for (const r of records) await journal.appendLedger(r);
    let failNext = true;
    const flaky = new (class extends Ledger {
      override async write(batch: readonly LedgerRecord[]): Promise<void> {
        if (failNext) {
          failNext = false;
          throw new Error("connection reset");
        }
        return super.write(batch);
      }
    })(ledger.db);
    const metrics = new Metrics();
    const writer = new LedgerWriter({ journal, ledger: flaky, metrics, log });
    expect(await writer.drain()).toBe(0);
    expect(await journal.ledgerBacklog()).toBe(2);
    expect(await metrics.registry.metrics()).toContain("rfq_ledger_write_errors_total 1");
    expect(await writer.drain()).toBe(2);
    expect((await rowsOf(records)).decisions).toHaveLength(2);
  });

  it("tells the fill path's health each write's outcome with when the write started, not when it ended", async () => {
    const journal = makeJournal();
    await journal.appendLedger(decision());
    let failNext = true;
    // A write that takes 150 ms: one begun while the database was down may fail after it is back.
    const slow = new (class extends Ledger {
      override async write(batch: readonly LedgerRecord[]): Promise<void> {
        await new Promise((r) => setTimeout(r, 150));
        if (failNext) {
          failNext = false;
          throw new Error("the database system is starting up");
        }
        return super.write(batch);
      }
    })(ledger.db);
    const told: { outcome: string; startedAtMs: number | undefined; atMs: number }[] = [];
    const health = {
      ok: (startedAtMs?: number) => told.push({ outcome: "ok", startedAtMs, atMs: Date.now() }),
      fail: (_e: unknown, startedAtMs?: number) =>
        told.push({ outcome: "fail", startedAtMs, atMs: Date.now() }),
    };
    const writer = new LedgerWriter({ journal, ledger: slow, metrics: new Metrics(), log, health });
    await writer.drain();
    await writer.drain();
    expect(told.map((t) => t.outcome)).toEqual(["fail", "ok"]);
    for (const t of told) expect(t.atMs - (t.startedAtMs ?? t.atMs)).toBeGreaterThanOrEqual(140);
  });
});

describe("ledger writer over the redis journal: the consumer group", () => {
  it("removes a dead writer from the group once its entries are taken over, and keeps one still holding entries", async () => {
    const p = `${prefix}prune:`;
    const journal = new RedisFillJournal(redis, p);
    const group = async () => {
      const raw = (await redis.call("XINFO", "CONSUMERS", journalKeys(p).ledger, "ledger")) as unknown[][];
      return raw.map((c) => String(c[c.indexOf("name") + 1]));
    };
    for (const r of [decision(), decision()]) await journal.appendLedger(r);
    // One writer takes both entries and dies; a second later takes the next entry and is still busy.
    expect(await journal.takeLedger("dead-writer", 10, 60_000)).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 1_000));
    await journal.appendLedger(decision());
    expect(await journal.takeLedger("busy-writer", 10, 60_000)).toHaveLength(1);
    expect(await group()).toEqual(expect.arrayContaining(["dead-writer", "busy-writer"]));

    const takeover = new LedgerWriter({ journal, ledger, metrics: new Metrics(), log, staleMs: 800 });
    expect(await takeover.drain()).toBe(2);
    const after = await group();
    expect(after).not.toContain("dead-writer");
    expect(after).toContain("busy-writer");
    expect(await journal.ledgerBacklog()).toBe(1);
  });
});

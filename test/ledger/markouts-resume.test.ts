/**
 * Finding 9 of issue 47: markouts survive a restart. A fill settled late (by a process restarted
 * meanwhile) takes each past horizon's mid at that horizon's time from its landing, not the mid at
 * settlement; at start, the landed fills in the ledger whose horizons are not all taken are picked up
 * again, their horizons still to come sampled and those past before this process saw a price left out.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PricePoint, PriceSource } from "../../pricing/interface.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import type { MarkoutRecord } from "../../src/ledger/records.ts";
import { createHarness, type Harness } from "../support/harness.ts";
import { markoutTracker, SOLD, settableSource } from "./markout-support.ts";
import { decision, freshLedger, settlement } from "./support.ts";

const movingSource = () => settableSource({ mid: { num: 100n, den: 1n }, updatedAtMs: 0 });

afterEach(() => {
  vi.useRealTimers();
});

describe("finding 9: markouts from the landing, across a restart", () => {
  it("a fill settled late takes, for each horizon already past, the mid at that time from its landing", async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const price = movingSource();
    const { t, records } = markoutTracker(
      [
        { label: "0s", ms: 0 },
        { label: "5s", ms: 5_000 },
        { label: "60s", ms: 60_000 },
      ],
      price.source,
      1_000,
    );
    t.start();
    const landedAtMs = Date.now();
    vi.advanceTimersByTime(20_000);
    price.set(90n);
    // Settled 30 s after it landed: the mid moved in between.
    vi.advanceTimersByTime(10_000);
    t.onLanded("sig-late", "q-late", SOLD, landedAtMs);
    await t.idle();
    expect(records.map((r) => [r.horizon, r.mid, r.midAtFill, r.atMs])).toEqual([
      ["0s", 100, 100, landedAtMs],
      ["5s", 100, 100, landedAtMs + 5_000],
    ]);
    vi.advanceTimersByTime(30_000);
    await t.idle();
    expect(records.map((r) => [r.horizon, r.mid, r.atMs])).toContainEqual(["60s", 90, landedAtMs + 60_000]);
    expect(t.scheduled).toBe(0);
    t.close();
  });

  it("a fill sent by a process that died before it landed takes its 0 s mid from the sender's journal, not from a later price", async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const price = movingSource();
    price.set(90n);
    const { t, records } = markoutTracker(
      [
        { label: "0s", ms: 0 },
        { label: "5s", ms: 5_000 },
      ],
      price.source,
      1_000,
    );
    // Sent 3 s before this process started (the sender was SIGKILLed): it saw no price at the send.
    const sentAtMs = Date.now() - 3_000;
    t.start();
    t.onLanded("sig-killed", "q-killed", { ...SOLD, midAtSend: 100 }, sentAtMs);
    await t.idle();
    expect(records.map((r) => [r.horizon, r.mid, r.midAtFill, r.atMs, r.markoutBps])).toEqual([
      ["0s", 100, 100, sentAtMs, 50],
    ]);
    // Its 5 s horizon comes due in this process's time: the mid then.
    vi.advanceTimersByTime(2_000);
    await t.idle();
    expect(records.map((r) => [r.horizon, r.mid, r.midAtFill])).toContainEqual(["5s", 90, 100]);
    t.close();
  });

  it("a fill sent by a process that saw no price either leaves its 0 s horizon out", async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const price = movingSource();
    const { t, records } = markoutTracker([{ label: "0s", ms: 0 }], price.source, 1_000);
    t.start();
    t.onLanded("sig-unpriced", "q-unpriced", SOLD, Date.now() - 3_000);
    await t.idle();
    expect(records).toEqual([]);
    t.close();
  });

  it("after a restart, takes up from the ledger the landed fills whose horizons are not all in it", {
    timeout: 60_000,
  }, async () => {
    const ledger: Ledger = await freshLedger("postgres");
    try {
      const now = Date.now();
      const fill = (sentAtMs: number) => {
        const d = decision({
          pair: "SOL/USDC",
          side: "sell",
          quote: { ...decision().quote!, amountIn: "100500000", amountOut: "1000000000" },
        });
        return { d, s: settlement(d, { sentAtMs, settledAtMs: sentAtMs + 500 }) };
      };
      // Landed 1 s before this "process" started: its 0 s markout was taken before the restart.
      const unfinished = fill(now - 1_000);
      // Every horizon taken; and one landed longer ago than the longest horizon.
      const finished = fill(now - 1_500);
      const old = fill(now - 600_000);
      const markout = (txSignature: string, horizon: string, horizonMs: number): MarkoutRecord => ({
        kind: "markout",
        txSignature,
        quoteId: "q",
        horizon,
        horizonMs,
        pair: "SOL/USDC",
        side: "sell",
        price: 100.5,
        midAtFill: 100,
        mid: 100,
        markoutBps: 50,
        atMs: now - 1_000 + horizonMs,
      });
      await ledger.write([
        unfinished.d,
        unfinished.s,
        finished.d,
        finished.s,
        old.d,
        old.s,
        markout(unfinished.d.txSignature!, "0s", 0),
        ...["0s", "5s", "60s"].map((h, i) => markout(finished.d.txSignature!, h, [0, 200, 3_000][i]!)),
      ]);

      const price = movingSource();
      price.set(95n);
      const { t, records } = markoutTracker(
        [
          { label: "0s", ms: 0 },
          { label: "5s", ms: 200 },
          { label: "60s", ms: 3_000 },
        ],
        price.source,
        100,
      );
      t.start();
      expect(await t.resume(ledger.db)).toBe(1);
      // The 0 s horizon is in the ledger; the 5 s one passed before this process saw a price.
      expect(t.scheduled).toBe(1);
      const until = Date.now() + 20_000;
      while (t.scheduled > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      await t.idle();
      t.close();
      expect(records.map((r) => [r.txSignature, r.horizon, r.mid, r.midAtFill, r.atMs])).toEqual([
        [unfinished.d.txSignature, "60s", 95, 100, now - 1_000 + 3_000],
      ]);
      expect(records[0]?.markoutBps).toBeCloseTo(((100.5 - 95) / 95) * 10_000, 9);
    } finally {
      await ledger.db.close();
    }
  });

  it("a service composed on a ledger holding an unfinished fill writes that fill's horizon still to come", {
    timeout: 60_000,
  }, async () => {
    const ledger: Ledger = await freshLedger("postgres");
    let h: Harness | undefined;
    try {
      const sentAtMs = Date.now() - 1_500;
      const d = decision({
        pair: "SOL/USDC",
        side: "sell",
        quote: { ...decision().quote!, amountIn: "180000000", amountOut: "1000000000" },
      });
      await ledger.write([d, settlement(d, { sentAtMs, settledAtMs: sentAtMs + 200 })]);
      h = await createHarness({
        ledger,
        ledgerWriter: { intervalMs: 50 },
        markoutHorizons: [
          { label: "0s", ms: 0 },
          { label: "60s", ms: 3_000 },
        ],
      });
      const row = async () =>
        (
          await ledger.db.query<{ horizon: string; mid: number; at_ms: string }>(
            "SELECT horizon, mid, at_ms::text AS at_ms FROM markouts WHERE tx_signature = $1",
            [d.txSignature!],
          )
        ).map((r) => [r.horizon, Number(r.mid), Number(r.at_ms)]);
      const until = Date.now() + 20_000;
      while ((await row()).length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      // The shipped static SOL/USDC mid; the 0 s horizon passed (more than a sample ago) before this
      // service saw a price, so it is left out.
      expect(await row()).toEqual([["60s", 180.25, sentAtMs + 3_000]]);
    } finally {
      await h?.close();
      await ledger.db.close();
    }
  });
});

/**
 * Issue 60's soak: a fill's 300 s markout came due while its webhook was SIGKILLed and restarting
 * (1.4 s); the restarted process had seen no price at the due time and left the horizon out. A horizon
 * with no mid at its due time now takes the first live mid seen up to two samples after it (as the
 * history takes one up to two samples before), and is left out only past that.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PricePoint, PriceSource } from "../../pricing/interface.ts";
import type { MarkoutHorizon } from "../../src/ledger/markouts.ts";
import { markoutTracker, SOLD, settableSource } from "./markout-support.ts";

const silentSource = () => settableSource();

const FIVE_MIN: MarkoutHorizon[] = [{ label: "300s", ms: 300_000 }];

const tracker = (source: PriceSource) => markoutTracker(FIVE_MIN, source, 1_000);

afterEach(() => {
  vi.useRealTimers();
});

describe("a markout horizon with no mid at its due time", () => {
  it("due while no process ran: takes the first mid the restarted process sees within two samples after it", async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const price = silentSource();
    const { t, records } = tracker(price.source);
    t.start();
    // Landed 300.5 s ago: its 300 s horizon passed half a second before this process started.
    const landedAtMs = Date.now() - 300_500;
    t.onLanded("sig-killed", "q-killed", SOLD, landedAtMs);
    await t.idle();
    expect(records).toEqual([]);
    expect(t.scheduled).toBe(1);
    vi.advanceTimersByTime(1_000);
    price.set(90n);
    vi.advanceTimersByTime(100);
    await t.idle();
    expect(records.map((r) => [r.horizon, r.mid, r.atMs])).toEqual([["300s", 90, landedAtMs + 300_000]]);
    expect(records[0]?.markoutBps).toBeCloseTo(((100.5 - 90) / 90) * 10_000, 9);
    expect(t.scheduled).toBe(0);
    t.close();
  });

  it("due on its timer while the source has no answer: takes the source's next answer within two samples", async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const price = silentSource();
    const { t, records } = tracker(price.source);
    t.start();
    const landedAtMs = Date.now();
    t.onLanded("sig-gap", "q-gap", SOLD, landedAtMs);
    vi.advanceTimersByTime(300_000 + 1_800);
    price.set(95n);
    vi.advanceTimersByTime(100);
    await t.idle();
    expect(records.map((r) => [r.horizon, r.mid, r.atMs])).toEqual([["300s", 95, landedAtMs + 300_000]]);
    t.close();
  });

  it("is left out when no mid comes within two samples after it, never given a later one", async () => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    const price = silentSource();
    const { t, records } = tracker(price.source);
    t.start();
    t.onLanded("sig-dark", "q-dark", SOLD, Date.now() - 300_500);
    vi.advanceTimersByTime(1_500);
    expect(t.scheduled).toBe(0);
    price.set(90n);
    vi.advanceTimersByTime(5_000);
    await t.idle();
    expect(records).toEqual([]);
    t.close();
  });
});

/**
 * `bounded`: every port call on the swap path and the quote path's store write run through it, so a
 * port that never answers becomes a reason instead of a hung request.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { bounded, retried } from "../../src/lib/bounded.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("bounded", () => {
  it("resolves with the work's value when it settles first, and clears its timer", async () => {
    vi.useFakeTimers();
    const out = bounded(async () => 42, 1_000);
    await expect(out).resolves.toEqual({ ok: true, value: 42 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("resolves with the work's error as text, never rejecting", async () => {
    await expect(bounded(() => Promise.reject(new Error("ECONNREFUSED")), 1_000)).resolves.toEqual({
      ok: false,
      timedOut: false,
      error: "ECONNREFUSED",
    });
    await expect(bounded(() => Promise.reject("plain"), 1_000)).resolves.toEqual({
      ok: false,
      timedOut: false,
      error: "plain",
    });
  });

  it("answers a timeout naming the bound once `ms` pass, and ignores the work's late value", async () => {
    vi.useFakeTimers();
    let finish: (v: string) => void = () => {};
    const out = bounded(() => new Promise<string>((r) => (finish = r)), 250);
    await vi.advanceTimersByTimeAsync(249);
    let settled = false;
    void out.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    finish("late");
    await expect(out).resolves.toEqual({ ok: false, timedOut: true, error: "no answer within 250 ms" });
  });

  it("swallows a rejection that comes after the timeout (no unhandled rejection)", async () => {
    vi.useFakeTimers();
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on("unhandledRejection", onUnhandled);
    try {
      let fail: (e: Error) => void = () => {};
      const out = bounded(() => new Promise<never>((_, r) => (fail = r)), 10);
      await vi.advanceTimersByTimeAsync(10);
      expect((await out).ok).toBe(false);
      fail(new Error("too late"));
      vi.useRealTimers();
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("turns a synchronous throw into an error outcome and leaves no timer behind", async () => {
    vi.useFakeTimers();
    const out = bounded(() => {
      throw new Error("not connected");
    }, 1_000);
    await expect(out).resolves.toEqual({ ok: false, timedOut: false, error: "not connected" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("does not start the work when no time is left", async () => {
    const work = vi.fn(async () => 1);
    await expect(bounded(work, 0)).resolves.toEqual({
      ok: false,
      timedOut: true,
      error: "no time left in the swap budget",
    });
    expect(work).not.toHaveBeenCalled();
  });
});

describe("retried", () => {
  /** A read whose first `lost` calls never answer (lost in a stall), the next ones answering `value`. */
  const lostThenAnswered = (lost: number, value: string) => {
    let calls = 0;
    const work = vi.fn(() => (++calls <= lost ? new Promise<string>(() => {}) : Promise.resolve(value)));
    return work;
  };

  it("answers at once, asking once, when the first call answers", async () => {
    const work = vi.fn(async () => 7);
    await expect(retried(work, 1_000, 100)).resolves.toEqual({ ok: true, value: 7 });
    expect(work).toHaveBeenCalledTimes(1);
  });

  it("asks again with a fresh call after an attempt that never answers, within the time given", async () => {
    vi.useFakeTimers();
    const work = lostThenAnswered(1, "clock");
    const out = retried(work, 2_000, 500, 100);
    await vi.advanceTimersByTimeAsync(500 + 100);
    await expect(out).resolves.toEqual({ ok: true, value: "clock" });
    expect(work).toHaveBeenCalledTimes(2);
  });

  it("pauses between attempts after a failure, doubling the pause up to 1 s", async () => {
    vi.useFakeTimers();
    const starts: number[] = [];
    const t0 = Date.now();
    const work = vi.fn(async () => {
      starts.push(Date.now() - t0);
      throw new Error("rpc 503");
    });
    const out = retried(work, 3_700, 1_000, 250);
    await vi.advanceTimersByTimeAsync(4_000);
    const r = await out;
    expect(starts).toEqual([0, 250, 750, 1_750, 2_750]);
    expect(r).toEqual({ ok: false, timedOut: false, error: "rpc 503 (asked 5 times in 3700 ms)" });
  });

  it("never runs an attempt past the time given: the last one is cut to what is left", async () => {
    vi.useFakeTimers();
    const work = lostThenAnswered(Number.POSITIVE_INFINITY, "never");
    const out = retried(work, 1_300, 1_000, 100);
    await vi.advanceTimersByTimeAsync(1_300);
    await expect(out).resolves.toEqual({
      ok: false,
      timedOut: true,
      error: "no answer within 200 ms (asked 2 times in 1300 ms)",
    });
    expect(work).toHaveBeenCalledTimes(2);
  });

  it("gives the plain failure when no time is left for a second attempt", async () => {
    vi.useFakeTimers();
    const work = vi.fn(() => Promise.reject(new Error("ECONNREFUSED")));
    const out = retried(work, 200, 200, 250);
    await vi.advanceTimersByTimeAsync(300);
    await expect(out).resolves.toEqual({ ok: false, timedOut: false, error: "ECONNREFUSED" });
    expect(work).toHaveBeenCalledTimes(1);
  });
});

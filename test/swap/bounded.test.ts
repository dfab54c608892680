/**
 * `bounded`: every port call on the swap path and the quote path's store write run through it, so a
 * port that never answers becomes a reason instead of a hung request.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { bounded } from "../../src/lib/bounded.ts";

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

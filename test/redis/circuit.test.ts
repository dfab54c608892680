/**
 * The store's circuit breaker (src/redis/circuit.ts), on its own: what the caller gets (the value, the
 * dependency's error, or its own deadline passing first) and what the circuit counts (the call's own
 * outcome, whenever it arrives). The quote path's end-to-end behaviour under a dead or frozen Redis is
 * test/http/redis-outage.error.test.ts.
 */
import { describe, expect, it } from "vitest";
import { Circuit } from "../../src/redis/circuit.ts";

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));
const failLater = (ms: number, message: string) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(message)), ms));

function clock() {
  let t = 1_000_000;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

describe("Circuit.run", () => {
  it("gives the caller the value, or the dependency's error as text", async () => {
    const c = new Circuit({ name: "store" });
    expect(await c.run(() => Promise.resolve(7), 1_000)).toEqual({ ok: true, value: 7 });
    expect(await c.run(() => Promise.reject(new Error("READONLY")), 1_000)).toEqual({
      ok: false,
      timedOut: false,
      error: "READONLY",
    });
    expect(c.state).toBe("closed");
  });

  it("answers a call slower than the caller's deadline as timed out, and does not count it as a failure when it then succeeds", async () => {
    const c = new Circuit({ name: "store", failures: 1 });
    const slow = later(60, "late");
    expect(await c.run(() => slow, 10)).toEqual({
      ok: false,
      timedOut: true,
      error: "no answer within 10 ms",
    });
    await slow;
    await Promise.resolve();
    // One failure would open it (failures: 1): the late success kept it closed.
    expect(c.state).toBe("closed");
    expect(await c.run(() => Promise.resolve(1), 1_000)).toEqual({ ok: true, value: 1 });
  });

  it("counts a timed-out call once the call itself fails, after the caller has had its answer", async () => {
    const c = new Circuit({ name: "store", failures: 1 });
    const dying = failLater(40, "Command timed out");
    dying.catch(() => {});
    expect(await c.run(() => dying, 5)).toMatchObject({ ok: false, timedOut: true });
    expect(c.state).toBe("closed");
    await dying.catch(() => {});
    await Promise.resolve();
    expect(c.state).toBe("open");
  });

  it("with no time left answers at once, and still runs and counts the work", async () => {
    const c = new Circuit({ name: "store", failures: 1 });
    let ran = false;
    const out = await c.run(async () => {
      ran = true;
      throw new Error("down");
    }, 0);
    expect(out).toEqual({ ok: false, timedOut: true, error: "no time left in the swap budget" });
    expect(ran).toBe(true);
    await Promise.resolve();
    expect(c.state).toBe("open");
  });

  it("treats work that throws before returning a promise as a failed call, not an exception", async () => {
    const c = new Circuit({ name: "store" });
    const out = await c.run(() => {
      throw new Error("no connection");
    }, 1_000);
    expect(out).toEqual({ ok: false, timedOut: false, error: "no connection" });
  });

  it("opens after `failures` in a row and refuses without running the work, lets one probe through after openMs, and closes on its success", async () => {
    const t = clock();
    const c = new Circuit({ name: "quoteStore", failures: 3, openMs: 250, now: t.now });
    for (let i = 0; i < 3; i++) await c.run(() => Promise.reject(new Error("ECONNREFUSED")), 1_000);
    expect(c.state).toBe("open");

    let calls = 0;
    const work = () => {
      calls++;
      return Promise.resolve("ok");
    };
    expect(await c.run(work, 1_000)).toEqual({
      ok: false,
      timedOut: false,
      error: "quoteStore unavailable (ECONNREFUSED)",
    });
    expect(calls).toBe(0);

    t.advance(250);
    let release: (v: string) => void = () => {};
    const probe = c.run(() => {
      calls++;
      return new Promise<string>((r) => {
        release = r;
      });
    }, 1_000);
    expect(c.state).toBe("half-open");
    // While the probe is out, everyone else is refused at once.
    expect(await c.run(work, 1_000)).toMatchObject({ ok: false, timedOut: false });
    expect(calls).toBe(1);
    release("ok");
    expect(await probe).toEqual({ ok: true, value: "ok" });
    expect(c.state).toBe("closed");
    expect(await c.run(work, 1_000)).toEqual({ ok: true, value: "ok" });
  });

  it("opens again at once when the probe fails", async () => {
    const t = clock();
    const c = new Circuit({ name: "quoteStore", failures: 2, openMs: 100, now: t.now });
    for (let i = 0; i < 2; i++) await c.run(() => Promise.reject(new Error("down")), 1_000);
    t.advance(100);
    expect(await c.run(() => Promise.reject(new Error("still down")), 1_000)).toMatchObject({ ok: false });
    expect(c.state).toBe("open");
    expect(await c.run(() => Promise.resolve(1), 1_000)).toEqual({
      ok: false,
      timedOut: false,
      error: "quoteStore unavailable (still down)",
    });
  });
});

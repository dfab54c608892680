/**
 * The kill switch and per-pair switches, shared through a real Redis by several instances: pub/sub
 * carries a change at once, the poll catches a flag set by hand, and an instance that cannot read the
 * switches stops quoting (fail closed).
 */
import { describe, expect, it } from "vitest";
import { QuotingBook } from "../../pricing/book.ts";
import type { ControlState, Controls } from "../../pricing/controls/interface.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import { RedisControls } from "../../pricing/controls/redis.ts";
import { createPriceSources } from "../../pricing/sources.ts";
import type { RedisClient } from "../../src/redis/client.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT, testConfig } from "../support/config.ts";
import { deleteKeys, fileRedisOn, type Topology, topologies } from "../support/redis.ts";

const config = testConfig();
const sell = {
  tokenIn: MINT.SOL,
  tokenOut: MINT.USDC,
  amount: 1_000_000_000n,
  quoteType: "exactIn",
} as const;
const jup = { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000n, quoteType: "exactIn" } as const;

/** The shared switches on one topology: each `instance` has its own connection, switches and book. */
function shared(topology: Topology) {
  const { redis, prefix } = fileRedisOn(topology);
  const ctlPrefix = `${prefix}ctl:`;
  const cleanups = cleanupsAfterEach(() => deleteKeys(redis, `${ctlPrefix}*`));
  async function instance(opts: { pollMs?: number; now?: () => number } = {}) {
    const conn: RedisClient = topology.connect();
    const controls = new RedisControls(conn, {
      prefix: ctlPrefix,
      pollMs: opts.pollMs ?? 3_600_000,
      ...opts,
    });
    cleanups.push(async () => {
      await controls.close();
      conn.disconnect();
    });
    await controls.start();
    const book = new QuotingBook(config, createPriceSources(config), { controls });
    return { controls, book, conn };
  }
  return { redis, ctlPrefix, instance };
}

/** Resolves on the next change this instance sees that satisfies `test`. */
function change(c: Controls, test: (s: ControlState) => boolean): Promise<ControlState> {
  return new Promise((resolve) => {
    const off = c.onChange((s) => {
      if (test(s)) {
        off();
        resolve(s);
      }
    });
  });
}

for (const topology of topologies())
  describe(`shared switches (Redis, ${topology.name})`, () => {
    const { redis, ctlPrefix, instance } = shared(topology);
    it("stops quotes on every instance when one pauses, and restarts them on resume (pub/sub)", async () => {
      // Polls an hour apart: only pub/sub can carry the change.
      const a = await instance();
      const b = await instance();
      expect(b.book.price(sell).ok).toBe(true);
      const seen = change(b.controls, (s) => s.paused);
      await a.controls.pause("incident 42");
      expect((await seen).pauseReason).toBe("incident 42");
      for (const i of [a, b]) expect(i.book.price(sell)).toMatchObject({ ok: false, code: "PAUSED" });
      const resumed = change(b.controls, (s) => !s.paused);
      await a.controls.resume();
      await resumed;
      expect(b.book.price(sell).ok).toBe(true);
    });

    it("obeys a pause flag set by hand in Redis, picked up by the poll", async () => {
      const b = await instance({ pollMs: 50 });
      const seen = change(b.controls, (s) => s.paused);
      await redis.set(`${ctlPrefix}paused`, "1"); // no publish: only the poll can see it
      await seen;
      expect(b.book.price(sell)).toMatchObject({ ok: false, code: "PAUSED" });
      const back = change(b.controls, (s) => !s.paused);
      await redis.set(`${ctlPrefix}paused`, "0");
      await back;
      expect(b.book.price(sell).ok).toBe(true);
    });

    it("disables one pair on every instance, and a null override returns it to its configured state", async () => {
      const a = await instance();
      const b = await instance();
      const off = change(b.controls, (s) => s.pairs["JUP/USDC"] === false);
      await a.controls.setPair("JUP/USDC", false);
      await off;
      expect(b.book.price(jup)).toMatchObject({ ok: false, code: "PAIR_DISABLED" });
      expect(b.book.price(sell).ok).toBe(true);
      const cleared = change(b.controls, (s) => !("JUP/USDC" in s.pairs));
      await a.controls.setPair("JUP/USDC", null);
      await cleared;
      expect(b.book.price(jup).ok).toBe(true);
    });

    it("stops quoting (fails closed) when it has not read the switches for failClosedAfterMs, reported as an outage, not a pause", async () => {
      const clock = { t: Date.now() };
      const b = await instance({ now: () => clock.t });
      expect(b.controls.isPaused()).toBe(false);
      b.conn.disconnect(); // Redis unreachable from now on
      await b.controls.read();
      clock.t += 3_001;
      expect(b.controls.state().known).toBe(false);
      expect(b.controls.state().paused).toBe(false);
      const refused = b.book.price(sell);
      expect(refused).toMatchObject({ ok: false, code: "CONTROLS_UNAVAILABLE" });
      expect(refused.ok === false && refused.context).toMatch(/cannot be read/);
    });
  });

describe("switches in one process (memory)", () => {
  it("pauses, resumes and overrides pairs, including enabling a pair the config disables", async () => {
    const cfg = testConfig({}, (f) => ({
      ...f,
      pairs: f.pairs.map((p) => (p.base === "JUP" && p.quote === "USDC" ? { ...p, enabled: false } : p)),
    }));
    const controls = new MemoryControls();
    const book = new QuotingBook(cfg, createPriceSources(cfg), { controls });
    expect(book.price(jup)).toMatchObject({ ok: false, code: "PAIR_DISABLED" });
    await controls.setPair("JUP/USDC", true);
    expect(book.price(jup).ok).toBe(true);
    await controls.pause("maintenance");
    expect(book.price(jup)).toMatchObject({ ok: false, code: "PAUSED" });
    await controls.resume();
    expect(book.price(sell).ok).toBe(true);
  });
});

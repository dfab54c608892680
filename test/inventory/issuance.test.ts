/**
 * The issuance usage (inventory/issuance/): daily caps of permissioned tokens, reserved at claim time,
 * released when a bundle fails, held across instances. Runs on the memory adapter, on one real Redis
 * node (two books on one Redis, as two webhook instances) and on the test Redis Cluster.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { IssuanceReservation, IssuanceUsage } from "../../inventory/issuance/interface.ts";
import { utcDay } from "../../inventory/issuance/interface.ts";
import { MemoryIssuanceUsage } from "../../inventory/issuance/memory.ts";
import { RedisIssuanceUsage } from "../../inventory/issuance/redis.ts";
import type { RedisClient } from "../../src/redis/client.ts";
import { fileRedisOn, topologies } from "../support/redis.ts";

const MINT = "TbiLL1111111111111111111111111111111111111";
const DAY = utcDay(Date.UTC(2026, 10, 23, 12));

const res = (
  quoteId: string,
  amount: bigint,
  over: Partial<IssuanceReservation> = {},
): IssuanceReservation => ({
  quoteId,
  mint: MINT,
  direction: "mint",
  amount,
  dailyCap: 1_000n,
  day: DAY,
  ...over,
});

interface Setup {
  /** A new instance sharing the others' state (one process for memory). */
  instance(): Promise<IssuanceUsage>;
}

function issuanceContract(name: string, setup: () => Setup, shared: boolean): void {
  describe(`issuance usage: ${name}`, () => {
    it("reserves under the daily cap and refuses the reservation that would cross it", async () => {
      const book = await setup().instance();
      expect(await book.reserve(res("q1", 600n))).toEqual({ ok: true });
      expect(await book.reserve(res("q2", 400n))).toEqual({ ok: true });
      const crossing = await book.reserve(res("q3", 1n));
      expect(crossing).toMatchObject({ ok: false, code: "ISSUANCE_CAP_EXCEEDED" });
      expect(book.used(MINT, "mint", DAY)).toBe(1_000n);
    });

    it("is idempotent per quoteId: a retried reservation counts once", async () => {
      const book = await setup().instance();
      await book.reserve(res("q1", 700n));
      expect(await book.reserve(res("q1", 700n))).toEqual({ ok: true });
      expect(book.used(MINT, "mint", DAY)).toBe(700n);
    });

    it("gives the units back when the bundle fails, and keeps them when the fill lands", async () => {
      const book = await setup().instance();
      await book.reserve(res("landed", 300n));
      await book.reserve(res("failed", 500n));
      await book.release("failed");
      await book.commit("landed");
      // A late release of a committed fill changes nothing.
      await book.release("landed");
      expect(book.used(MINT, "mint", DAY)).toBe(300n);
      expect(await book.reserve(res("next", 700n))).toEqual({ ok: true });
    });

    it("counts mints and burns, mints, days apart", async () => {
      const book = await setup().instance();
      await book.reserve(res("m", 1_000n));
      expect(await book.reserve(res("b", 1_000n, { direction: "burn" }))).toEqual({ ok: true });
      expect(await book.reserve(res("d", 1_000n, { day: "2026-11-24" }))).toEqual({ ok: true });
      expect(book.used(MINT, "burn", DAY)).toBe(1_000n);
    });

    it("holds the daily cap across instances racing for the last units", async () => {
      const s = setup();
      const [a, b] = [await s.instance(), await s.instance()];
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve(res(`race-${i}`, 100n))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      if (shared && b instanceof RedisIssuanceUsage) await b.sync();
      expect(b.used(MINT, "mint", DAY)).toBe(1_000n);
    });
  });
}

issuanceContract(
  "memory",
  () => {
    const book = new MemoryIssuanceUsage();
    return { instance: async () => book };
  },
  false,
);

for (const topology of topologies()) {
  const { prefix } = fileRedisOn(topology);
  const conns: RedisClient[] = [];
  const books: IssuanceUsage[] = [];
  afterAll(async () => {
    for (const b of books) await b.close();
    for (const c of conns) c.disconnect();
  });
  issuanceContract(
    `redis (${topology.name})`,
    () => {
      const run = `${prefix}${randomUUID()}:iss:`;
      return {
        instance: async () => {
          // Each instance has its own connection, as separate webhook processes would.
          const conn = topology.connect();
          conns.push(conn);
          const book = new RedisIssuanceUsage(conn, run, { now: () => Date.UTC(2026, 10, 23, 12) });
          await book.start();
          books.push(book);
          return book;
        },
      };
    },
    true,
  );
}

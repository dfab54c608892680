import { describe, expect, it } from "vitest";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { fileRedisOn, mastersOf, topologies } from "../support/redis.ts";
import { quoteStoreContract, sampleQuote } from "./contract.ts";

for (const topology of topologies()) {
  const { redis, prefix } = fileRedisOn(topology);
  const keysMatching = async (pattern: string) =>
    (await Promise.all(mastersOf(redis).map((m) => m.keys(pattern)))).flat().sort();

  let n = 0;
  quoteStoreContract(`redis (${topology.name})`, async () => ({
    store: new RedisQuoteStore(redis, prefix),
    unique: (s) => `${s}-${n++}`,
  }));

  describe(`RedisQuoteStore (${topology.name})`, () => {
    it("keys a quote and its claim under one hash tag, so they share a cluster slot", async () => {
      const store = new RedisQuoteStore(redis, prefix);
      await store.put(sampleQuote("tag-q", "tag-r", Date.now()));
      await store.claim("tag-q", "h", 1);
      expect(await keysMatching(`${prefix}{tag-q}:*`)).toEqual([
        `${prefix}{tag-q}:claim`,
        `${prefix}{tag-q}:q`,
      ]);
    });

    it("keeps one key per quote, expiring at the quote's expiry plus the configured retention", async () => {
      const store = new RedisQuoteStore(redis, prefix, { retainAfterExpiryMs: 2_000 });
      const q = sampleQuote("ttl-q", "ttl-r", Date.now(), 1_000);
      await store.put(q);
      const ttl = await redis.pttl(`${prefix}{ttl-q}:q`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1_000 + 2_000);
      expect(await keysMatching(`${prefix}*ttl-*`)).toEqual([`${prefix}{ttl-q}:q`]);
    });

    it("keeps a claimed quote as long as its claim, so a retried /swap still reads it", async () => {
      const store = new RedisQuoteStore(redis, prefix, { retainAfterExpiryMs: 0 });
      await store.put(sampleQuote("kept-q", "kept-r", Date.now(), 1_000));
      expect((await store.claim("kept-q", "h", Date.now())).kind).toBe("claimed");
      const [quoteTtl, claimTtl] = await Promise.all([
        redis.pttl(`${prefix}{kept-q}:q`),
        redis.pttl(`${prefix}{kept-q}:claim`),
      ]);
      expect(quoteTtl).toBeGreaterThan(1_000);
      expect(Math.abs(quoteTtl - claimTtl)).toBeLessThan(1_000);
    });

    it.skipIf(topology.name === "cluster")(
      "sends the puts of one event-loop turn to Redis in one write",
      async () => {
        const own = topology.connect();
        try {
          const store = new RedisQuoteStore(own, prefix);
          const reads = async () =>
            Number(/total_reads_processed:(\d+)/.exec(await own.info("stats"))?.[1] ?? Number.NaN);
          const before = await reads();
          const now = Date.now();
          const stored = await Promise.all(
            Array.from({ length: 12 }, (_, i) => store.put(sampleQuote(`turn-${i}`, `turn-r${i}`, now))),
          );
          expect(stored.every(Boolean)).toBe(true);
          // Redis counts a read per readable event (up to 16 KiB each): the INFO above, the 12 puts (about
          // 14 KiB) in one write, this INFO; the file's other connections are idle between awaits.
          expect((await reads()) - before).toBeLessThanOrEqual(3);
        } finally {
          own.disconnect();
        }
      },
    );

    it("grants one claim across two independent connections racing", async () => {
      const other = topology.connect();
      try {
        const a = new RedisQuoteStore(redis, prefix);
        const b = new RedisQuoteStore(other, prefix);
        await a.put(sampleQuote("race-q", "race-r", Date.now()));
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).claim("race-q", `h${i}`, i)),
        );
        expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
      } finally {
        other.disconnect();
      }
    });

    it("answers each put of one turn on its own: a claimed quoteId among them is refused, the rest stored", async () => {
      const store = new RedisQuoteStore(redis, prefix);
      const now = Date.now();
      await store.put(sampleQuote("turn-claimed", "turn-r0", now));
      expect((await store.claim("turn-claimed", "h", now)).kind).toBe("claimed");
      const ids = ["turn-a", "turn-claimed", "turn-b"];
      const stored = await Promise.all(ids.map((id, i) => store.put(sampleQuote(id, `turn-r${i + 1}`, now))));
      expect(stored).toEqual([true, false, true]);
      // The claimed quote kept the request it was claimed with.
      expect((await store.get("turn-claimed"))?.requestId).toBe("turn-r0");
      expect((await store.get("turn-b"))?.requestId).toBe("turn-r3");
    });

    it("answers a quote it cannot encode with a rejected promise, never a throw", async () => {
      const store = new RedisQuoteStore(redis, prefix);
      const q = sampleQuote("enc-q", "enc-r", Date.now());
      // A bigint where JSON needs a string: JSON.stringify throws on it.
      const bad = { ...q, response: { ...q.response, amountOut: 1n } } as unknown as typeof q;
      let put: Promise<boolean> | undefined;
      expect(() => {
        put = store.put(bad);
      }).not.toThrow();
      await expect(put).rejects.toThrow(/BigInt/);
      expect(await store.get("enc-q")).toBeUndefined();
    });

    it("fails only the put Redis refuses when several share a turn, and stores the others", async () => {
      const store = new RedisQuoteStore(redis, prefix);
      const now = Date.now();
      // A fractional expiry makes a fractional PX, which Redis refuses ("not an integer").
      const bad = { ...sampleQuote("refused-b", "refused-rb", now), expiresAtMs: now + 55_000.5 };
      const results = await Promise.allSettled([
        store.put(sampleQuote("refused-a", "refused-ra", now)),
        store.put(bad),
        store.put(sampleQuote("refused-c", "refused-rc", now)),
      ]);
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/not an integer/);
      expect(await store.get("refused-a")).toBeDefined();
      expect(await store.get("refused-b")).toBeUndefined();
      expect(await store.get("refused-c")).toBeDefined();
    });
  });
}

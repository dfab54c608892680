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
      const store = new RedisQuoteStore(redis, prefix, Date.now, 2_000);
      const q = sampleQuote("ttl-q", "ttl-r", Date.now(), 1_000);
      await store.put(q);
      const ttl = await redis.pttl(`${prefix}{ttl-q}:q`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1_000 + 2_000);
      expect(await keysMatching(`${prefix}*ttl-*`)).toEqual([`${prefix}{ttl-q}:q`]);
    });

    it("keeps a claimed quote as long as its claim, so a retried /swap still reads it", async () => {
      const store = new RedisQuoteStore(redis, prefix, Date.now, 0);
      await store.put(sampleQuote("kept-q", "kept-r", Date.now(), 1_000));
      expect((await store.claim("kept-q", "h", Date.now())).kind).toBe("claimed");
      const [quoteTtl, claimTtl] = await Promise.all([
        redis.pttl(`${prefix}{kept-q}:q`),
        redis.pttl(`${prefix}{kept-q}:claim`),
      ]);
      expect(quoteTtl).toBeGreaterThan(1_000);
      expect(Math.abs(quoteTtl - claimTtl)).toBeLessThan(1_000);
    });

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
  });
}

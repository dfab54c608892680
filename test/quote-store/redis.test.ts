import type { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { clientSockets } from "../../src/redis/coalesce.ts";
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

    it("writes the compact form by default and the full form with format full, and each store reads what the other wrote (a rolling upgrade)", async () => {
      const compact = new RedisQuoteStore(redis, prefix);
      const full = new RedisQuoteStore(redis, prefix, { format: "full" });
      const a = sampleQuote("fmt-a", "fmt-ra", Date.now());
      const b = sampleQuote("fmt-b", "fmt-rb", Date.now());
      await compact.put(a);
      await full.put(b);
      const [rawA, rawB] = await Promise.all([
        redis.get(`${prefix}{fmt-a}:q`),
        redis.get(`${prefix}{fmt-b}:q`),
      ]);
      expect(JSON.parse(rawA as string)).toMatchObject({ v: 2 });
      expect(rawB).toBe(JSON.stringify(b));
      const viaJson = (q: unknown) => JSON.parse(JSON.stringify(q));
      for (const store of [compact, full]) {
        expect(await store.get("fmt-a")).toEqual(viaJson(a));
        expect(await store.get("fmt-b")).toEqual(viaJson(b));
      }
      // Redis' own count of the key's bytes (value, key, overhead): the compact one well under the full.
      const [memA, memB] = await Promise.all([
        redis.call("MEMORY", "USAGE", `${prefix}{fmt-a}:q`),
        redis.call("MEMORY", "USAGE", `${prefix}{fmt-b}:q`),
      ]);
      expect(Number(memA)).toBeLessThan(0.75 * Number(memB));
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

    it("sends the quotes stored in one turn of the event loop in one write per connection", async () => {
      const store = new RedisQuoteStore(redis, prefix);
      const quotes = Array.from({ length: 12 }, (_, i) =>
        sampleQuote(`batch-q${i}`, `batch-r${i}`, Date.now()),
      );
      // A first round loads the script on every connection these keys reach (EVALSHA, then EVAL once).
      await Promise.all(quotes.map((q) => store.put(q)));

      const writes = new Map<Writable, number>();
      const restore: Array<() => void> = [];
      for (const s of clientSockets(redis)) {
        const socket = s as Writable & { _write: Writable["_write"]; _writev?: Writable["_writev"] };
        const { _write, _writev } = socket;
        const count = () => writes.set(s, (writes.get(s) ?? 0) + 1);
        socket._write = function (...a) {
          count();
          return _write.apply(this, a);
        };
        if (_writev)
          socket._writev = function (...a) {
            count();
            return _writev.apply(this, a);
          };
        restore.push(() => {
          socket._write = _write;
          socket._writev = _writev;
        });
      }
      const turns = store.coalescer.stats.turns;
      let stored: boolean[];
      try {
        stored = await Promise.all(quotes.map((q) => store.put(q)));
      } finally {
        for (const r of restore) r();
      }
      expect(stored).toEqual(quotes.map(() => true));
      expect([...writes.values()].length).toBeGreaterThan(0);
      for (const n of writes.values()) expect(n).toBe(1);
      expect(store.coalescer.stats.turns - turns).toBe(1);
      const read = await Promise.all(quotes.map((q) => store.get(q.quoteId)));
      expect(read.map((q) => q?.quoteId)).toEqual(quotes.map((q) => q.quoteId));
    });
  });
}

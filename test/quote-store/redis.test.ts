import type { Writable } from "node:stream";
import { Cluster } from "ioredis";
import { describe, expect, it } from "vitest";
import { MAX_PUTS_PER_COMMAND, RedisQuoteStore } from "../../src/quote-store/redis.ts";
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
      const batches = { ...store.batchStats };
      let stored: boolean[];
      try {
        stored = await Promise.all(quotes.map((q) => store.put(q)));
      } finally {
        for (const r of restore) r();
      }
      expect(stored).toEqual(quotes.map(() => true));
      expect([...writes.values()].length).toBeGreaterThan(0);
      for (const n of writes.values()) expect(n).toBe(1);
      if (redis instanceof Cluster) {
        // The quotes' keys span slots: one script per quote, corked together.
        expect(store.coalescer.stats.turns - turns).toBe(1);
        expect(store.batchStats).toEqual(batches);
      } else {
        // One script carries the turn's twelve puts.
        expect(store.batchStats.commands - batches.commands).toBe(1);
        expect(store.batchStats.puts - batches.puts).toBe(12);
      }
      const read = await Promise.all(quotes.map((q) => store.get(q.quoteId)));
      expect(read.map((q) => q?.quoteId)).toEqual(quotes.map((q) => q.quoteId));
    });

    // On a cluster every put is its own script (the test above).
    if (!(redis instanceof Cluster))
      it("sends at most MAX_PUTS_PER_COMMAND puts in one command, the rest in the next (single node)", async () => {
        const store = new RedisQuoteStore(redis, prefix);
        const now = Date.now();
        const n = MAX_PUTS_PER_COMMAND + 2;
        const before = { ...store.batchStats };
        const stored = await Promise.all(
          Array.from({ length: n }, (_, i) => store.put(sampleQuote(`cap-q${i}`, `cap-r${i}`, now))),
        );
        expect(stored).toEqual(Array(n).fill(true));
        expect(store.batchStats.commands - before.commands).toBe(2);
        expect(store.batchStats.puts - before.puts).toBe(n);
        expect((await store.get(`cap-q${n - 1}`))?.requestId).toBe(`cap-r${n - 1}`);
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
      // A bigint where JSON needs a string: not compactable, and JSON.stringify throws on it.
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

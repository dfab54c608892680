/**
 * Prices from the maker's pricing engine through a real Redis: loaded at start, pushed by pub/sub to
 * every instance, re-read by the poll, refused when malformed, crossed or older, stale by timestamp.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Config } from "../../config/load.ts";
import { QuotingBook } from "../../pricing/book.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { publishPrice, RedisPriceSource } from "../../pricing/redis.ts";
import { closePriceSources, createPriceSources, startPriceSources } from "../../pricing/sources.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT, testConfig } from "../support/config.ts";
import { deleteKeys, fileRedis } from "../support/redis.ts";

const { redis, prefix } = fileRedis();
const keyPrefix = `${prefix}price:`;
const channel = `${prefix}prices`;
const names = { keyPrefix, channel };

const cleanups = cleanupsAfterEach(() => deleteKeys(redis, `${prefix}*`));

/** Every pair priced by one Redis source named "engine". */
function engineConfig(pollMs = 500, maxAgeMs = 5_000): Config {
  return testConfig({}, (f) => ({
    ...f,
    pairs: f.pairs.map((p) => ({ ...p, priceSource: "engine" })),
    priceSources: { engine: { kind: "redis", keyPrefix, channel, maxAgeMs, pollMs } },
  }));
}

/**
 * One webhook instance's pricing: its own Redis connection, sources and book. `pollMs` beyond what the
 * config allows (1 s) switches the poll off in effect, so only pub/sub can deliver.
 */
async function instance(config: Config, pollMs?: number) {
  const conn = redis.duplicate();
  const sources = createPriceSources(config, { redis: conn });
  if (pollMs !== undefined) {
    const pairs = config.file.pairs.map((p) => `${p.base}/${p.quote}`);
    const maxAgeMs = sources.get("engine")!.maxAgeMs;
    sources.set("engine", new RedisPriceSource("engine", conn, pairs, { ...names, pollMs, maxAgeMs }));
  }
  cleanups.push(async () => {
    await closePriceSources(sources);
    conn.disconnect();
  });
  await startPriceSources(sources);
  const engine = sources.get("engine") as RedisPriceSource;
  return { engine, book: new QuotingBook(config, sources as ReadonlyMap<string, PriceSource>) };
}

/** Resolves on the next accepted update for `pair` whose timestamp is `ts`. */
function nextUpdate(s: RedisPriceSource, pair: string, ts: number): Promise<void> {
  if (s.price(pair)?.updatedAtMs === ts) return Promise.resolve();
  return new Promise((resolve) => {
    const off = s.onUpdate((p, point) => {
      if (p === pair && point.updatedAtMs === ts) {
        off();
        resolve();
      }
    });
  });
}

const sell1Sol = {
  tokenIn: MINT.SOL,
  tokenOut: MINT.USDC,
  amount: 1_000_000_000n,
  quoteType: "exactIn",
} as const;
/**
 * What 1 SOL sells for at `mid` (human, as cents) less 5 bps, in USDC units: priced in whole USDC atoms
 * per lot (the default lot at ~180 USDC/SOL, 100,000 lamports), floored for a bid, times the 10,000
 * lots in 1 SOL (pricing/README.md, "One model of size").
 */
const at5bps = (midCents: bigint) =>
  ((100_000n * midCents * 1_000_000n * 9_995n) / (100n * 10n ** 9n * 10_000n)) * 10_000n;

describe("Redis price source", () => {
  it("loads the prices already in Redis when it starts", async () => {
    await publishPrice(redis, "SOL/USDC", { ts: Date.now(), mid: "180.25" }, names);
    const { book } = await instance(engineConfig());
    expect(book.price(sell1Sol)).toMatchObject({ ok: true, amountOut: at5bps(18025n) });
  });

  it("delivers a published price to every instance through pub/sub", async () => {
    // A poll interval of an hour: only the pub/sub message can bring the update.
    const config = engineConfig();
    const a = await instance(config, 3_600_000);
    const b = await instance(config, 3_600_000);
    expect(a.book.price(sell1Sol)).toMatchObject({ ok: false, code: "PRICE_UNAVAILABLE" });
    const ts = Date.now();
    const both = Promise.all([nextUpdate(a.engine, "SOL/USDC", ts), nextUpdate(b.engine, "SOL/USDC", ts)]);
    await publishPrice(redis, "SOL/USDC", { ts, mid: "181.00" }, names);
    await both;
    for (const { book } of [a, b])
      expect(book.price(sell1Sol)).toMatchObject({ ok: true, amountOut: at5bps(18100n) });
  });

  it("picks up a price written without a publish on its next poll", async () => {
    const { engine, book } = await instance(engineConfig(50));
    const ts = Date.now();
    const seen = nextUpdate(engine, "SOL/USDC", ts);
    await redis.set(`${keyPrefix}SOL/USDC`, JSON.stringify({ ts, mid: "179.50" }));
    await seen;
    expect(book.price(sell1Sol)).toMatchObject({ ok: true, amountOut: at5bps(17950n) });
  });

  it("answers PRICE_STALE once the engine's timestamp is older than maxAgeMs, and quotes again when fresh", async () => {
    const config = engineConfig(500, 2_000);
    const { engine, book } = await instance(config, 3_600_000);
    const old = Date.now() - 2_500;
    let seen = nextUpdate(engine, "SOL/USDC", old);
    await publishPrice(redis, "SOL/USDC", { ts: old, mid: "180.25" }, names);
    await seen;
    expect(book.price(sell1Sol)).toMatchObject({ ok: false, code: "PRICE_STALE" });
    const fresh = Date.now();
    seen = nextUpdate(engine, "SOL/USDC", fresh);
    await publishPrice(redis, "SOL/USDC", { ts: fresh, mid: "180.25" }, names);
    await seen;
    expect(book.price(sell1Sol)).toMatchObject({ ok: true });
  });

  it("prices each side from a published ladder, by size", async () => {
    const { engine, book } = await instance(engineConfig(), 3_600_000);
    const ts = Date.now();
    const seen = nextUpdate(engine, "SOL/USDC", ts);
    await publishPrice(
      redis,
      "SOL/USDC",
      {
        ts,
        bids: [
          { upToBase: "10000000000", price: "180.10" },
          { upToBase: "500000000000", price: "179.00" },
        ],
        asks: [
          { upToBase: "10000000000", price: "180.40" },
          { upToBase: "500000000000", price: "181.50" },
        ],
      },
      names,
    );
    await seen;
    // Taker sells 1 SOL: first bid rung. Sells 20 SOL: the first 10 SOL at the first rung, the next 10
    // at the second (levels swept one by one).
    expect(book.price(sell1Sol)).toMatchObject({ ok: true, amountOut: 180_100_000n, fromLadder: true });
    expect(book.price({ ...sell1Sol, amount: 20_000_000_000n })).toMatchObject({
      amountOut: 1_801_000_000n + 1_790_000_000n,
    });
    // Taker buys exactly 1 SOL: pays the first ask rung, ceiled.
    expect(
      book.price({ tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount: 1_000_000_000n, quoteType: "exactOut" }),
    ).toMatchObject({ ok: true, amountIn: 180_400_000n });
    // A flagged taker's quote (src/toxicity/): each rung 25 bps further out, in whole USDC atoms per
    // lot (100,000 lamports) rounded the maker's way, the part lot at that price rounded once more.
    const odd = 1_000_000_003n;
    const lot = 100_000n;
    const bidPerLot = (lot * 18010n * 10_000n * 9_975n) / (100n * 1_000n * 10_000n * 10_000n); // 17,964
    expect(book.price({ ...sell1Sol, amount: odd, extraSpreadBps: 25 })).toMatchObject({
      ok: true,
      amountOut: (odd * bidPerLot) / lot,
    });
    const scale = 100n * 1_000n * 10_000n * 10_000n;
    const askPerLot = (lot * 18040n * 10_000n * 10_025n + scale - 1n) / scale; // 18,086
    const paid = (odd * askPerLot + lot - 1n) / lot;
    expect(
      book.price({
        tokenIn: MINT.USDC,
        tokenOut: MINT.SOL,
        amount: odd,
        quoteType: "exactOut",
        extraSpreadBps: 25,
      }),
    ).toMatchObject({ ok: true, amountIn: paid });
    // The mid defaults to halfway between the best bid and ask.
    expect(engine.price("SOL/USDC")!.mid).toEqual({
      num: 18010n * 100n + 18040n * 100n,
      den: 2n * 100n * 100n,
    });
  });

  it("refuses a crossed ladder, a malformed payload and an older timestamp, keeping the last good price", async () => {
    const s = new RedisPriceSource("engine", redis, ["SOL/USDC"], { ...names, pollMs: 3_600_000 });
    cleanups.push(() => s.close());
    await s.start();
    const good = Date.now();
    const seen = nextUpdate(s, "SOL/USDC", good);
    await publishPrice(redis, "SOL/USDC", { ts: good, mid: "180.25" }, names);
    await seen;
    const crossed = {
      ts: good + 1,
      bids: [{ upToBase: "1000", price: "181.00" }],
      asks: [{ upToBase: "1000", price: "180.00" }],
    };
    await publishPrice(redis, "SOL/USDC", crossed, names);
    await redis.publish(channel, '{"pair":"SOL/USDC","ts":"soon","mid":"1"}');
    await publishPrice(redis, "SOL/USDC", { ts: good - 1, mid: "1.00" }, names);
    // A last valid update proves the earlier messages were all delivered (pub/sub keeps order).
    const last = good + 2;
    const done = nextUpdate(s, "SOL/USDC", last);
    const mids: string[] = [];
    s.onUpdate((_p, point) => mids.push(`${point.mid.num}/${point.mid.den}`));
    await publishPrice(redis, "SOL/USDC", { ts: last, mid: "180.30" }, names);
    await done;
    expect(mids).toEqual(["18030/100"]);
  });

  it("logs a malformed payload from the engine once, as one line naming the pair and the field, without a stack trace", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(chunk.toString()));
        cb();
      },
    });
    const s = new RedisPriceSource("engine", redis, ["SOL/USDC"], {
      ...names,
      pollMs: 3_600_000,
      log: createLogger("info", sink),
    });
    cleanups.push(() => s.close());
    await redis.set(`${keyPrefix}SOL/USDC`, JSON.stringify({ ts: Date.now(), mid: "180,25" }));
    await s.start();
    await s.poll();
    await s.poll();
    await redis.set(`${keyPrefix}SOL/USDC`, "{not json");
    await s.poll();
    expect(
      lines.map(({ msg, source, pair, field, problem }) => ({ msg, source, pair, field, problem })),
    ).toEqual([
      {
        msg: "redis prices: malformed payload ignored",
        source: "engine",
        pair: "SOL/USDC",
        field: "mid",
        problem: "must be a positive decimal number",
      },
      {
        msg: "redis prices: malformed payload ignored",
        source: "engine",
        pair: "SOL/USDC",
        field: "(payload)",
        problem: expect.stringMatching(/^not JSON: /),
      },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/"stack"|"err"/);
    expect(s.price("SOL/USDC")).toBeUndefined();
  });
});

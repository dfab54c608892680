/**
 * The Pyth (Hermes SSE) price source against a local Hermes stand-in on loopback, replaying a fixture
 * in Hermes' /v2/updates/price/stream format (test/pricing/fixtures/hermes-stream.sse).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Config } from "../../config/load.ts";
import { QuotingBook } from "../../pricing/book.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { PythPriceSource } from "../../pricing/pyth.ts";
import { closePriceSources, createPriceSources, startPriceSources } from "../../pricing/sources.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT, testConfig } from "../support/config.ts";
import { type HermesReplay, type ReplayOptions, startHermesReplay } from "./support/hermes-replay.ts";

const FIXTURE = fileURLToPath(new URL("./fixtures/hermes-stream.sse", import.meta.url));
const SOL_USD = "ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d";
const JUP_USD = "0a0408d619e9380abad35060f9192039ed5042fa6f82301d0e48bb52be830996";
const T0 = 1732240000; // first publish_time in the fixture

const cleanups = cleanupsAfterEach();

async function replay(opts: ReplayOptions): Promise<HermesReplay> {
  const server = await startHermesReplay(FIXTURE, opts);
  cleanups.push(() => server.close());
  return server;
}

function source(url: string, extra: Partial<ConstructorParameters<typeof PythPriceSource>[1]> = {}) {
  const s = new PythPriceSource("pyth", {
    url,
    feeds: {
      "SOL/USDC": { base: SOL_USD },
      "JUP/USDC": { base: JUP_USD },
      "JUP/SOL": { base: JUP_USD, quote: SOL_USD },
    },
    ...extra,
  });
  cleanups.push(() => s.close());
  return s;
}

/** Resolves once `done()` holds, re-checked on every price update (no clock involved). */
function until(s: PythPriceSource, done: () => boolean): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve) => {
    const off = s.onUpdate(() => {
      if (done()) {
        off();
        resolve();
      }
    });
  });
}

describe("Pyth price source (Hermes SSE on loopback)", () => {
  it("asks Hermes for parsed updates of exactly the configured feeds", async () => {
    const hermes = await replay({ rebase: true, limit: 1 });
    const s = source(hermes.url);
    await s.start();
    const req = hermes.requests[0]!;
    expect(req.pathname).toBe("/v2/updates/price/stream");
    expect(new Set(req.searchParams.getAll("ids[]"))).toEqual(new Set([SOL_USD, JUP_USD]));
    expect(req.searchParams.get("parsed")).toBe("true");
  });

  it("turns price x 10^expo into an exact mid dated by publish_time", async () => {
    const hermes = await replay({ rebase: false, limit: 1 });
    const s = source(hermes.url);
    await s.start();
    await until(s, () => s.price("SOL/USDC") !== undefined);
    expect(s.price("SOL/USDC")).toEqual({
      mid: { num: 18025000000n, den: 100000000n },
      updatedAtMs: T0 * 1000,
    });
  });

  it("derives JUP/SOL as JUP/USD over SOL/USD, dated by the older of the two feeds", async () => {
    const hermes = await replay({ rebase: false, limit: 2 });
    const s = source(hermes.url);
    await s.start();
    // The second event moves SOL/USD to 180.30 at T0+1; JUP/USD is still 0.8125 from T0.
    await until(s, () => s.price("JUP/SOL")?.mid.den === 18030000000n * 100000000n);
    const p = s.price("JUP/SOL")!;
    expect(p.mid).toEqual({ num: 81250000n * 100000000n, den: 100000000n * 18030000000n });
    expect(p.updatedAtMs).toBe(T0 * 1000);
  });

  it("drops a price whose confidence is too wide, takes the next good one, and ignores older updates", async () => {
    const hermes = await replay({ rebase: false });
    const s = source(hermes.url, { maxConfBps: 100 });
    const seen: (string | undefined)[] = [];
    s.onUpdate((pair, point) => {
      if (pair === "SOL/USDC") seen.push(point && `${point.mid.num}/${point.mid.den}`);
    });
    await s.start();
    // The fixture's last event is JUP/USD 0.814 at T0+4: everything before it has been applied.
    await until(s, () => s.price("JUP/USDC")?.updatedAtMs === (T0 + 4) * 1000);
    expect(seen).toEqual([
      "18025000000/100000000",
      "18030000000/100000000",
      undefined, // conf 4.00 on 180.20 is 222 bps: unusable
      "18040000000/100000000",
    ]);
    // The out-of-order 170.00 at T0+1 came after 180.40 at T0+3 and was not taken.
    expect(s.price("SOL/USDC")!.mid.num).toBe(18040000000n);
  });

  it("reconnects when the stream ends and carries on from the new connection", async () => {
    const hermes = await replay({ rebase: true, dropAfter: 2 });
    const s = source(hermes.url);
    await s.start();
    await until(s, () => s.price("SOL/USDC")?.mid.num === 18040000000n);
    expect(s.connections).toBe(2);
    expect(hermes.requests).toHaveLength(2);
  });

  it("starts without a price when Hermes refuses the feed ids, instead of failing the boot", async () => {
    const hermes = await replay({ rebase: true });
    const s = new PythPriceSource("pyth", {
      url: hermes.url,
      feeds: { "SOL/USDC": { base: "ab".repeat(32) } },
    });
    cleanups.push(() => s.close());
    await s.start();
    expect(s.connections).toBe(0);
    expect(s.price("SOL/USDC")).toBeUndefined();
  });
});

describe("Pyth prices through the quoting book", () => {
  function pythConfig(url: string, maxAgeMs = 10_000): Config {
    return testConfig({}, (f) => ({
      ...f,
      pairs: f.pairs.map((p) => (p.base === "SOL" && p.quote === "USDC" ? { ...p, priceSource: "pyth" } : p)),
      priceSources: {
        ...f.priceSources,
        pyth: {
          kind: "pyth",
          url,
          maxAgeMs,
          idleReconnectMs: 15_000,
          feeds: { "SOL/USDC": { base: `0x${SOL_USD.toUpperCase()}` } },
        },
      },
    }));
  }

  async function bookFor(config: Config): Promise<{ book: QuotingBook; pyth: PythPriceSource }> {
    const sources = createPriceSources(config);
    cleanups.push(() => closePriceSources(sources));
    await startPriceSources(sources);
    const pyth = sources.get("pyth") as PythPriceSource;
    await until(pyth, () => pyth.price("SOL/USDC") !== undefined);
    return { book: new QuotingBook(config, sources as ReadonlyMap<string, PriceSource>), pyth };
  }

  const ask = {
    tokenIn: MINT.SOL,
    tokenOut: MINT.USDC,
    amount: 1_000_000_000n,
    quoteType: "exactIn",
  } as const;

  it("quotes SOL/USDC from a live (rebased) stream at mid minus the level's spread", async () => {
    const hermes = await replay({ rebase: true, limit: 1 });
    const { book } = await bookFor(pythConfig(hermes.url));
    const q = book.price(ask);
    expect(q.ok).toBe(true);
    // 1 SOL at 180.25 less 5 bps, in whole USDC atoms per lot (100,000 lamports, the default lot at
    // ~180 USDC/SOL) floored, times the 10,000 lots in 1 SOL (pricing/README.md, "One model of size").
    if (q.ok)
      expect(q.amountOut).toBe(
        ((100_000n * 18025000000n * 1_000_000n * 9_995n) / (10n ** 8n * 10n ** 9n * 10_000n)) * 10_000n,
      );
  });

  it("answers PRICE_STALE when the stream's publish_time is older than maxAgeMs", async () => {
    const hermes = await replay({ rebase: false, limit: 1 });
    const { book, pyth } = await bookFor(pythConfig(hermes.url));
    expect(pyth.price("SOL/USDC")!.updatedAtMs).toBe(T0 * 1000);
    expect(book.price(ask)).toMatchObject({ ok: false, code: "PRICE_STALE" });
  });

  it("refuses a config whose pyth source lacks a feed for a pair that uses it", () => {
    expect(() =>
      testConfig({}, (f) => ({
        ...f,
        pairs: f.pairs.map((p) => (p.base === "JUP" ? { ...p, priceSource: "pyth" } : p)),
        priceSources: {
          ...f.priceSources,
          pyth: {
            kind: "pyth",
            url: "http://127.0.0.1:1",
            maxAgeMs: 10_000,
            idleReconnectMs: 15_000,
            feeds: {},
          },
        },
      })),
    ).toThrow(/priceSources\.pyth\.feeds: no feed for JUP\/USDC/);
  });
});

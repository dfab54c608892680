/**
 * The quoting book's desk features: per-side levels, inventory skew (from a real inventory on a local
 * chain), the notional cap in USD, and the configuration rules that go with them.
 */
import { describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import { QuotingBook } from "../../pricing/book.ts";
import { makeWorld, withToken } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT, testConfig } from "../support/config.ts";

const cleanups = cleanupsAfterEach();

const SOL = 1_000_000_000n;
const sellSol = { tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: SOL, quoteType: "exactIn" } as const;
const buySol = { tokenIn: MINT.USDC, tokenOut: MINT.SOL, amount: SOL, quoteType: "exactOut" } as const;
/**
 * USDC units for 1 SOL (10,000 lots of 0.0001 SOL, the pair's default lot) at `perLot` USDC units per
 * lot: 18,025 at the mid of 180.25, moved by the level's spread and the skew, rounded to a whole unit
 * per lot (the maker's bid down, its ask up).
 */
const oneSol = (perLot: bigint) => 10_000n * perLot;

const solUsdc =
  (change: Record<string, unknown>) =>
  (f: FileConfig): FileConfig => ({
    ...f,
    pairs: f.pairs.map((p) => (p.base === "SOL" && p.quote === "USDC" ? { ...p, ...change } : p)),
  });

async function bookWith(vary: (f: FileConfig) => FileConfig, solHeld?: bigint) {
  const w = makeWorld(vary, solHeld === undefined ? {} : { inventory: { SOL: solHeld } });
  const inventory = new MemoryInventory(w.options());
  await inventory.start();
  cleanups.push(() => inventory.close());
  return new QuotingBook(w.config, w.sources, {
    position: (mint) => inventory.position(mint),
    usd: w.usd,
    now: () => w.clock.t,
  });
}

describe("per-side levels", () => {
  it("quotes the bid and the ask from their own levels", async () => {
    const book = await bookWith(
      solUsdc({
        bidLevels: [{ upToBase: "500000000000", spreadBps: 20 }],
        askLevels: [{ upToBase: "500000000000", spreadBps: 8 }],
      }),
    );
    // bid 18,025 x 0.9980 = 17,988.95 -> 17,988; ask 18,025 x 1.0008 = 18,039.42 -> 18,040
    expect(book.price(sellSol)).toMatchObject({ ok: true, amountOut: oneSol(17_988n), spreadBps: 20 });
    expect(book.price(buySol)).toMatchObject({ ok: true, amountIn: oneSol(18_040n), spreadBps: 8 });
  });

  it("sweeps each side's own levels: 2 SOL sell the first at the bid's first level and the second at its next; the one-level ask ends at its bound", async () => {
    const book = await bookWith(
      solUsdc({
        bidLevels: [
          { upToBase: "1000000000", spreadBps: 2 },
          { upToBase: "500000000000", spreadBps: 9 },
        ],
        askLevels: [{ upToBase: "500000000000", spreadBps: 7 }],
      }),
    );
    // 1 SOL at 18,025 x 0.9998 = 18,021.395 -> 18,021 per lot, 1 SOL at 18,025 x 0.9991 = 18,008.7775 -> 18,008
    expect(book.price({ ...sellSol, amount: 2n * SOL })).toMatchObject({
      ok: true,
      amountOut: oneSol(18_021n) + oneSol(18_008n),
      spreadBps: 9,
    });
    // 18,025 x 1.0007 = 18,037.6175 -> 18,038
    expect(book.price(buySol)).toMatchObject({ ok: true, amountIn: oneSol(18_038n), spreadBps: 7 });
    expect(book.price({ ...buySol, amount: 500n * SOL + 1n })).toEqual({
      ok: false,
      code: "SIZE_ABOVE_MAX",
      context: "SOL/USDC: 500000000001 is beyond the last level",
    });
  });
});

describe("inventory skew", () => {
  // Target 10,000 SOL; full skew of 10 bps at 100 SOL off target.
  const skewed = (f: FileConfig) =>
    withToken("SOL", { targetInventory: (10_000n * SOL).toString() })(
      solUsdc({ skew: { maxBps: 10, fullAtBase: (100n * SOL).toString() } })(f),
    );

  it("moves both sides down in proportion when the maker is long base", async () => {
    const book = await bookWith(skewed, 10_050n * SOL); // 50 SOL long: half the full skew
    // bid 5 + 5 bps below mid: 18,025 x 0.9990 = 18,006.975 -> 18,006; ask 5 - 5 bps: 18,025 exactly
    expect(book.price(sellSol)).toMatchObject({ ok: true, amountOut: oneSol(18_006n), skewBps: 5 });
    expect(book.price(buySol)).toMatchObject({ ok: true, amountIn: oneSol(18_025n), skewBps: 5 });
  });

  it("moves both sides up when short, and never beyond maxBps", async () => {
    const book = await bookWith(skewed, 9_000n * SOL); // 1,000 SOL short: clamped at 10 bps
    // bid 5 - 10 bps: 18,025 x 1.0005 = 18,034.0125 -> 18,034; ask 5 + 10 bps: 18,025 x 1.0015 = 18,052.0375 -> 18,053
    expect(book.price(sellSol)).toMatchObject({ ok: true, amountOut: oneSol(18_034n), skewBps: -10 });
    expect(book.price(buySol)).toMatchObject({ ok: true, amountIn: oneSol(18_053n), skewBps: -10 });
  });

  it("still never lets the taker gain from a round trip", async () => {
    const book = await bookWith(skewed, 10_100n * SOL);
    const buy = book.price({
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amount: 1_000_000_000n,
      quoteType: "exactIn",
    });
    expect(buy.ok).toBe(true);
    if (!buy.ok) return;
    const sell = book.price({ ...sellSol, amount: buy.amountOut });
    expect(sell.ok && sell.amountOut < 1_000_000_000n).toBe(true);
  });

  it("is refused in config without a target to measure from", () => {
    expect(() => testConfig({}, solUsdc({ skew: { maxBps: 10, fullAtBase: "1000" } }))).toThrow(
      /pairs\.0\.skew: needs tokens\[SOL\]\.targetInventory/,
    );
  });
});

describe("maximum notional per quote (USD)", () => {
  it("caps a stablecoin-quoted pair at the configured USD", async () => {
    const book = await bookWith(solUsdc({ maxNotionalUsd: "1000" }));
    expect(book.price({ ...sellSol, amount: 5n * SOL }).ok).toBe(true); // ~901 USD
    expect(book.price({ ...sellSol, amount: 6n * SOL })).toMatchObject({
      ok: false,
      code: "NOTIONAL_EXCEEDED",
    });
  });

  it("values a pair quoted in SOL through SOL/USDC", async () => {
    const book = await bookWith((f) => ({
      ...f,
      pairs: f.pairs.map((p) =>
        p.base === "JUP" && p.quote === "SOL" ? { ...p, maxNotionalUsd: "100" } : p,
      ),
    }));
    // JUP/SOL 0.0045 at SOL 180.25: 1 JUP = 0.811125 USD; 120 JUP ~ 97 USD, 125 JUP ~ 101 USD.
    const jup = (n: bigint) => ({
      tokenIn: MINT.JUP,
      tokenOut: MINT.SOL,
      amount: n * 1_000_000n,
      quoteType: "exactIn" as const,
    });
    expect(book.price(jup(120n)).ok).toBe(true);
    expect(book.price(jup(125n))).toMatchObject({ ok: false, code: "NOTIONAL_EXCEEDED" });
  });

  it("is refused in config when a token has an exposure limit but no target", () => {
    expect(() => testConfig({}, withToken("SOL", { maxExposureUsd: "1000" }))).toThrow(
      /tokens\.0\.maxExposureUsd: needs targetInventory/,
    );
  });
});

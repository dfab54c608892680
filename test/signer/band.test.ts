/**
 * The signer's price band (src/signer/service/band.ts) on its own: each edge of the band to the unit,
 * both ways round, the loss it records, and the prices it will not judge by (none, stale, not the
 * pair's). The service tests show the same rules through the socket; these pin the arithmetic.
 */
import { describe, expect, it } from "vitest";
import type { PriceSource } from "../../pricing/interface.ts";
import { bandFor, judgeBand } from "../../src/signer/service/band.ts";
import type { PairBand } from "../../src/signer/service/limits.ts";
import { MINT, testConfig } from "../support/config.ts";

const config = testConfig();
const token = (symbol: string) => {
  const t = config.tokensBySymbol.get(symbol);
  if (!t) throw new Error(`no ${symbol} in the default config`);
  return t;
};
const SOL = token("SOL");
const USDC = token("USDC");

/** SOL/USDC with a 100 bps band: SOL 9 decimals, USDC 6. */
const band: PairBand = { pair: "SOL/USDC", base: SOL, quote: USDC, priceSource: "own", bandBps: 100 };
const NOW = 1_000_000;

function source(
  mid: { num: bigint; den: bigint } | undefined,
  updatedAtMs = NOW,
  maxAgeMs = 5_000,
): PriceSource {
  return {
    name: "own",
    maxAgeMs,
    price: (pair) => (pair === "SOL/USDC" && mid ? { mid, updatedAtMs } : undefined),
    start: async () => {},
    close: async () => {},
  };
}
/** 150 USDC per SOL. */
const at150 = source({ num: 150n, den: 1n });
/** The maker sells `sol` lamports for `usdc` micro-USDC. */
const sells = (sol: bigint, usdc: bigint) => ({
  mintIn: USDC.mint,
  amountIn: usdc,
  mintOut: SOL.mint,
  amountOut: sol,
});
/** The maker buys `sol` lamports for `usdc` micro-USDC. */
const buys = (sol: bigint, usdc: bigint) => ({
  mintIn: SOL.mint,
  amountIn: sol,
  mintOut: USDC.mint,
  amountOut: usdc,
});

describe("judgeBand: the maker selling base", () => {
  it("signs 1 SOL for exactly 100 bps under the mid (148.5 USDC), refuses one micro-USDC less", () => {
    expect(judgeBand(band, at150, sells(1_000_000_000n, 148_500_000n), NOW)).toEqual({
      ok: true,
      loss: 10_000_000n,
      mid: "150/1",
    });
    expect(judgeBand(band, at150, sells(1_000_000_000n, 148_499_999n), NOW)).toEqual({
      ok: false,
      code: "SIGNER_PRICE_BAND",
      context:
        "selling 1000000000 SOL units for 148499999 USDC units is more than 100 bps below the signer's mid 150/1 for SOL/USDC",
    });
  });

  it("records no loss at the mid or above it, and rounds the fair value down (the loss up)", () => {
    expect(judgeBand(band, at150, sells(1_000_000_000n, 150_000_000n), NOW)).toMatchObject({
      ok: true,
      loss: 0n,
    });
    expect(judgeBand(band, at150, sells(1_000_000_000n, 151_000_000n), NOW)).toMatchObject({
      ok: true,
      loss: 0n,
    });
    // 149.999999 USDC is worth 999,999,993.33 lamports: fair 999,999,993, loss 7.
    expect(judgeBand(band, at150, sells(1_000_000_000n, 149_999_999n), NOW)).toMatchObject({
      ok: true,
      loss: 7n,
    });
  });

  it("values a zero mid at nothing: the whole amount paid out is the loss", () => {
    const wide = { ...band, bandBps: 10_000 };
    expect(judgeBand(wide, source({ num: 0n, den: 1n }), sells(5n, 0n), NOW)).toEqual({
      ok: true,
      loss: 5n,
      mid: "0/1",
    });
  });
});

describe("judgeBand: the maker buying base", () => {
  it("pays at most 100 bps over the mid for 1 SOL (151.5 USDC), refuses one micro-USDC more", () => {
    expect(judgeBand(band, at150, buys(1_000_000_000n, 151_500_000n), NOW)).toEqual({
      ok: true,
      loss: 1_500_000n,
      mid: "150/1",
    });
    expect(judgeBand(band, at150, buys(1_000_000_000n, 151_500_001n), NOW)).toEqual({
      ok: false,
      code: "SIGNER_PRICE_BAND",
      context:
        "paying 151500001 USDC units for 1000000000 SOL units is more than 100 bps above the signer's mid 150/1 for SOL/USDC",
    });
  });

  it("records no loss at the mid or under it, and rounds the fair value down (the loss up)", () => {
    expect(judgeBand(band, at150, buys(1_000_000_000n, 150_000_000n), NOW)).toMatchObject({
      ok: true,
      loss: 0n,
    });
    expect(judgeBand(band, at150, buys(1_000_000_000n, 149_000_000n), NOW)).toMatchObject({
      ok: true,
      loss: 0n,
    });
    // 1.000000007 SOL is worth 150.00000105 USDC: fair 150.000001, so paying 150.000002 loses 1.
    expect(judgeBand(band, at150, buys(1_000_000_007n, 150_000_002n), NOW)).toMatchObject({
      ok: true,
      loss: 1n,
    });
  });
});

describe("judgeBand: a mid that is a ratio, not a whole price", () => {
  /** 301/2: 150.5 USDC per SOL. */
  const atRatio = source({ num: 301n, den: 2n });

  it("sells 1 SOL down to 148.995 USDC (100 bps under 301/2), refuses one micro-USDC less, and values the loss by the ratio", () => {
    expect(judgeBand(band, atRatio, sells(1_000_000_000n, 148_995_000n), NOW)).toEqual({
      ok: true,
      // fair = 148.995 USDC x 2/301 per USDC = 0.99 SOL: the loss is 0.01 SOL.
      loss: 10_000_000n,
      mid: "301/2",
    });
    expect(judgeBand(band, atRatio, sells(1_000_000_000n, 148_994_999n), NOW)).toMatchObject({
      ok: false,
      code: "SIGNER_PRICE_BAND",
    });
  });

  it("pays for 1 SOL up to 152.005 USDC (100 bps over 301/2), refuses one micro-USDC more", () => {
    expect(judgeBand(band, atRatio, buys(1_000_000_000n, 152_005_000n), NOW)).toMatchObject({
      ok: true,
      mid: "301/2",
    });
    expect(judgeBand(band, atRatio, buys(1_000_000_000n, 152_005_001n), NOW)).toMatchObject({
      ok: false,
      code: "SIGNER_PRICE_BAND",
    });
  });
});

describe("judgeBand: the prices it will not judge by", () => {
  it("refuses without a source, or a source without the pair's price", () => {
    const none = {
      ok: false,
      code: "SIGNER_NO_PRICE",
      context: "the signer's price source own has no price for SOL/USDC",
    };
    expect(judgeBand(band, undefined, sells(1n, 1n), NOW)).toEqual(none);
    expect(judgeBand(band, source(undefined), sells(1n, 1n), NOW)).toEqual(none);
  });

  it("uses a price exactly maxAgeMs old, refuses one 1 ms older", () => {
    const trade = sells(1_000_000_000n, 150_000_000n);
    expect(judgeBand(band, source({ num: 150n, den: 1n }, NOW - 5_000), trade, NOW)).toMatchObject({
      ok: true,
    });
    expect(judgeBand(band, source({ num: 150n, den: 1n }, NOW - 5_001), trade, NOW)).toEqual({
      ok: false,
      code: "SIGNER_NO_PRICE",
      context: "the signer's price for SOL/USDC (own) is 5001 ms old, over its 5000 ms",
    });
  });

  it("refuses a trade that is not the band's pair, even with one of its mints on the right side", () => {
    const notThePair = { ok: false, code: "SIGNER_NO_PRICE", context: "the fill does not trade SOL/USDC" };
    // The maker pays out base, but takes in another token than the quote.
    expect(judgeBand(band, at150, { ...sells(1n, 1n), mintIn: MINT.JUP }, NOW)).toEqual(notThePair);
    // The maker takes in quote, but pays out another token than the base.
    expect(judgeBand(band, at150, { ...sells(1n, 1n), mintOut: MINT.JUP }, NOW)).toEqual(notThePair);
    // The maker takes in base, but pays out another token than the quote.
    expect(judgeBand(band, at150, { ...buys(1n, 1n), mintOut: MINT.JUP }, NOW)).toEqual(notThePair);
    // The maker pays out quote, but takes in another token than the base.
    expect(judgeBand(band, at150, { ...buys(1n, 1n), mintIn: MINT.JUP }, NOW)).toEqual(notThePair);
  });
});

describe("bandFor", () => {
  const jupUsdc: PairBand = { ...band, pair: "JUP/USDC", base: token("JUP") };
  const bands = new Map([
    ["JUP/USDC", jupUsdc],
    ["SOL/USDC", band],
  ]);
  it("finds a pair's band whichever way round the trade names its mints", () => {
    expect(bandFor(bands, SOL.mint, USDC.mint)).toBe(band);
    expect(bandFor(bands, USDC.mint, SOL.mint)).toBe(band);
  });
  it("finds none for a pair without a band, even when one mint matches a band's", () => {
    expect(bandFor(bands, SOL.mint, MINT.JUP)).toBeUndefined();
    expect(bandFor(bands, MINT.JUP, SOL.mint)).toBeUndefined();
    expect(bandFor(bands, USDC.mint, MINT.USDT)).toBeUndefined();
    expect(bandFor(bands, MINT.USDT, USDC.mint)).toBeUndefined();
  });
});

/**
 * Finding 7 of issue 47: the pairs in human units, as the banner, `doctor` and `registration` print
 * them: sizes in tokens (exact, from bigint units) and USD, spreads by size, caps, price, source, age.
 */
import { describe, expect, it } from "vitest";
import { formatUnits } from "../../amounts/decimal.ts";
import { formatPairs, pairLines } from "../../src/ops/pairs.ts";
import { configuredParts } from "../../src/wiring/parts.ts";
import { testConfig } from "../support/config.ts";

function linesOf(config: ReturnType<typeof testConfig>) {
  const parts = configuredParts(config);
  return pairLines(config, parts.priceSources, parts.usd);
}

describe("finding 7: the pairs table", () => {
  it("gives the shipped SOL/USDC pair in SOL and USD, its spreads by size, no cap, its static price", () => {
    const line = linesOf(testConfig()).find((l) => l.pair === "SOL/USDC");
    expect(line).toEqual({
      pair: "SOL/USDC",
      size: "0.001 - 500 SOL",
      sizeUsd: "$0.18 - $90,125.00",
      spreads: "5 bps to 10 SOL, 10 bps to 100 SOL, 25 bps to 500 SOL",
      caps: "none",
      price: "180.250000",
      source: "static (static)",
      age: "static",
    });
  });

  it("shows bid and ask apart, the notional cap, both tokens' exposure limits and leaves disabled pairs out", () => {
    const config = testConfig({}, (f) => ({
      ...f,
      tokens: f.tokens.map((t) =>
        t.symbol === "JUP" ? { ...t, targetInventory: "1000000000", maxExposureUsd: "2500.5" } : t,
      ),
      pairs: f.pairs.map((p) =>
        p.base === "JUP" && p.quote === "USDC"
          ? {
              ...p,
              maxNotionalUsd: "50000",
              bidLevels: [{ upToBase: "200000000000", spreadBps: 12 }],
              askLevels: [{ upToBase: "200000000000", spreadBps: 18 }],
            }
          : p.base === "SOL" && p.quote === "USDT"
            ? { ...p, enabled: false }
            : p,
      ),
    }));
    const lines = linesOf(config);
    expect(lines.map((l) => l.pair)).not.toContain("SOL/USDT");
    expect(lines.find((l) => l.pair === "JUP/USDC")).toMatchObject({
      size: "1 - 200000 JUP",
      sizeUsd: "$0.81 - $162,500.00",
      spreads: "bid 12 bps to 200000 JUP; ask 18 bps to 200000 JUP",
      caps: "notional $50,000.00; JUP exposure $2,500.50",
    });
    const text = formatPairs(lines);
    expect(text.split("\n")[0]).toMatch(
      /^PAIR\s+SIZE\s+SIZE \(USD\)\s+SPREADS\s+CAPS\s+PRICE\s+SOURCE\s+PRICE AGE$/,
    );
    expect(text).toContain("bid 12 bps to 200000 JUP; ask 18 bps to 200000 JUP");
  });

  it("formats token amounts exactly from their units, past what a float holds", () => {
    expect(formatUnits(18_446_744_073_709_551_615n, 18)).toBe("18.446744073709551615");
    expect(formatUnits(500_000_000_000n, 9)).toBe("500");
    expect(formatUnits(1_000_000n, 9)).toBe("0.001");
    expect(formatUnits(0n, 6)).toBe("0");
    expect(formatUnits(42n, 0)).toBe("42");
  });
});

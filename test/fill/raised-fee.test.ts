/**
 * Raised priority fees: a fill whose compute-unit price is above the quote's prioritizationFeeToUse is
 * accepted while what it costs the maker stays within the raise cap (lamports, and a share of the
 * quote's SOL leg), refused RAISED_FEE_CAP_EXCEEDED above it, and refused COMPUTE_UNIT_PRICE_EXCEEDED
 * where no cap is given; a smart-account fill costs the maker nothing, so no fee cap binds it. The
 * cap is resolved per pair with the global default (src/fill/raised-fee-cap.ts).
 */
import { describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { raisedFeeCaps } from "../../src/fill/raised-fee-cap.ts";
import { makerFeeLamports } from "../../src/fill/rules/compute-budget.ts";
import { MINT, testConfig } from "../support/config.ts";
import {
  ATTACK_SCENARIOS,
  nativeSolOutScenario,
  SMART_ACCOUNT_SCENARIOS,
  validate,
} from "./attack-scenarios.ts";
import { wrapped } from "./smart-account-attacks.ts";
import { withInstructions } from "./tamper.ts";

const jupUsdc = ATTACK_SCENARIOS[0]![1];
const solUsdt = ATTACK_SCENARIOS[1]![1];
const outcome = (r: ReturnType<typeof validate>) => (r.ok ? "accepted" : `${r.code}: ${r.context}`);

describe("a raised compute-unit price", () => {
  it("accepts a price one micro-lamport above the quote, and says it was raised", () => {
    const s = jupUsdc();
    const quoted = BigInt(s.quote.response.prioritizationFeeToUse!);
    const r = validate(
      s,
      withInstructions(s, (ixs) => ixs, { computeUnitPrice: quoted + 1n }),
    );
    expect(outcome(r)).toBe("accepted");
    expect(r.ok && r.fill.priceRaised).toBe(true);
    expect(r.ok && r.fill.makerPaysLamports).toBe(makerFeeLamports(38_941, quoted + 1n, 2));
  });

  it("says a fill at the quoted price, or below it, was not raised", () => {
    const s = jupUsdc();
    const quoted = BigInt(s.quote.response.prioritizationFeeToUse!);
    for (const price of [quoted, quoted - 1n]) {
      const r = validate(
        s,
        withInstructions(s, (ixs) => ixs, { computeUnitPrice: price }),
      );
      expect(r.ok && r.fill.priceRaised).toBe(false);
    }
  });

  it("accepts a raise costing exactly the lamports cap and refuses one lamport more (no SOL leg)", () => {
    const s = jupUsdc();
    // 38,941 units: a price of p micro-lamports costs ceil(38,941 p / 1e6) + 10,000.
    const limit = 38_941;
    const price = 1_000_000n;
    const cost = makerFeeLamports(limit, price, 2);
    const atCap = { ...s, raisedFeeCap: { maxLamports: cost, maxNotionalBps: 0n } };
    const tx = withInstructions(s, (ixs) => ixs, { computeUnitPrice: price });
    expect(outcome(validate(atCap, tx))).toBe("accepted");
    const under = { ...s, raisedFeeCap: { maxLamports: cost - 1n, maxNotionalBps: 0n } };
    expect(outcome(validate(under, tx))).toBe(
      `RAISED_FEE_CAP_EXCEEDED: the compute-unit price is 1000000 micro-lamports, raised from the 53770 quoted: the maker would pay ${cost} lamports, more than the ${cost - 1n} a raised fill may cost`,
    );
  });

  it("caps a raise on a quote with a SOL leg at its share of the SOL amount, floored", () => {
    const s = solUsdt(); // 55,555,555 lamports in
    const tx = withInstructions(s, (ixs) => ixs, { computeUnitPrice: 1_000_000n });
    const cost = makerFeeLamports(s.params.computeUnitLimit, 1_000_000n, 2);
    // bps such that the share is just the cost, then just under it.
    const share = (bps: bigint) => (55_555_555n * bps) / 10_000n;
    let bps = 1n;
    while (share(bps) < cost) bps++;
    const big = 10n ** 12n;
    expect(outcome(validate({ ...s, raisedFeeCap: { maxLamports: big, maxNotionalBps: bps } }, tx))).toBe(
      "accepted",
    );
    const r = validate({ ...s, raisedFeeCap: { maxLamports: big, maxNotionalBps: bps - 1n } }, tx);
    expect(outcome(r)).toContain(`more than the ${share(bps - 1n)} a raised fill may cost`);
    // The lamports cap binds when it is the smaller one.
    const r2 = validate({ ...s, raisedFeeCap: { maxLamports: cost - 1n, maxNotionalBps: 10_000n } }, tx);
    expect(outcome(r2)).toContain(`more than the ${cost - 1n} a raised fill may cost`);
  });

  it("caps a raise on a quote whose SOL leg is its output at that output's share", () => {
    const s = nativeSolOutScenario(); // 1,000,000,000 lamports out
    const tx = withInstructions(s, (ixs) => ixs, { computeUnitPrice: 1_000_000n });
    const cost = makerFeeLamports(s.params.computeUnitLimit, 1_000_000n, 2);
    const big = 10n ** 12n;
    // 1 bp of 1 SOL is 100,000 lamports: more than the cost; 0 bps is nothing.
    expect(outcome(validate({ ...s, raisedFeeCap: { maxLamports: big, maxNotionalBps: 1n } }, tx))).toBe(
      "accepted",
    );
    expect(cost).toBeLessThan(100_000n);
    const r = validate({ ...s, raisedFeeCap: { maxLamports: big, maxNotionalBps: 0n } }, tx);
    expect(outcome(r)).toContain("more than the 0 a raised fill may cost");
  });

  it("refuses a raise with COMPUTE_UNIT_PRICE_EXCEEDED when no cap is given", () => {
    const s = jupUsdc();
    const tx = withInstructions(s, (ixs) => ixs, { computeUnitPrice: 53_771n });
    expect(outcome(validate({ ...s, raisedFeeCap: undefined }, tx))).toBe(
      "COMPUTE_UNIT_PRICE_EXCEEDED: the compute-unit price is 53771 micro-lamports, above the 53770 the quote answered as prioritizationFeeToUse",
    );
  });
});

describe("who pays the network fee", () => {
  it("counts nothing against the maker for a smart-account fill, however high its price", () => {
    const s = SMART_ACCOUNT_SCENARIOS[0]![1]();
    const r = validate(
      { ...s, maxFeeLamports: 0n, raisedFeeCap: { maxLamports: 0n, maxNotionalBps: 0n } },
      wrapped(s, { computeUnitPrice: 10n ** 9n }),
    );
    expect(outcome(r)).toBe("accepted");
    expect(r.ok && r.fill.makerPaysLamports).toBe(0n);
    expect(r.ok && r.fill.priceRaised).toBe(true);
  });

  it("counts limit x price + 5,000 per signature against the maker of a plain fill", () => {
    const s = jupUsdc();
    const r = validate(s, buildFillTransaction(s.params));
    expect(r.ok && r.fill.makerPaysLamports).toBe(makerFeeLamports(38_941, 53_770n, 2));
  });
});

describe("raisedFeeCaps", () => {
  it("gives a pair's own cap in both directions and the global default to every other pair", () => {
    const config = testConfig({}, (f) => ({
      ...f,
      limits: { ...f.limits, raisedFeeCap: { maxLamports: "7", maxNotionalBps: 3 } },
      pairs: f.pairs.map((p) =>
        p.base === "JUP" && p.quote === "USDC"
          ? { ...p, raisedFeeCap: { maxLamports: "99", maxNotionalBps: 1 } }
          : p,
      ),
    }));
    const cap = raisedFeeCaps(config);
    expect(cap(MINT.JUP, MINT.USDC)).toEqual({ maxLamports: 99n, maxNotionalBps: 1n });
    expect(cap(MINT.USDC, MINT.JUP)).toEqual({ maxLamports: 99n, maxNotionalBps: 1n });
    expect(cap(MINT.SOL, MINT.USDC)).toEqual({ maxLamports: 7n, maxNotionalBps: 3n });
  });

  it("defaults to 100,000 lamports and 10 bps", () => {
    expect(raisedFeeCaps(testConfig())(MINT.SOL, MINT.USDC)).toEqual({
      maxLamports: 100_000n,
      maxNotionalBps: 10n,
    });
  });
});

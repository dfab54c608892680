/** The `rebalance` section is validated by the one config schema: each bad value named by its key. */
import { describe, expect, it } from "vitest";
import { parseFileConfig } from "../../config/load.ts";
import { defaultFileConfig } from "../support/config.ts";

const good = {
  target: "1000000",
  band: "1000",
  maxTrade: "5000",
  against: "USDC",
  maxSlippageBps: 50,
  dailyNotionalUsd: "1000",
};
const withTarget = (symbol: string, t: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  parseFileConfig({ ...defaultFileConfig(), rebalance: { targets: { [symbol]: t }, ...extra } });

describe("rebalance config", () => {
  it("accepts a target and fills the defaults (cooldown, no excluded router, fee cap, interval)", () => {
    const c = withTarget("JUP", good);
    expect(c.rebalance.targets.JUP).toMatchObject({ ...good, cooldownMs: 60_000 });
    expect(c.rebalance).toMatchObject({ excludeRouters: [], maxFeeLamports: "5000000", intervalMs: 30_000 });
  });

  it.each([
    ["an unknown token", "XYZ", good, "config: rebalance.targets.XYZ: unknown token symbol XYZ"],
    [
      "against itself",
      "USDC",
      good,
      "config: rebalance.targets.USDC.against: must differ from the token itself",
    ],
    [
      "a band wider than the target",
      "JUP",
      { ...good, band: "2000000" },
      "config: rebalance.targets.JUP.band: must not exceed target",
    ],
    [
      "a zero maxTrade",
      "JUP",
      { ...good, maxTrade: "0" },
      "config: rebalance.targets.JUP.maxTrade: must be greater than zero",
    ],
    [
      "slippage above 5000 bps",
      "JUP",
      { ...good, maxSlippageBps: 6000 },
      "config: rebalance.targets.JUP.maxSlippageBps",
    ],
    [
      "a typo in a key",
      "JUP",
      { ...good, maxTrades: "1" },
      'maxTrades: unknown key (did you mean "maxTrade"?)',
    ],
  ])("refuses %s", (_what, symbol, t, message) => {
    expect(() => withTarget(symbol, t)).toThrow(message);
  });

  it("refuses an excluded router the operator does not have", () => {
    expect(() => withTarget("JUP", good, { excludeRouters: ["router_9"] })).toThrow(
      "rebalance.excludeRouters.0",
    );
  });
});

/**
 * The largest permissioned fill the configuration allows fits the 200,000 compute units the operator
 * gives permissioned pairs (no quote-time simulation): measured on the local chain by the same code
 * `npm run bench:permissioned` prints (bench/permissioned-cu.ts). Compute units are deterministic.
 */
import { describe, expect, it } from "vitest";
import { benchConfig, measurePermissionedFills } from "../../sandbox/fill/permissioned-units.ts";
import { PERMISSIONED_COMPUTE_UNIT_LIMIT } from "../../src/fill/rules/compute-unit-limit.ts";

describe("permissioned fill compute units", () => {
  it("measures the largest buy and sell of each issued token under the 200,000 limit", async () => {
    const rows = await measurePermissionedFills(benchConfig().file);
    expect(rows.map((r) => r.direction).sort()).toEqual(["buy (mint first)", "sell (burn after)"]);
    for (const r of rows) {
      expect(r.fillUnits).toBeGreaterThan(0n);
      expect(r.fillUnits).toBeLessThan(BigInt(PERMISSIONED_COMPUTE_UNIT_LIMIT));
      expect(r.companionUnits).toBeGreaterThan(0n);
    }
  });
});

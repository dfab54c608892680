/**
 * The vitest configuration Stryker uses for the deciders (mutation/stryker.deciders.config.mjs): the
 * unit and security tests of what every signing path asks before it signs (the RFQ v2 route checks and
 * lookup tables, the v2 route plan, the signer service's policy, band and limits, the rebalancer's shape
 * and proof, the issuance policy and companions, the shared rule book). None starts a process; the
 * signer's limits run against the throwaway Redis `npm run test:mutation` starts.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/rfq-v2/swap-checks.security.test.ts",
      "test/rfq-v2/multi-leg.security.test.ts",
      "test/rfq-v2/route-plan.test.ts",
      "test/rfq-v2/lookup.test.ts",
      "test/rfq-v2/lookup-defaults.test.ts",
      "test/rfq-v2/lookup-edges.test.ts",
      "test/signer/policy.test.ts",
      "test/signer/band.test.ts",
      "test/signer/limits.test.ts",
      "test/signer/v2-reading.test.ts",
      "test/rebalance/shape.security.test.ts",
      "test/rebalance/prove.test.ts",
      "test/rebalance/prove.security.test.ts",
      "test/policy/rule-book.test.ts",
      "test/issuance/companion.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    expect: { requireAssertions: true },
  },
});

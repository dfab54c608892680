/**
 * The vitest configuration Stryker uses for the whole money path (mutation/stryker.config.mjs): the
 * fill, swap (with its issuance and toxic-flow steps), quote store, pricing, amount maths, program
 * layout and inventory tests, and those of the issuer's bundle and the ledger's decision record, against
 * the throwaway Redis that
 * `npm run test:mutation` starts (scripts/with-redis.ts).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/fill/**/*.test.ts",
      "test/swap/**/*.test.ts",
      "test/quote-store/**/*.test.ts",
      "test/pricing/book-*.test.ts",
      "test/amounts/**/*.test.ts",
      "test/program/**/*.test.ts",
      "test/inventory/**/*.test.ts",
      // The issuer's bundle and the ledger's decision record, against scripted ports (their folders'
      // other tests need a local chain or PostgreSQL).
      "test/issuance/bundle.test.ts",
      "test/ledger/decision.test.ts",
      // The swap executor's issuance and toxic-flow steps, end to end through POST /swap.
      "test/issuance/permissioned*.test.ts",
      "test/toxicity/toxicity.security.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    expect: { requireAssertions: true },
  },
});

/**
 * The vitest configuration Stryker uses for the fill rules (mutation/stryker.fill.config.mjs): the
 * fill tests only (no Redis, no sockets), so each mutant is judged in well under a second.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/fill/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    expect: { requireAssertions: true },
  },
});

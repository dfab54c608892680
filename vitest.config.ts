import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: [
      "test/**/*.test.ts",
      "src/**/*.test.ts",
      "sandbox/**/*.test.ts",
      "pricing/**/*.test.ts",
      "inventory/**/*.test.ts",
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests share one throwaway Redis (see scripts/with-redis.ts); each test file uses its
    // own key prefix, so files may run in parallel.
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});

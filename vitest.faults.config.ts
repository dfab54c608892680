import { defineConfig } from "vitest/config";

/**
 * `npm run test:faults`: the fault suite (test/faults/*.fault.ts). Each scenario starts its own
 * processes (redis-server, the webhook) on loopback and breaks them; files run one after another so
 * that their load does not overlap. Every scenario is bounded in time.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.fault.ts"],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
    // As the suite (vitest.config.ts): a scenario cannot pass without making an assertion.
    expect: { requireAssertions: true },
    reporters: ["default"],
  },
});

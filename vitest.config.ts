import { defineConfig } from "vitest/config";

/** Runs every package.json command with --help: many processes at once, so it runs after the rest. */
const COMMANDS = "test/cli/help.test.ts";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests share one throwaway Redis (see scripts/with-redis.ts); each test file uses its
    // own key prefix, so files may run in parallel.
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // Two groups in order: the suite, then the commands test, whose process spawns would otherwise
    // steal the CPU that the suite's deadline-bound tests (the 250 ms quote budget) measure against.
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: [
            "test/**/*.test.ts",
            "src/**/*.test.ts",
            "sandbox/**/*.test.ts",
            "pricing/**/*.test.ts",
            "inventory/**/*.test.ts",
          ],
          exclude: [COMMANDS],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: "commands", include: [COMMANDS], sequence: { groupOrder: 1 } } },
    ],
  },
});

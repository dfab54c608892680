// @ts-check
/**
 * Mutation test of the deciders: what every signing path asks before it signs, beside the money path
 * (mutation/stryker.config.mjs) and run by the same `npm run test:mutation`. The RFQ v2 route checks
 * (src/rfq-v2/swap-checks.ts) with the route plan and v2 instruction they read (src/program/route-plan.ts,
 * src/program/rfq-v2.ts) and the lookup tables that resolve its keys (src/rfq-v2/lookup.ts); the signer
 * service's policy for webhook fills, v2 fills and companions with its price band and limits
 * (src/signer/service/); the rebalancer's order shape and proof (src/rebalance/shape.ts, prove.ts); the
 * issuance policy and companions (src/issuance/); the rule book every path shares (src/policy/). Tests:
 * mutation/vitest.deciders.config.ts. HTML report: results/mutation/deciders/index.html. Scores per file
 * are recorded in docs/testing.md; survivors and the equivalent mutants marked in the source are listed
 * in mutation/README.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: "vitest",
  vitest: { configFile: "mutation/vitest.deciders.config.ts", related: false },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: [
    "src/rfq-v2/swap-checks.ts",
    "src/rfq-v2/lookup.ts",
    "src/program/route-plan.ts",
    "src/program/rfq-v2.ts",
    "src/signer/service/policy.ts",
    "src/signer/service/v2.ts",
    "src/signer/service/band.ts",
    "src/signer/service/limits.ts",
    "src/rebalance/shape.ts",
    "src/rebalance/prove.ts",
    "src/issuance/policy.ts",
    "src/issuance/companion.ts",
    "src/policy/*.ts",
  ],
  coverageAnalysis: "perTest",
  // Mutants in logging statements and module-level constants are not run (as in the money run).
  plugins: ["@stryker-mutator/*", "./mutation/ignore-logs.mjs"],
  ignorers: ["log-calls"],
  ignoreStatic: true,
  concurrency: 2,
  timeoutMS: 30_000,
  // 100 % measured on 2026-11-28 (1,201 killed and timed out of 1,201 valid mutants; docs/testing.md):
  // CI fails when a change leaves any mutant alive.
  thresholds: { high: 99, low: 97, break: 100 },
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "results/mutation/deciders/index.html" },
  jsonReporter: { fileName: "results/mutation/deciders/report.json" },
  // As in the money run: unchanged mutants keep their result from the committed file (commit it with
  // the change); `--force` re-tests everything.
  incremental: true,
  incrementalFile: "mutation/deciders-incremental.json",
  tempDirName: ".stryker-tmp-deciders",
  cleanTempDir: "always",
};

// @ts-check
/**
 * Mutation test of the fill rules (src/fill/rules/, src/fill/validate.ts, and the fee shapes the amount
 * rule checks, src/fill/fee-shape.ts) against the fill tests:
 * `npm run test:mutation:fill`, run by CI (.ci/run). The run fails when the mutation score drops
 * below `thresholds.break`, the score recorded in docs/testing.md ("Mutation testing"); raise it when the
 * score rises, never lower it without a reason in the commit. Equivalent mutants are marked in the
 * source with a `// Stryker disable next-line <mutator>: <why>` comment (listed in mutation/README.md).
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: "vitest",
  vitest: { configFile: "mutation/vitest.fill.config.ts", related: false },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  mutate: ["src/fill/rules/**/*.ts", "src/fill/validate.ts", "src/fill/fee-shape.ts"],
  coverageAnalysis: "perTest",
  concurrency: 2,
  timeoutMS: 20_000,
  // 100 % measured on 2026-11-23 (365 mutants killed, none surviving; docs/testing.md, "Mutation testing"):
  // a single surviving mutant fails CI. A mutant no input can tell apart gets a
  // `// Stryker disable next-line <mutator>: <why>` comment and a line in mutation/README.md instead.
  thresholds: { high: 100, low: 95, break: 100 },
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "results/mutation/fill/index.html" },
  jsonReporter: { fileName: "results/mutation/fill/report.json" },
  // Mutants whose code and covering tests are unchanged since the committed file keep their result;
  // every run rewrites it (commit it with the change). `--force` re-tests everything.
  incremental: true,
  incrementalFile: "mutation/fill-incremental.json",
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};

/**
 * Prints one plain closing line, `tests: N passed, N failed[, N skipped]`, after vitest's own summary,
 * so tools that read a run's last line (CI) see the counts without parsing vitest's colours.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but must still count as a failure.
      if (mod.state() === "failed" && !mod.children.size) failed++;
    }
    process.stdout.write(
      `tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`,
    );
  }
}

/**
 * README.md is a door (scripts/check-readme.ts, run by `npm run check`): at most 250 lines, linking
 * every setting and the guide to feeding one's own prices.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { README_MAX_LINES, readmeProblems } from "../../scripts/check-readme.ts";
import { REPO_ROOT } from "../../scripts/import-graph.ts";

const links = "[settings](docs/configuration.md), [prices](pricing/README.md)\n";

describe("README check", () => {
  it("refuses a README one line over the limit and accepts one at it", () => {
    const filler = (n: number) => "line\n".repeat(n);
    expect(readmeProblems(links + filler(README_MAX_LINES - 1))).toEqual([]);
    expect(readmeProblems(links + filler(README_MAX_LINES))).toEqual([
      `README.md: ${README_MAX_LINES + 1} lines, more than ${README_MAX_LINES}: move the details to docs/`,
    ]);
  });

  it("refuses a README that does not link the price-feeding guide", () => {
    expect(readmeProblems("[settings](docs/configuration.md)\n")).toEqual([
      "README.md: does not link pricing/README.md",
    ]);
  });

  it("passes on this repository's README", () => {
    expect(readmeProblems(readFileSync(join(REPO_ROOT, "README.md"), "utf8"))).toEqual([]);
  });
});

/**
 * Every vitest configuration of the repository makes each test assert something
 * (`expect.requireAssertions`, the same as `expect.hasAssertions()` in every test): a check inside a
 * loop or a branch cannot pass by checking nothing. A configuration added later is found by name.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/import-graph.ts";

const CONFIGS = ["", "mutation"].flatMap((dir) =>
  readdirSync(join(REPO_ROOT, dir))
    .filter((f) => /^vitest(\.[\w-]+)*\.config\.ts$/.test(f))
    .map((f) => join(dir, f)),
);

describe("vitest configurations", () => {
  it("are found: the suite's, the fault suite's and the three mutation runs'", () => {
    expect(CONFIGS.sort()).toEqual([
      "mutation/vitest.deciders.config.ts",
      "mutation/vitest.fill.config.ts",
      "mutation/vitest.money.config.ts",
      "vitest.config.ts",
      "vitest.faults.config.ts",
    ]);
  });

  it.each(CONFIGS)("%s requires every test to make an assertion", async (file) => {
    const config = (await import(pathToFileURL(join(REPO_ROOT, file)).href)).default;
    expect(config.test?.expect?.requireAssertions).toBe(true);
  });
});

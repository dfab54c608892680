/**
 * Issue 61, finding 11: the demo printed smallest units labelled as tokens (`USDC -9991390 USDC`). Its
 * amounts now go through TokenUnits (sandbox/operator/units.ts): tokens with their symbol, exactly, with
 * the configuration's decimals.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseFileConfig } from "../../../config/load.ts";
import { NATIVE, TokenUnits } from "../../../sandbox/operator/units.ts";
import { REPO_ROOT } from "../../../tooling/processes.ts";
import { MINT } from "../../support/config.ts";

const config = parseFileConfig(JSON.parse(readFileSync(join(REPO_ROOT, "config/default.json"), "utf8")));
const units = new TokenUnits(config.tokens);

describe("finding 11: the demo prints tokens with their units", () => {
  it("prints the USDC the issue saw (-9991390 smallest units) as -9.99139 USDC", () => {
    expect(units.delta(MINT.USDC, -9_991_390n)).toBe("-9.99139 USDC");
  });

  it("prints each token with its own decimals, signed, exactly (no float)", () => {
    expect(units.delta(MINT.SOL, 100_000_000n)).toBe("+0.1 SOL");
    expect(units.delta(NATIVE, -5_000n)).toBe("-0.000005 SOL (native)");
    expect(units.amount(MINT.JUP, 25_000_000n)).toBe("25 JUP");
    expect(units.amount(MINT.USDC, "0")).toBe("0 USDC");
    // Past 2^53 smallest units: every digit kept.
    expect(units.amount(MINT.SOL, 18_446_744_073_709_551_615n)).toBe("18446744073.709551615 SOL");
  });

  it("names an unconfigured mint's amount as smallest units, never as a token", () => {
    expect(units.amount("Unknown1111", 42n)).toBe("42 smallest units of Unknown1111");
  });

  it("the demo formats every amount through TokenUnits (no raw number followed by a symbol)", () => {
    const demo = readFileSync(join(REPO_ROOT, "sandbox/operator/demo.ts"), "utf8");
    expect(demo).toContain("new TokenUnits(stack.config.tokens)");
    expect(demo).not.toMatch(/atoms/);
    expect(demo).not.toMatch(/\$\{o\.(inAmount|outAmount)\} \$\{SYMBOL/);
  });
});

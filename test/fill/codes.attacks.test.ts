/**
 * Every refusal code of src/fill/codes.ts is exercised by the attack table: some attack in the
 * tables of test/fill/tamper.ts expects it, and every table is run by an attack test file
 * (test/fill/validate.attacks.test.ts through validateFill, test/swap/attacks.security.test.ts
 * through POST /swap, test/swap/lands.security.test.ts for the chain-state attacks). A new code
 * without an attack fails here.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FillRejectCode } from "../../src/fill/codes.ts";
import {
  AFTER_CLAIM_ATTACKS,
  CHAIN_STATE_ATTACKS,
  FILL_ATTACKS,
  NATIVE_SOL_OUT_ATTACKS,
  PAIRING_ATTACKS,
} from "./tamper.ts";

const TABLES = {
  FILL_ATTACKS,
  NATIVE_SOL_OUT_ATTACKS,
  PAIRING_ATTACKS,
  AFTER_CLAIM_ATTACKS,
  CHAIN_STATE_ATTACKS,
};
const RUNNERS = [
  "test/fill/validate.attacks.test.ts",
  "test/swap/attacks.security.test.ts",
  "test/swap/lands.security.test.ts",
];

describe("the attack table covers every refusal code", () => {
  it("has an attack expecting each code of FillRejectCode", () => {
    const covered = new Set(Object.values(TABLES).flatMap((t) => t.map((a) => a.code)));
    const missing = Object.values(FillRejectCode).filter((code) => !covered.has(code));
    expect(missing).toEqual([]);
  });

  it("runs every table in an attack test file", () => {
    const sources = RUNNERS.map((f) => readFileSync(new URL(`../../${f}`, import.meta.url), "utf8"));
    for (const name of Object.keys(TABLES)) {
      expect(
        sources.some((src) => new RegExp(`\\.each\\(\\s*${name}\\b`).test(src)),
        name,
      ).toBe(true);
    }
  });
});

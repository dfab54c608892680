/**
 * Every refusal code of src/refusal/codes.ts is exercised by the attack table: some attack in the
 * tables of test/fill/tamper.ts expects it, and every table is run by an attack test file
 * (test/fill/validate.attacks.test.ts through validateFill, test/swap/attacks.security.test.ts
 * through POST /swap, test/swap/lands.security.test.ts for the chain-state attacks). A new code
 * without an attack fails here. And not only codes: every rule of FILL_RULES is the one that refuses
 * at least one attack (one code can be emitted by several rules).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FILL_RULES, RULE_NAMES } from "../../src/fill/rules/index.ts";
import { FillRejectCode } from "../../src/refusal/codes.ts";
import {
  ATTACK_SCENARIOS,
  nativeSolOutScenario,
  SMART_ACCOUNT_SCENARIOS,
  validate,
} from "./attack-scenarios.ts";
import { SMART_ACCOUNT_ATTACKS } from "./smart-account-attacks.ts";
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
  SMART_ACCOUNT_ATTACKS,
};
const RUNNERS = [
  "test/fill/validate.attacks.test.ts",
  "test/swap/attacks.security.test.ts",
  "test/swap/lands.security.test.ts",
  "test/swap/smart-account.security.test.ts",
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

describe("the attack table reaches every rule", () => {
  it("has, for each rule of FILL_RULES, an attack that this rule is the one to refuse", () => {
    const refusedBy = new Set<string | undefined>();
    for (const [, make] of ATTACK_SCENARIOS) {
      for (const attack of FILL_ATTACKS) {
        const s = make();
        const r = validate(s, attack.tamper(s));
        if (!r.ok) refusedBy.add(r.rule);
      }
      for (const attack of PAIRING_ATTACKS) {
        const s = make();
        const { quote, tx, tokens = s.tokens, limits } = attack.pair(s);
        const r = validate({ ...s, ...limits, quote, tokens }, tx);
        if (!r.ok) refusedBy.add(r.rule);
      }
    }
    for (const attack of NATIVE_SOL_OUT_ATTACKS) {
      const s = nativeSolOutScenario();
      const r = validate(s, attack.tamper(s));
      if (!r.ok) refusedBy.add(r.rule);
    }
    for (const [, make] of SMART_ACCOUNT_SCENARIOS) {
      for (const attack of SMART_ACCOUNT_ATTACKS) {
        const s = make();
        const r = validate(s, attack.tamper(s));
        if (!r.ok) refusedBy.add(r.rule);
      }
    }
    const names = FILL_RULES.map((rule) => RULE_NAMES.get(rule));
    expect(names).not.toContain(undefined);
    expect(names.filter((name) => !refusedBy.has(name))).toEqual([]);
  });
});

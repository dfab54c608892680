/**
 * Security cases: every tampered fill in the attack toolkit is refused with its specific code, after
 * a trip through the wire format, for several honest starting points. An attack named after a rule
 * ("tokenAccountsWritable: ...") must be refused by that very rule, not merely with its code.
 */
import { describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import type { FillValidation } from "../../src/fill/validate.ts";
import {
  nativeSolOutScenario,
  SMART_ACCOUNT_SCENARIOS,
  ATTACK_SCENARIOS as scenarios,
  validate,
} from "./attack-scenarios.ts";
import { SMART_ACCOUNT_ATTACKS, wrapped } from "./smart-account-attacks.ts";
import { FILL_ATTACKS, NATIVE_SOL_OUT_ATTACKS, PAIRING_ATTACKS } from "./tamper.ts";

/** For an attack named "<rule>: ...", the refusal must come from that rule of FILL_RULES. */
function expectRuleNamed(name: string, r: FillValidation): void {
  const rule = /^([a-zA-Z]+): /.exec(name)?.[1];
  if (rule) expect(r.ok ? "accepted" : r.rule).toBe(rule);
}

describe.each(scenarios)("fill attacks refused (%s)", (_label, make) => {
  it("accepts the honest fill the attacks start from", () => {
    const r = validate(make());
    expect(r.ok ? "accepted" : `${r.code}: ${r.context}`).toBe("accepted");
  });

  it.each(FILL_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const tx = attack.tamper(s);
    expect(Buffer.from(tx.message.serialize())).not.toEqual(
      Buffer.from(buildFillTransaction(s.params).message.serialize()),
    );
    const r = validate(s, tx);
    expect(r.ok ? "accepted" : r.code).toBe(attack.code);
    expect(!r.ok && r.context.length).toBeGreaterThan(10);
    expectRuleNamed(attack.name, r);
  });
});

describe.each(SMART_ACCOUNT_SCENARIOS)("smart-account fill attacks refused (%s)", (_label, make) => {
  it("accepts the honest fill, wrapped as the toolkit's SDK wraps it, the maker signing a later slot", () => {
    const s = make();
    const r = validate(s, wrapped(s));
    expect(r.ok ? "accepted" : `${r.code}: ${r.context}`).toBe("accepted");
    // The executor tells who pays the fee from this: present exactly for a smart-account fill.
    const sa = r.ok ? r.fill.smartAccount : undefined;
    expect(sa?.settings.toBase58()).toBe(s.account.settings.toBase58());
    // The execute lists the members last first (the SDK inserts each at the front).
    expect(sa?.members.map(String).sort()).toEqual(s.account.members.map(String).sort());
  });

  it.each(SMART_ACCOUNT_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const r = validate(s, attack.tamper(s));
    expect(r.ok ? "accepted" : `${r.code}: ${r.context}`).toMatch(new RegExp(`^${attack.code}: `));
    expectRuleNamed(attack.name, r);
  });
});

describe("native-SOL output attacks refused", () => {
  const make = nativeSolOutScenario;

  it("accepts the honest native-SOL output fill the attacks start from", () => {
    const r = validate(make());
    expect(r.ok ? "accepted" : `${r.code}: ${r.context}`).toBe("accepted");
  });

  it.each(NATIVE_SOL_OUT_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const r = validate(s, attack.tamper(s));
    expect(r.ok ? "accepted" : r.code).toBe(attack.code);
    expectRuleNamed(attack.name, r);
  });
});

describe("the attack table", () => {
  it("covers at least 30 attacks with distinct names", () => {
    const names = FILL_ATTACKS.map((a) => a.name);
    expect(names.length).toBeGreaterThanOrEqual(30);
    expect(new Set(names).size).toBe(names.length);
  });

  it("gives a detail naming the broken rule in plain words", () => {
    const s = scenarios[0]![1]();
    const attack = FILL_ATTACKS.find(
      (a) => a.name === "an output amount one unit above the quote less the fee",
    )!;
    const r = validate(s, attack.tamper(s));
    expect(!r.ok && r.context).toBe(
      "the fill gives the taker 24975001, but the quote's amountOut 25000000 less the 10 bps fee is 24975000",
    );
  });
});

describe.each(scenarios)("fills paired with a quote they do not belong to (%s)", (_label, make) => {
  it.each(PAIRING_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const { quote, tx, tokens = s.tokens, limits } = attack.pair(s);
    const r = validate({ ...s, ...limits, quote, tokens }, tx);
    expect(r.ok ? "accepted" : r.code).toBe(attack.code);
    expectRuleNamed(attack.name, r);
  });
});

describe("refusal details", () => {
  /** Keys are fresh in every scenario; the rest of a detail is fixed by the attack. */
  const elideKeys = (detail: string) => detail.replace(/\b[1-9A-HJ-NP-Za-km-z]{32,44}\b/g, "<key>");

  it("name the broken rule the same way every time, for every attack (snapshot, keys elided)", () => {
    const lines: string[] = [];
    const record = (label: string, r: FillValidation) =>
      lines.push(`${label}\n  -> ${r.ok ? "accepted" : `${r.code} [${r.rule}] ${elideKeys(r.context)}`}`);
    for (const [scenarioName, make] of scenarios) {
      for (const attack of FILL_ATTACKS) {
        const s = make();
        record(`${scenarioName}: ${attack.name}`, validate(s, attack.tamper(s)));
      }
      for (const attack of PAIRING_ATTACKS) {
        const s = make();
        const { quote, tx, tokens = s.tokens, limits } = attack.pair(s);
        record(`${scenarioName}: ${attack.name}`, validate({ ...s, ...limits, quote, tokens }, tx));
      }
    }
    for (const attack of NATIVE_SOL_OUT_ATTACKS) {
      const s = nativeSolOutScenario();
      record(`native SOL out: ${attack.name}`, validate(s, attack.tamper(s)));
    }
    for (const [scenarioName, make] of SMART_ACCOUNT_SCENARIOS) {
      for (const attack of SMART_ACCOUNT_ATTACKS) {
        const s = make();
        record(`${scenarioName}: ${attack.name}`, validate(s, attack.tamper(s)));
      }
    }
    expect(lines.join("\n")).toMatchSnapshot();
  });
});

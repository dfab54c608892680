/**
 * The fill rules are pure checks of one resolved value (src/fill/rules/resolve.ts): run in the listed
 * order, reversed, or shuffled, on a frozen check, every rule gives the same answer on every attack
 * fixture and on the honest fills, so the verdict (the first refusal in FILL_RULES' order) is the
 * same whatever order they ran in, and it is the one validateFill gives. A rule that wrote the check
 * would throw on the frozen value; one that read what another rule wrote would answer differently
 * when that rule had not run yet.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import type { FillCheck, FillRule, Refusal } from "../../src/fill/rules/index.ts";
import { FILL_RULES, RULE_NAMES } from "../../src/fill/rules/index.ts";
import { must, resolveForRules, UnresolvedFillError, validateFill } from "../../src/fill/validate.ts";
import { deserializeFillTransaction } from "../../src/program/decode.ts";
import { ATTACK_SCENARIOS, nativeSolOutScenario, SMART_ACCOUNT_SCENARIOS } from "./attack-scenarios.ts";
import { SMART_ACCOUNT_ATTACKS, wrapped } from "./smart-account-attacks.ts";
import { FILL_ATTACKS, type FillScenario, NATIVE_SOL_OUT_ATTACKS, PAIRING_ATTACKS } from "./tamper.ts";

/** A seeded shuffle (mulberry32), so a failure names an order that can be run again. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function deepFreeze<T>(value: T, seen = new Set<unknown>()): T {
  if (typeof value !== "object" || value === null || seen.has(value) || ArrayBuffer.isView(value))
    return value;
  seen.add(value);
  // Keys and transactions are library objects that memoise internally; the check's own data is not.
  const ctor = (value as object).constructor?.name;
  if (ctor === "PublicKey" || ctor === "VersionedTransaction" || ctor === "MessageV0") return value;
  for (const v of Object.values(value as object)) deepFreeze(v, seen);
  return Object.freeze(value);
}

type Answers = Map<string, Refusal | undefined>;

/** Every rule's answer, the rules run in `order`, keyed by rule name. */
function answers(check: FillCheck, order: readonly FillRule[]): Answers {
  return new Map(order.map((rule) => [RULE_NAMES.get(rule) as string, rule(check)]));
}

/** The first refusal in FILL_RULES' order, whatever order the answers came in. */
function verdict(a: Answers): { code: string; rule: string } | "accepted" {
  for (const rule of FILL_RULES) {
    const name = RULE_NAMES.get(rule) as string;
    const r = a.get(name);
    if (r) return { code: r.code, rule: name };
  }
  return "accepted";
}

interface Case {
  label: string;
  s: FillScenario;
  tx: VersionedTransaction;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const [label, make] of ATTACK_SCENARIOS) {
    const honest = make();
    out.push({ label: `${label}: the honest fill`, s: honest, tx: buildFillTransaction(honest.params) });
    for (const attack of FILL_ATTACKS) {
      const s = make();
      out.push({ label: `${label}: ${attack.name}`, s, tx: attack.tamper(s) });
    }
    for (const attack of PAIRING_ATTACKS) {
      const s = make();
      const { quote, tx, tokens = s.tokens, limits } = attack.pair(s);
      out.push({ label: `${label}: ${attack.name}`, s: { ...s, ...limits, quote, tokens }, tx });
    }
  }
  for (const attack of NATIVE_SOL_OUT_ATTACKS) {
    const s = nativeSolOutScenario();
    out.push({ label: `native SOL out: ${attack.name}`, s, tx: attack.tamper(s) });
  }
  for (const [label, make] of SMART_ACCOUNT_SCENARIOS) {
    const honest = make();
    out.push({ label: `${label}: the honest fill`, s: honest, tx: wrapped(honest) });
    for (const attack of SMART_ACCOUNT_ATTACKS) {
      const s = make();
      out.push({ label: `${label}: ${attack.name}`, s, tx: attack.tamper(s) });
    }
  }
  return out;
}

function inputOf({ s, tx }: Case) {
  const parsed = deserializeFillTransaction(Buffer.from(tx.serialize()));
  if (!parsed.ok) throw new Error(parsed.problem);
  return {
    tx: parsed.tx,
    quote: s.quote,
    maker: s.maker,
    tokens: s.tokens,
    maxFeeLamports: s.maxFeeLamports,
    ...(s.raisedFeeCap ? { raisedFeeCap: s.raisedFeeCap } : {}),
  };
}

describe("the fill rules run in any order", () => {
  const all = cases();

  it("covers the attack tables and the honest fills", () => {
    expect(all.length).toBeGreaterThan(200);
    expect(all.filter((c) => c.label.endsWith("the honest fill")).length).toBeGreaterThan(3);
  });

  it("gives every rule the same answer listed, reversed and shuffled, on a frozen check, and the verdict validateFill gives", () => {
    const orders: [string, readonly FillRule[]][] = [
      ["listed", FILL_RULES],
      ["reversed", [...FILL_RULES].reverse()],
      ...[1, 2, 3].map((seed): [string, FillRule[]] => [
        `shuffled (seed ${seed})`,
        shuffled(FILL_RULES, seed),
      ]),
    ];
    let refused = 0;
    for (const c of all) {
      const input = inputOf(c);
      const resolved = resolveForRules(input);
      if (!resolved.ok) continue;
      const check = deepFreeze(resolved.check);
      const listed = answers(check, FILL_RULES);
      for (const [name, order] of orders) {
        expect(answers(check, order), `${c.label}, rules ${name}`).toEqual(listed);
      }
      const v = verdict(listed);
      const r = validateFill(input);
      expect(v, c.label).toEqual(r.ok ? "accepted" : { code: r.code, rule: r.rule });
      if (v !== "accepted") refused++;
    }
    expect(refused).toBeGreaterThan(200);
  });
});

describe("must, for the facts an accepted fill is built from", () => {
  it("passes a present fact through and throws UnresolvedFillError for a missing one", () => {
    expect(must(0)).toBe(0);
    expect(() => must(undefined)).toThrow(UnresolvedFillError);
    expect(() => must(undefined)).toThrow("a fill passed every rule without a fact they require");
  });
});

/**
 * `parseJsonUninterned` (src/http/json-uninterned.ts): the quote path's JSON parse that keeps V8
 * from internalizing a quote's amount.
 *
 * - It gives exactly what `JSON.parse` gives, over hand-picked texts (nested and duplicate keys,
 *   escapes, whitespace, values that look like the marker, invalid JSON) and over generated ones:
 *   JSON values with an `amount` put at the top or nested, serialised and mutated.
 * - The amount it gives is not an internalized string where `JSON.parse` gives one, as V8 itself
 *   reports it (`%DebugPrint` in a child process with natives syntax on), through the very parse
 *   the quote listener runs.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonUninterned } from "../../src/http/json-uninterned.ts";
import { REPO_ROOT } from "../../tooling/processes.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 24);
const KEYS = ["amount", "amountOut"] as const;

/** Both parses of `text`: equal values, or both throw a SyntaxError. */
function expectSameAsJsonParse(text: string): void {
  let want: unknown;
  let wantError: unknown;
  try {
    want = JSON.parse(text);
  } catch (e) {
    wantError = e;
  }
  if (wantError !== undefined) {
    expect(() => parseJsonUninterned(text, KEYS), text).toThrow(SyntaxError);
    return;
  }
  expect(parseJsonUninterned(text, KEYS), text).toStrictEqual(want);
}

describe("parseJsonUninterned", () => {
  it("gives what JSON.parse gives for the texts that could fool its marker", () => {
    const texts = [
      '{"amount":"1000000000","quoteId":"q"}',
      '{"amount":"","x":1}',
      '{"amount":"~~~~~~~~~~~5"}', // a value that starts like the marker
      '{"amount":"1","amountOut":"22"}',
      '{"amount":5}', // not a string
      '{"amount" : "5"}', // whitespace: parsed as it is
      '{"amount":"5","amount":"6"}', // twice: JSON's last one wins
      '{"x":{"amount":"7"}}', // only nested
      '{"x":{"amount":"7"},"amount":"~~~~~~~~~~~5"}', // nested first, then a marker-like top one
      '{"x":{"amount":"7"},"am\\u006funt":"~~~~~~~~~~~5"}', // the top one spelled with an escape
      '{"note":"say \\"amount\\":\\"9\\"","amount":"3"}',
      '{"amount":"3","note":"amount"}',
      '{"amount":"3\\n"}',
      '[{"amount":"3"}]',
      '"amount"',
      "null",
      '{"amount":"3"',
      '{"amount":"3",}',
      '{"amount":"3"}x',
      "",
      '{"__proto__":{"amount":"1"},"amount":"2"}',
    ];
    for (const t of texts) expectSameAsJsonParse(t);
    expect(parseJsonUninterned('{"amount":"1000000000"}', ["amount"])).toStrictEqual({
      amount: "1000000000",
    });
  });

  it("gives what JSON.parse gives over generated and mutated texts", () => {
    const amountValue = fc.oneof(
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String),
      fc.string({ maxLength: 14 }),
      fc.constantFrom("~~~~~~~~~~~", "~~~~~~~~~~~1", ""),
      fc.integer(),
      fc.constant(null),
    );
    const withAmount = fc
      .tuple(
        fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        amountValue,
      )
      .map(([o, a]) => ({ ...o, amount: a }));
    const doc = fc.oneof(
      withAmount,
      withAmount.map((inner) => ({ wrap: inner })),
      fc.tuple(withAmount, withAmount).map(([a, b]) => ({ ...a, nested: b })),
      fc.jsonValue({ maxDepth: 3 }),
    );
    // Mutations of the serialised text: the spots a hand-written scanner would get wrong.
    const mutate = fc.constantFrom(
      (s: string) => s,
      (s: string) => s.replace('"amount":', '"amount" :'),
      (s: string) => s.replace('"amount":"', '"amount":"\\u0031'),
      (s: string) => s.replace('"amount"', '"am\\u006funt"'),
      (s: string) => s.replace("}", ',"amount":"4"}'),
      (s: string) => s.slice(0, -1),
      (s: string) => `${s} `,
      (s: string) => s.replace(/"amount":"(\d*)"/, '"amount":"$1\\"'),
    );
    fc.assert(
      fc.property(doc, mutate, (d, m) => {
        expectSameAsJsonParse(m(JSON.stringify(d)));
      }),
      { seed: SEED, numRuns: Number(process.env.FUZZ_RUNS ?? 1500) },
    );
  });

  it("keeps the quote listener's amount out of V8's string table, where JSON.parse puts it", () => {
    // The quote listener's own parse (src/http/native-quote.ts), then JSON.parse alone as the control:
    // V8 prints an internalized string's map type as ONE_BYTE_INTERNALIZED_STRING_TYPE.
    const script = `
      import { parseJsonText } from ${JSON.stringify(join(REPO_ROOT, "src/http/body.ts"))};
      import { QUOTE_REQUEST_UNINTERNED, quoteRequestFast, quoteRequestSchema } from ${JSON.stringify(join(REPO_ROOT, "src/contract/quote.ts"))};
      const body = (amount) => JSON.stringify({ requestId: "r-1", quoteId: "q-1", tokenIn: "a", tokenOut: "b",
        amount, quoteType: "exactIn", protocol: "v1", feeBps: 0 });
      const ours = parseJsonText(body("1234567891"), quoteRequestSchema, quoteRequestFast, QUOTE_REQUEST_UNINTERNED);
      console.log("ours " + ours.amount);
      %DebugPrint(ours.amount);
      const plain = parseJsonText(body("1234567892"), quoteRequestSchema, quoteRequestFast);
      console.log("plain " + plain.amount);
      %DebugPrint(plain.amount);
    `;
    const r = spawnSync(
      process.execPath,
      ["--allow-natives-syntax", "--import", "tsx", "--input-type=module", "-e", script],
      { cwd: REPO_ROOT, encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const [, ours, plain] = r.stdout.split(/^(?:ours|plain) \d+$/m);
    expect(r.stdout).toMatch(/^ours 1234567891$/m);
    expect(r.stdout).toMatch(/^plain 1234567892$/m);
    // The control shows the check can fail: plain JSON.parse internalizes the amount.
    expect(plain).toMatch(/INTERNALIZED_STRING_TYPE/);
    expect(ours).toMatch(/STRING_TYPE/);
    expect(ours).not.toMatch(/INTERNALIZED/);
  });
});

/**
 * Property: the quote path's zod-free parse (`quoteRequestFast`, src/contract/quote.ts) never
 * accepts what the schema (`quoteRequestSchema`) refuses, and where it accepts, its output is the
 * schema's own, key for key (`toStrictEqual`: the same keys present, null optional fields present as
 * undefined). Requests are generated near the valid ones, field by field valid or broken, with
 * unknown keys added, and sent through a JSON round trip as the wire would. Every valid request is
 * taken by the fast parse (otherwise the quote path would pay for zod anyway).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quoteRequestFast, quoteRequestSchema } from "../../src/contract/quote.ts";
import { MINT } from "../support/config.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 18);
const U64_MAX = "18446744073709551615";
/** Mostly the valid value, sometimes a broken one: most requests break in one field or none. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, broken: fc.Arbitrary<U>) =>
  fc.oneof({ arbitrary: valid, weight: 9 }, { arbitrary: broken, weight: 1 });

const validId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/);
const anyId = mostly(
  validId,
  fc.oneof(fc.constantFrom("", "a".repeat(129), "has space", "{tag}", "é", "a#b", null), fc.integer()),
);
const mint = fc.constantFrom(MINT.USDC, MINT.SOL, MINT.JUP, "1".repeat(44), "x");
const anyMint = mostly(mint, fc.constantFrom("", 7, null));
const validAmount = fc.oneof(
  fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }).map(String),
  fc.constantFrom("1", U64_MAX, "0001", "00000000000000000001"),
);
const anyAmount = mostly(
  validAmount,
  fc.constantFrom(
    "0",
    "000",
    "18446744073709551616",
    "999999999999999999999",
    "1.5",
    "-1",
    "1e6",
    " 1",
    "",
    5,
  ),
);
const aliases = [
  "exactIn",
  "ExactIn",
  "exact_in",
  "EXACT_IN",
  "exactOut",
  "ExactOut",
  "exact_out",
  "EXACT_OUT",
];
const validQuoteType = fc.constantFrom(...aliases);
const anyQuoteType = mostly(
  validQuoteType,
  fc.constantFrom("toString", "constructor", "__proto__", "hasOwnProperty", "exactin", "", 0, null),
);
const validFee = fc.integer({ min: 0, max: 10_000 });
const anyFee = mostly(validFee, fc.constantFrom(-1, 10_001, 1.5, "10", null, 2 ** 53, -0));
const key = fc.constantFrom(
  "7wCiid5CRcyHKsW9UTSf78jPq2vpHv6k4MDJiwkVQG2n",
  MINT.USDC,
  "11111111111111111111111111111111",
);
const anyKey = mostly(key, fc.constantFrom("0OIl", "1".repeat(45), "short", "", 3, true));
/** An optional field: absent, null, or a value. */
const optional = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof(fc.constant(undefined), fc.constant(null), arb).map((v) => ({ v }));

const request = (valid: boolean) =>
  fc
    .record({
      requestId: valid ? validId : anyId,
      quoteId: valid ? validId : anyId,
      pair: valid ? fc.tuple(mint, mint).filter(([a, b]) => a !== b) : fc.tuple(anyMint, anyMint),
      amount: valid ? validAmount : anyAmount,
      quoteType: valid ? validQuoteType : anyQuoteType,
      protocol: valid ? fc.constant("v1") : mostly(fc.constant("v1"), fc.constantFrom("v2", 1, null)),
      feeBps: valid ? validFee : anyFee,
      taker: optional(valid ? key : anyKey),
      fees: optional(
        valid ? fc.integer({ min: 0, max: 1_000_000_000 }) : fc.constantFrom(-5, 1.25, "9", 2 ** 53),
      ),
      isWsol: optional(valid ? fc.boolean() : fc.constantFrom("true", 1, false)),
      receiver: optional(valid ? key : anyKey),
      extra: fc.dictionary(fc.constantFrom("foo", "tokenInDecimals", "x"), fc.jsonValue(), { maxKeys: 2 }),
    })
    .map((g) => {
      const body: Record<string, unknown> = {
        ...g.extra,
        requestId: g.requestId,
        quoteId: g.quoteId,
        tokenIn: g.pair[0],
        tokenOut: g.pair[1],
        amount: g.amount,
        quoteType: g.quoteType,
        protocol: g.protocol,
        feeBps: g.feeBps,
      };
      if (g.taker.v !== undefined) body.taker = g.taker.v;
      if (g.fees.v !== undefined) body.suggestedPrioritizationFees = g.fees.v;
      if (g.isWsol.v !== undefined) body.isWsol = g.isWsol.v;
      if (g.receiver.v !== undefined) body.receiver = g.receiver.v;
      // The wire: what JSON carries (no undefined, -0 as 0).
      return JSON.parse(JSON.stringify(body)) as unknown;
    });

describe("quoteRequestFast against quoteRequestSchema", () => {
  it("accepts only what the schema accepts, with the schema's output key for key (near-valid requests)", () => {
    let accepted = 0;
    fc.assert(
      fc.property(request(false), (raw) => {
        const fast = quoteRequestFast(raw);
        const zod = quoteRequestSchema.safeParse(raw);
        if (fast !== undefined) {
          accepted++;
          expect(zod.success).toBe(true);
          expect(fast).toStrictEqual(zod.data);
        }
      }),
      { seed: SEED, numRuns: 3_000 },
    );
    // The generator reaches both sides, or the property would say little.
    expect(accepted).toBeGreaterThan(300);
    expect(accepted).toBeLessThan(2_700);
  });

  it("takes every valid request itself, with the schema's output key for key", () => {
    fc.assert(
      fc.property(request(true), (raw) => {
        const zod = quoteRequestSchema.safeParse(raw);
        expect(zod.success).toBe(true);
        expect(quoteRequestFast(raw)).toStrictEqual(zod.data);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it("leaves a request the schema refuses to the schema (undefined), e.g. a prototype key as quoteType", () => {
    const base = {
      requestId: "r",
      quoteId: "q",
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amount: "1",
      quoteType: "exactIn",
      protocol: "v1",
      feeBps: 0,
    };
    expect(quoteRequestFast(base)).toBeDefined();
    for (const quoteType of ["toString", "constructor", "__proto__"]) {
      expect(quoteRequestFast({ ...base, quoteType })).toBeUndefined();
      expect(quoteRequestSchema.safeParse({ ...base, quoteType }).success).toBe(false);
    }
  });
});

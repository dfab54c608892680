/**
 * The compute-unit limit's floor (computeUnitLimitCoversShape) and ceiling
 * (computeUnitLimitWithinCeiling), each pinned on both sides of its boundary through validateFill,
 * for every leg shape the maker trades (SPL Token, Token-2022, native SOL in and out, with and
 * without the taker's ATA creation); each Lighthouse assertion counted in the floor (with a table that
 * has a per-assertion measurement, which the shipped one lacks); and the measured table they read
 * kept consistent.
 */
import { Keypair, type PublicKey, type TransactionInstruction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { COMPUTE_UNITS, type ComputeUnitTable, LEG_KINDS, legKey } from "../../src/fill/compute-units.ts";
import {
  computeUnitFloor,
  MAX_COMPUTE_UNIT_LIMIT,
  PERMISSIONED_COMPUTE_UNIT_LIMIT,
} from "../../src/fill/rules/compute-unit-limit.ts";
import { type FillValidation, validateFill } from "../../src/fill/validate.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";
import {
  type FillScenario,
  scenarioFromQuote,
  shapeOfParams,
  takerLamportsAbove,
  tokenMap,
} from "./tamper.ts";

const NOW_MS = 1_760_000_000_000;
/** A Token-2022 mint (no transfer fee) configured beside the shipped tokens. */
const T22 = Keypair.generate().publicKey.toBase58();
const TOKENS = tokenMap([
  { mint: T22, symbol: "T22", decimals: 6, tokenProgram: "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" },
]);

function scenario(
  tokenIn: string,
  tokenOut: string,
  opts: {
    nativeSolIn?: boolean;
    nativeSolOut?: boolean;
    createTakerOutputAta?: boolean;
    permissioned?: boolean;
    lighthouse?: (taker: PublicKey) => TransactionInstruction[];
  } = {},
): FillScenario {
  const maker = Keypair.generate().publicKey;
  const taker = Keypair.generate().publicKey;
  const quote = storedQuote({
    tokenIn,
    tokenOut,
    amountIn: 1_000_000_000n,
    amountOut: 25_000_000n,
    quoteType: "exactIn",
    feeBps: 10,
    maker,
    taker,
    createdAtMs: NOW_MS - 3_000,
    prioritizationFee: 10_000,
  });
  if (opts.permissioned) quote.permissioned = true;
  return scenarioFromQuote(quote, {
    maker,
    taker,
    tokens: TOKENS,
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    nowUnix: BigInt(NOW_MS / 1000),
    nativeSolIn: opts.nativeSolIn,
    nativeSolOut: opts.nativeSolOut,
    createTakerOutputAta: opts.createTakerOutputAta,
    lighthouseInstructions: opts.lighthouse?.(taker),
  });
}

function validateWithLimit(
  s: FillScenario,
  computeUnitLimit: number,
  computeUnits?: ComputeUnitTable,
): FillValidation {
  return validateFill({
    tx: buildFillTransaction({ ...s.params, computeUnitLimit }),
    quote: s.quote,
    maker: s.maker,
    tokens: s.tokens,
    maxFeeLamports: s.maxFeeLamports,
    computeUnits,
  });
}

const outcome = (r: FillValidation) => (r.ok ? "accepted" : r.code);

const SHAPES: [string, () => FillScenario][] = [
  ["SPL -> SPL", () => scenario(MINT.JUP, MINT.USDC, { createTakerOutputAta: false })],
  [
    "SPL -> SPL, taker output ATA created",
    () => scenario(MINT.JUP, MINT.USDC, { createTakerOutputAta: true }),
  ],
  [
    "native SOL -> SPL",
    () => scenario(MINT.SOL, MINT.USDC, { nativeSolIn: true, createTakerOutputAta: false }),
  ],
  ["SPL -> native SOL", () => scenario(MINT.USDC, MINT.SOL, { nativeSolOut: true })],
  [
    "SPL -> Token-2022, taker output ATA created",
    () => scenario(MINT.USDC, T22, { createTakerOutputAta: true }),
  ],
  ["Token-2022 -> native SOL", () => scenario(T22, MINT.SOL, { nativeSolOut: true })],
];

describe.each(SHAPES)("computeUnitLimitCoversShape (%s)", (_label, make) => {
  it("accepts a compute-unit limit exactly at the shape's floor", () => {
    const s = make();
    expect(outcome(validateWithLimit(s, computeUnitFloor(shapeOfParams(s.params))))).toBe("accepted");
  });

  it("refuses a compute-unit limit one unit below the shape's floor with COMPUTE_UNIT_LIMIT_TOO_LOW", () => {
    const s = make();
    const r = validateWithLimit(s, computeUnitFloor(shapeOfParams(s.params)) - 1);
    expect(outcome(r)).toBe("COMPUTE_UNIT_LIMIT_TOO_LOW");
    expect(!r.ok && r.context).toMatch(/would fail on-chain/);
  });
});

describe("computeUnitLimitCoversShape: the floor follows the shape", () => {
  it("asks more of a fill that creates the taker's ATA than of the same fill without", () => {
    const without = scenario(MINT.JUP, MINT.USDC, { createTakerOutputAta: false });
    const withAta = scenario(MINT.JUP, MINT.USDC, { createTakerOutputAta: true });
    expect(computeUnitFloor(shapeOfParams(withAta.params))).toBeGreaterThan(
      computeUnitFloor(shapeOfParams(without.params)),
    );
  });

  it("refuses with the SPL-only floor a Token-2022 fill whose limit fits only an SPL fill", () => {
    const spl = computeUnitFloor(
      shapeOfParams(scenario(MINT.JUP, MINT.USDC, { createTakerOutputAta: true }).params),
    );
    const t22 = scenario(MINT.USDC, T22, { createTakerOutputAta: true });
    expect(outcome(validateWithLimit(t22, spl))).toBe("COMPUTE_UNIT_LIMIT_TOO_LOW");
  });
});

describe("computeUnitLimitCoversShape: each Lighthouse assertion adds its measured need", () => {
  // The shipped table has no Lighthouse measurement yet (the local chain cannot run the program), so
  // these pass a table that has one: 1,000 units per assertion. The floor is worked out by hand:
  // ceil((SPL -> SPL legs + one SPL ATA creation + assertions x 1,000) x 1.1).
  const PER_ASSERTION = 1_000;
  const table: ComputeUnitTable = {
    ...COMPUTE_UNITS,
    lighthouseAssertion: { measured: PER_ASSERTION, floor: 1_100 },
  };
  const handFloor = (assertions: number) =>
    Math.ceil(
      (COMPUTE_UNITS.legs["token->token"]!.measured +
        COMPUTE_UNITS.ataCreation.token!.measured +
        assertions * PER_ASSERTION) *
        (1 + COMPUTE_UNITS.margin),
    );
  const twoAssertions = () =>
    scenario(MINT.JUP, MINT.USDC, {
      createTakerOutputAta: true,
      lighthouse: (taker) => [takerLamportsAbove(taker, 0n), takerLamportsAbove(taker, 1n)],
    });

  it("accepts a fill with two assertions at exactly the floor that counts both", () => {
    expect(outcome(validateWithLimit(twoAssertions(), handFloor(2), table))).toBe("accepted");
  });

  it("computeUnitLimitCoversShape: refuses a fill with two assertions one unit below that floor", () => {
    const r = validateWithLimit(twoAssertions(), handFloor(2) - 1, table);
    expect(r.ok ? "accepted" : [r.code, r.rule]).toEqual([
      "COMPUTE_UNIT_LIMIT_TOO_LOW",
      "computeUnitLimitCoversShape",
    ]);
    expect(!r.ok && r.context).toMatch(/2 Lighthouse assertion\(s\)/);
  });

  it("computeUnitLimitCoversShape: refuses a fill with two assertions whose limit fits the fill without them", () => {
    const r = validateWithLimit(twoAssertions(), handFloor(0), table);
    expect(r.ok ? "accepted" : r.code).toBe("COMPUTE_UNIT_LIMIT_TOO_LOW");
  });
});

describe("computeUnitFloor", () => {
  it("refuses to guess a floor for a shape the table has no measurement of (native SOL on both sides)", () => {
    expect(() =>
      computeUnitFloor({
        input: "nativeSol",
        output: "nativeSol",
        ataCreations: [],
        lighthouseAssertions: 0,
      }),
    ).toThrow(new RangeError("no compute-unit measurement for nativeSol->nativeSol"));
  });
});

describe("computeUnitLimitWithinCeiling", () => {
  it("accepts a compute-unit limit of exactly 1,400,000 on an open pair", () => {
    expect(outcome(validateWithLimit(scenario(MINT.JUP, MINT.USDC), MAX_COMPUTE_UNIT_LIMIT))).toBe(
      "accepted",
    );
  });

  it("refuses 1,400,001 on an open pair with COMPUTE_UNIT_LIMIT_EXCEEDED", () => {
    expect(outcome(validateWithLimit(scenario(MINT.JUP, MINT.USDC), MAX_COMPUTE_UNIT_LIMIT + 1))).toBe(
      "COMPUTE_UNIT_LIMIT_EXCEEDED",
    );
  });

  it("accepts a compute-unit limit of exactly 200,000 on a permissioned pair", () => {
    const s = scenario(MINT.JUP, MINT.USDC, { permissioned: true });
    expect(outcome(validateWithLimit(s, PERMISSIONED_COMPUTE_UNIT_LIMIT))).toBe("accepted");
  });

  it("refuses 200,001 on a permissioned pair with COMPUTE_UNIT_LIMIT_EXCEEDED, naming the pair kind", () => {
    const s = scenario(MINT.JUP, MINT.USDC, { permissioned: true });
    const r = validateWithLimit(s, PERMISSIONED_COMPUTE_UNIT_LIMIT + 1);
    expect(outcome(r)).toBe("COMPUTE_UNIT_LIMIT_EXCEEDED");
    expect(!r.ok && r.context).toMatch(/permissioned/);
  });
});

describe("the measured compute-unit table (src/fill/compute-units.ts)", () => {
  it("has a measurement for every pair of leg kinds but native SOL on both sides", () => {
    const expected = LEG_KINDS.flatMap((i) =>
      LEG_KINDS.filter((o) => !(i === "nativeSol" && o === "nativeSol")).map((o) => legKey(i, o)),
    );
    expect(Object.keys(COMPUTE_UNITS.legs).sort()).toEqual(expected.sort());
    expect(Object.keys(COMPUTE_UNITS.ataCreation).sort()).toEqual(["token", "token2022"]);
  });

  it("keeps each row's floor at its measurement plus the margin, rounded up", () => {
    expect(COMPUTE_UNITS.margin).toBeGreaterThan(0);
    for (const row of [...Object.values(COMPUTE_UNITS.legs), ...Object.values(COMPUTE_UNITS.ataCreation)]) {
      expect(row.measured).toBeGreaterThan(0);
      expect(row.floor).toBe(Math.ceil(row.measured * (1 + COMPUTE_UNITS.margin)));
    }
  });
});

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
import { CU_CAP, CU_MULTIPLIER, wrapFillForSmartAccount } from "../../sandbox/fill/smart-account.ts";
import { COMPUTE_UNITS, type ComputeUnitTable, LEG_KINDS, legKey } from "../../src/fill/compute-units.ts";
import {
  computeUnitFloor,
  MAX_COMPUTE_UNIT_LIMIT,
  PERMISSIONED_COMPUTE_UNIT_LIMIT,
  SMART_ACCOUNT_WRAP,
} from "../../src/fill/rules/compute-unit-limit.ts";
import { type FillValidation, validateFill } from "../../src/fill/validate.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";
import { smartAccountScenario } from "./attack-scenarios.ts";
import type { SmartAccountScenario } from "./smart-account-attacks.ts";
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

describe("computeUnitLimitWithinCeiling for a fill wrapped for a smart-account taker", () => {
  /** A smart-account taker's quote, permissioned or not, its fill wrapped as the toolkit's SDK wraps it. */
  const smart = (permissioned: boolean): SmartAccountScenario => {
    const s = smartAccountScenario({
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amountIn: 1_000_000_000n,
      amountOut: 25_000_000n,
      quoteType: "exactIn",
      feeBps: 10,
    });
    s.quote.permissioned = permissioned;
    return s;
  };
  /** The SDK's wrap of a fill whose inner limit is `inner`; `outer` sets the wrapped limit itself. */
  const wrap = (s: SmartAccountScenario, inner: number, outer?: number) =>
    wrapFillForSmartAccount(
      buildFillTransaction({ ...s.params, computeUnitLimit: inner }),
      s.account,
      outer === undefined ? {} : { computeUnitLimit: outer },
    );
  const judge = (s: SmartAccountScenario, tx: ReturnType<typeof wrap>) =>
    validateFill({ tx, quote: s.quote, maker: s.maker, tokens: s.tokens, maxFeeLamports: s.maxFeeLamports });
  const limitOf = (tx: ReturnType<typeof wrap>) => {
    const ix = tx.message.compiledInstructions[0]!;
    return Buffer.from(ix.data).readUInt32LE(1);
  };

  it("is the toolkit's wrapper: x 2, at most 1,400,000 (squads-sdk WrapOptions::default())", () => {
    expect(SMART_ACCOUNT_WRAP).toEqual({ cuMultiplier: 2, cuCap: 1_400_000 });
    // the sandbox's stand-in for the SDK wraps the same way
    expect([CU_MULTIPLIER, CU_CAP]).toEqual([SMART_ACCOUNT_WRAP.cuMultiplier, SMART_ACCOUNT_WRAP.cuCap]);
  });

  it("accepts the honest wrapped permissioned fill: the inner 200,000 becomes 400,000, and the maker pays no fee", () => {
    const s = smart(true);
    const tx = wrap(s, PERMISSIONED_COMPUTE_UNIT_LIMIT);
    expect(limitOf(tx)).toBe(400_000);
    const r = judge(s, tx);
    expect(r.ok ? "accepted" : `${r.code}: ${r.context}`).toBe("accepted");
    expect(r.ok && r.fill.computeUnitLimit).toBe(400_000);
    // a member pays the network fee: nothing of it is the maker's
    expect(r.ok && r.fill.makerPaysLamports).toBe(0n);
  });

  it("refuses a wrapped permissioned limit of 400,001 (above 2 x 200,000) with COMPUTE_UNIT_LIMIT_EXCEEDED", () => {
    const s = smart(true);
    const r = judge(s, wrap(s, PERMISSIONED_COMPUTE_UNIT_LIMIT, 400_001));
    expect(outcome(r)).toBe("COMPUTE_UNIT_LIMIT_EXCEEDED");
    expect(!r.ok && r.context).toBe(
      "the compute-unit limit 400001 is above the 400000 allowed for a permissioned pair wrapped for a smart account",
    );
  });

  it("refuses the SDK's own wrap of an inner limit above 200,000 on a permissioned pair (200,001 -> 400,002)", () => {
    const s = smart(true);
    const tx = wrap(s, PERMISSIONED_COMPUTE_UNIT_LIMIT + 1);
    expect(limitOf(tx)).toBe(400_002);
    expect(outcome(judge(s, tx))).toBe("COMPUTE_UNIT_LIMIT_EXCEEDED");
  });

  it("holds a wrapped open pair at the wrapper's cap: 1,400,000 accepted, 1,400,001 refused", () => {
    const s = smart(false);
    // the SDK caps the double of 800,000 at 1,400,000
    const capped = wrap(s, 800_000);
    expect(limitOf(capped)).toBe(1_400_000);
    expect(outcome(judge(s, capped))).toBe("accepted");
    const r = judge(s, wrap(s, 800_000, 1_400_001));
    expect(outcome(r)).toBe("COMPUTE_UNIT_LIMIT_EXCEEDED");
    expect(!r.ok && r.context).toBe(
      "the compute-unit limit 1400001 is above the 1400000 allowed wrapped for a smart account",
    );
  });

  it("keeps 200,000 for a permissioned fill that is not wrapped, whose fee the maker pays: 400,000 is refused", () => {
    const s = scenario(MINT.JUP, MINT.USDC, { permissioned: true });
    const r = validateWithLimit(s, 2 * PERMISSIONED_COMPUTE_UNIT_LIMIT);
    expect(outcome(r)).toBe("COMPUTE_UNIT_LIMIT_EXCEEDED");
    expect(!r.ok && r.context).toBe(
      "the compute-unit limit 400000 is above the 200000 allowed for a permissioned pair",
    );
    // at its ceiling the maker's fee is within its cap: limit x price / 1e6 + 5,000 per signature
    const ok = validateWithLimit(s, PERMISSIONED_COMPUTE_UNIT_LIMIT);
    expect(ok.ok && ok.fill.makerPaysLamports).toBe(2_000n + 10_000n);
    expect(ok.ok && ok.fill.makerPaysLamports <= s.maxFeeLamports).toBe(true);
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

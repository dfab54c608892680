import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { deserializeFillTransaction } from "../../src/fill/decode.ts";
import { type FillValidation, validateFill } from "../../src/fill/validate.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";
import {
  FILL_ATTACKS,
  type FillScenario,
  NATIVE_SOL_OUT_ATTACKS,
  PAIRING_ATTACKS,
  scenarioFromQuote,
  tokenMap,
} from "./tamper.ts";

const NOW_MS = 1_760_000_000_000;
const NOW = BigInt(NOW_MS / 1000);

function scenario(q: {
  tokenIn: string;
  tokenOut: string;
  amountIn: bigint;
  amountOut: bigint;
  quoteType: "exactIn" | "exactOut";
  feeBps: number;
  nativeSolIn?: boolean;
  nativeSolOut?: boolean;
}): FillScenario {
  const maker = Keypair.generate().publicKey;
  const taker = Keypair.generate().publicKey;
  // The quote path always answers a prioritizationFeeToUse; the honest fill uses it.
  const quote = storedQuote({ ...q, maker, taker, createdAtMs: NOW_MS - 3_000, prioritizationFee: 53_770 });
  return scenarioFromQuote(quote, {
    maker,
    taker,
    tokens: tokenMap(),
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    nowUnix: NOW,
    nativeSolIn: q.nativeSolIn,
    nativeSolOut: q.nativeSolOut,
  });
}

function validate(s: FillScenario, tx = buildFillTransaction(s.params)): FillValidation {
  // Through the wire, as POST /swap receives it.
  const parsed = deserializeFillTransaction(Buffer.from(tx.serialize()));
  if (!parsed.ok) throw new Error(parsed.problem);
  return validateFill({
    tx: parsed.tx,
    quote: s.quote,
    maker: s.maker,
    tokens: s.tokens,
    maxFeeLamports: s.maxFeeLamports,
  });
}

const scenarios: [string, () => FillScenario][] = [
  [
    "exactIn JUP -> USDC, 10 bps",
    () =>
      scenario({
        tokenIn: MINT.JUP,
        tokenOut: MINT.USDC,
        amountIn: 1_000_000_000n,
        amountOut: 25_000_000n,
        quoteType: "exactIn",
        feeBps: 10,
      }),
  ],
  [
    "exactOut native SOL -> USDT, 3 bps",
    () =>
      scenario({
        tokenIn: MINT.SOL,
        tokenOut: MINT.USDT,
        amountIn: 55_555_555n,
        amountOut: 10_000_001n,
        quoteType: "exactOut",
        feeBps: 3,
        nativeSolIn: true,
      }),
  ],
];

describe.each(scenarios)("fill attacks refused (%s)", (_label, make) => {
  it("accepts the honest fill the attacks start from", () => {
    const r = validate(make());
    if (!r.ok) throw new Error(`${r.code}: ${r.detail}`);
  });

  it.each(FILL_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const tx = attack.tamper(s);
    expect(Buffer.from(tx.message.serialize())).not.toEqual(
      Buffer.from(buildFillTransaction(s.params).message.serialize()),
    );
    const r = validate(s, tx);
    expect(r.ok ? "accepted" : r.code).toBe(attack.code);
    expect(!r.ok && r.detail.length).toBeGreaterThan(10);
  });
});

describe("native-SOL output attacks refused", () => {
  const make = () =>
    scenario({
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amountIn: 180_000_000n,
      amountOut: 1_000_000_000n,
      quoteType: "exactIn",
      feeBps: 5,
      nativeSolOut: true,
    });

  it("accepts the honest native-SOL output fill the attacks start from", () => {
    const r = validate(make());
    if (!r.ok) throw new Error(`${r.code}: ${r.detail}`);
  });

  it.each(NATIVE_SOL_OUT_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const r = validate(s, attack.tamper(s));
    expect(r.ok ? "accepted" : r.code).toBe(attack.code);
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
    expect(!r.ok && r.detail).toBe(
      "the fill gives the taker 24975001, but the quote's amountOut 25000000 less the 10 bps fee is 24975000",
    );
  });
});

describe.each(scenarios)("fills paired with a quote they do not belong to (%s)", (_label, make) => {
  it.each(PAIRING_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", (_name, attack) => {
    const s = make();
    const { quote, tx } = attack.pair(s);
    const r = validate({ ...s, quote }, tx);
    expect(r.ok ? "accepted" : r.code).toBe(attack.code);
  });
});

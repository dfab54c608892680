/**
 * The honest starting points of the fill attack tests: fresh maker and taker keys, a stored quote,
 * and the operator's fill for it; and `validate`, which sends a transaction through the wire format
 * and validateFill as POST /swap would.
 */
import { Keypair } from "@solana/web3.js";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { type FillValidation, validateFill } from "../../src/fill/validate.ts";
import { deserializeFillTransaction } from "../../src/program/decode.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";
import {
  newSmartAccount,
  type SmartAccountScenario,
  smartAccountScenarioFromQuote,
} from "./smart-account-attacks.ts";
import { type FillScenario, scenarioFromQuote, tokenMap } from "./tamper.ts";

const NOW_MS = 1_760_000_000_000;
const NOW = BigInt(NOW_MS / 1000);

export function scenario(q: {
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

export function validate(s: FillScenario, tx = buildFillTransaction(s.params)): FillValidation {
  // Through the wire, as POST /swap receives it.
  const parsed = deserializeFillTransaction(Buffer.from(tx.serialize()));
  if (!parsed.ok) throw new Error(parsed.problem);
  return validateFill({
    tx: parsed.tx,
    quote: s.quote,
    maker: s.maker,
    tokens: s.tokens,
    maxFeeLamports: s.maxFeeLamports,
    ...(s.raisedFeeCap ? { raisedFeeCap: s.raisedFeeCap } : {}),
  });
}

export const ATTACK_SCENARIOS: [string, () => FillScenario][] = [
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

/** The starting point of NATIVE_SOL_OUT_ATTACKS: 180 USDC for 1 SOL paid out as native SOL, 5 bps. */
export const nativeSolOutScenario = (): FillScenario =>
  scenario({
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amountIn: 180_000_000n,
    amountOut: 1_000_000_000n,
    quoteType: "exactIn",
    feeBps: 5,
    nativeSolOut: true,
  });

/** A scenario whose taker is a smart account's vault (two members), its fill wrapped as the SDK does. */
export function smartAccountScenario(q: Parameters<typeof scenario>[0]): SmartAccountScenario {
  const maker = Keypair.generate().publicKey;
  const sa = newSmartAccount();
  const quote = storedQuote({
    ...q,
    maker,
    taker: sa.account.vault,
    createdAtMs: NOW_MS - 3_000,
    prioritizationFee: 53_770,
  });
  return smartAccountScenarioFromQuote(quote, {
    ...sa,
    maker,
    tokens: tokenMap(),
    recentBlockhash: Keypair.generate().publicKey.toBase58(),
    nowUnix: NOW,
    nativeSolIn: q.nativeSolIn,
    nativeSolOut: q.nativeSolOut,
  });
}

export const SMART_ACCOUNT_SCENARIOS: [string, () => SmartAccountScenario][] = [
  [
    "smart account, exactIn JUP -> USDC, 10 bps",
    () =>
      smartAccountScenario({
        tokenIn: MINT.JUP,
        tokenOut: MINT.USDC,
        amountIn: 1_000_000_000n,
        amountOut: 25_000_000n,
        quoteType: "exactIn",
        feeBps: 10,
      }),
  ],
  [
    "smart account, exactOut native SOL -> USDT, 3 bps",
    () =>
      smartAccountScenario({
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

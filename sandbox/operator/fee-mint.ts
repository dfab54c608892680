/**
 * The operator's fee mint and the fill amounts it implies (docs/contract.md, "Fees").
 *
 * The fee is counted in one of the order's two mints, picked by priority: SOL first, then
 * stablecoins, then liquid staked tokens, then bluechips, then the rest. The operator publishes the
 * order of the tiers, not its full lists; the lists below are the well-known mainnet mints of each
 * tier (what we cannot know: the operator's exact membership, and its tie-break between two mints of
 * one tier, taken here as the output mint, the side the acceptance fixture carries its fee on).
 *
 * The fill carries the fee in one of the two shapes src/fill/fee-shape.ts accepts:
 * - fee in the output mint: makers are asked for the order's amount (exactIn), or for the gross G
 *   whose fee-less part is the amount asked (exactOut), so the taker receives exactly what it asked;
 *   the fill pays quoted amountOut less the fee.
 * - fee in the input mint: makers are asked for the amount less its fee (exactIn: the taker pays
 *   exactly what it asked), or for the amount asked (exactOut); the taker pays the quoted amountIn
 *   plus the fee (exactIn: the amount it asked; exactOut: the gross G of the quoted amountIn).
 */
import type { QuoteType } from "../../pricing/book.ts";
import { grossForNet } from "../../src/fill/fee-shape.ts";
import { NATIVE_MINT, operatorFee } from "../../src/program/layout.ts";

const SOL = NATIVE_MINT.toBase58();

/** Mainnet stablecoins: USDC, USDT, PYUSD. */
export const STABLECOIN_MINTS: ReadonlySet<string> = new Set([
  "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
  "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo",
]);

/** Liquid staked SOL: mSOL, jitoSOL, bSOL, JupSOL, INF. */
export const LST_MINTS: ReadonlySet<string> = new Set([
  "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So",
  "J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn",
  "bSo13r4TkiE4KumL71LsHTPpL2euBYLFx6h9HP3piy1",
  "jupSoLaHXQiZZTSfEWMTRRgpnyFm8f6sZdosWBjx93v",
  "5oVNBeEEQvYi1cX3ir8Dx5n1P7pdxydbGF2X4TxVusJm",
]);

/** Bluechips: JUP, BONK, WIF, JTO, PYTH, RAY, wBTC (Wormhole), wETH (Wormhole). */
export const BLUECHIP_MINTS: ReadonlySet<string> = new Set([
  "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
  "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263",
  "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm",
  "jtojtomepa8beP8AuQc6eXt5FriJwfFMwQx2v2f9mCL",
  "HZ1JovNiVvGrGNiiYvEozEVgZ58xaU3RKwX8eACQBCt3",
  "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R",
  "3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh",
  "7vfCXTUXx5WJV5JADk17DUJ4ksgau7utNKj4b963voxs",
]);

/** 0 = SOL (first) ... 4 = the rest (last). */
export function feeTier(mint: string, stables: ReadonlySet<string> = STABLECOIN_MINTS): number {
  if (mint === SOL) return 0;
  if (stables.has(mint) || STABLECOIN_MINTS.has(mint)) return 1;
  if (LST_MINTS.has(mint)) return 2;
  if (BLUECHIP_MINTS.has(mint)) return 3;
  return 4;
}

export type FeeSide = "input" | "output";

/** Which of the two mints the fee is counted in (ties: the output mint). */
export function feeSideFor(inputMint: string, outputMint: string, stables?: ReadonlySet<string>): FeeSide {
  return feeTier(inputMint, stables) < feeTier(outputMint, stables) ? "input" : "output";
}

/** The amount makers are asked to quote for an order of `amount` (see the file comment). */
export function makerAmountFor(side: FeeSide, quoteType: QuoteType, amount: bigint, feeBps: number): bigint {
  if (side === "output" && quoteType === "exactOut") {
    const gross = grossForNet(amount, feeBps);
    if (gross === undefined) throw new Error(`no gross amount for ${amount} at ${feeBps} bps`);
    return gross;
  }
  if (side === "input" && quoteType === "exactIn") return amount - operatorFee(amount, feeBps);
  return amount;
}

export interface OrderAmounts {
  /** What the taker pays: the fill's input_amount. */
  inputAmount: bigint;
  /** What the taker receives: the fill's output_amount. */
  outputAmount: bigint;
  /** The operator's fee, in the fee side's mint. */
  fee: bigint;
}

/**
 * The fill's amounts for a maker's quote. `orderAmount` is the amount the order asked for (for an
 * exactIn order with the fee on the input it is what the taker pays).
 */
export function orderAmountsFor(
  side: FeeSide,
  quoteType: QuoteType,
  orderAmount: bigint,
  quoted: { amountIn: bigint; amountOut: bigint },
  feeBps: number,
): OrderAmounts {
  if (side === "output") {
    const fee = operatorFee(quoted.amountOut, feeBps);
    return { inputAmount: quoted.amountIn, outputAmount: quoted.amountOut - fee, fee };
  }
  const gross = quoteType === "exactIn" ? orderAmount : grossForNet(quoted.amountIn, feeBps);
  if (gross === undefined) throw new Error(`no gross amount for ${quoted.amountIn} at ${feeBps} bps`);
  return { inputAmount: gross, outputAmount: quoted.amountOut, fee: gross - quoted.amountIn };
}

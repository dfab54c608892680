/**
 * The compute budget, which the maker pays for: exactly one SetComputeUnitLimit (not zero; its floor
 * and ceiling are compute-unit-limit.ts) and
 * one SetComputeUnitPrice, no other ComputeBudget instruction, none naming accounts; the total
 * ceil(limit x price / 1e6) + 5,000 per signature within limits.maxFeeLamports (nothing for the maker
 * when a smart account's member pays); a price above the quoted prioritizationFeeToUse only within
 * the raise cap.
 */

import type { ComputeBudgetOtherIx, ComputeUnitLimitIx, ComputeUnitPriceIx } from "../../program/decode.ts";
import { LAMPORTS_PER_SIGNATURE, NATIVE_MINT } from "../../program/layout.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import type { RaisedFeeCap } from "../raised-fee-cap.ts";
import { type FillCheck, type FillRule, type Refusal, refuse } from "./check.ts";
import { computeUnitLimitWithinCeiling } from "./compute-unit-limit.ts";
import type { Walk } from "./instructions.ts";

export { MAX_COMPUTE_UNIT_LIMIT } from "./compute-unit-limit.ts";

const NATIVE_MINT_BASE58 = NATIVE_MINT.toBase58();

/** ceil(limit x price / 1e6) + 5,000 x signatures. */
export function makerFeeLamports(
  computeUnitLimit: number,
  microLamportsPerCu: bigint,
  signatures: number,
): bigint {
  const micro = BigInt(computeUnitLimit) * microLamportsPerCu;
  return (micro + 999_999n) / 1_000_000n + LAMPORTS_PER_SIGNATURE * BigInt(signatures);
}

/** One ComputeBudget instruction before the fill (instructions.ts walks them in order). */
export function computeBudgetInstruction(
  ix: ComputeUnitLimitIx | ComputeUnitPriceIx | ComputeBudgetOtherIx,
  where: string,
  walk: Walk,
): Refusal | undefined {
  if (ix.kind === "computeBudgetOther") {
    return refuse(
      FillRejectCode.INVALID_COMPUTE_BUDGET,
      `${where} is ComputeBudget instruction ${ix.tag ?? "(empty)"} with ${ix.data.length} data bytes; only SetComputeUnitLimit and SetComputeUnitPrice are allowed`,
    );
  }
  if (ix.accounts.length > 0) {
    return refuse(FillRejectCode.INVALID_COMPUTE_BUDGET, `${where} (ComputeBudget) names accounts`);
  }
  if (ix.kind === "computeUnitLimit") {
    if (walk.limitSeen) {
      return refuse(
        FillRejectCode.INVALID_COMPUTE_BUDGET,
        `${where} sets the compute-unit limit a second time`,
      );
    }
    walk.limitSeen = true;
    return undefined;
  }
  if (walk.priceSeen) {
    return refuse(
      FillRejectCode.INVALID_COMPUTE_BUDGET,
      `${where} sets the compute-unit price a second time`,
    );
  }
  walk.priceSeen = true;
  return undefined;
}

export const computeUnitLimitSet: FillRule = ({ computeUnitLimit }) =>
  computeUnitLimit === undefined
    ? refuse(FillRejectCode.INVALID_COMPUTE_BUDGET, "the transaction does not set a compute-unit limit")
    : undefined;

export const computeUnitPriceSet: FillRule = ({ computeUnitPrice }) =>
  computeUnitPrice === undefined
    ? refuse(FillRejectCode.INVALID_COMPUTE_BUDGET, "the transaction does not set a compute-unit price")
    : undefined;

export const computeUnitLimitNotZero: FillRule = (c) =>
  c.computeUnitLimit === 0
    ? refuse(FillRejectCode.INVALID_COMPUTE_BUDGET, "the compute-unit limit is zero")
    : undefined;

export const makerFeeWithinCap: FillRule = (c) => {
  const { computeUnitLimit: limit, computeUnitPrice: price, makerPaysLamports: pays } = c;
  const signatures = c.d.header.numRequiredSignatures;
  return pays !== undefined && pays > c.maxFeeLamports
    ? refuse(
        FillRejectCode.FEE_CAP_EXCEEDED,
        `the maker would pay ${pays} lamports (limit ${limit} x price ${price} micro-lamports + ${signatures} signatures), more than the cap of ${c.maxFeeLamports}`,
      )
    : undefined;
};

/**
 * The most a fill with a raised compute-unit price may cost the maker: the configured lamports, and
 * the configured share of the quote's SOL leg (floored) when it has one.
 */
export function raisedFeeLimit(c: FillCheck, cap: RaisedFeeCap): bigint {
  const { request, response } = c.quote;
  const solLeg =
    request.tokenIn === NATIVE_MINT_BASE58
      ? response.amountIn
      : request.tokenOut === NATIVE_MINT_BASE58
        ? response.amountOut
        : undefined;
  if (solLeg === undefined) return cap.maxLamports;
  const share = (BigInt(solLeg) * cap.maxNotionalBps) / 10_000n;
  // Stryker disable next-line EqualityOperator: equal values give the same minimum either way.
  return share < cap.maxLamports ? share : cap.maxLamports;
}

/**
 * The quote told the operator the price the maker pays (prioritizationFeeToUse, already capped by
 * limits.maxComputeUnitPriceMicroLamports). Wallets raise it after the quote (docs/contract.md, "Since
 * the first release"): a raise is accepted while what the fill costs the maker stays within the raise
 * cap (limits.raisedFeeCap, or the pair's), refused RAISED_FEE_CAP_EXCEEDED above it, and refused
 * COMPUTE_UNIT_PRICE_EXCEEDED where no cap is given. Lower than quoted is always fine.
 */
export const raisedPriceWithinRaiseCap: FillRule = (c) => {
  if (!c.priceRaised) return undefined;
  const quoted = c.quote.response.prioritizationFeeToUse;
  const price = c.computeUnitPrice;
  const cap = c.raisedFeeCap;
  if (!cap) {
    return refuse(
      FillRejectCode.COMPUTE_UNIT_PRICE_EXCEEDED,
      `the compute-unit price is ${price} micro-lamports, above the ${quoted} the quote answered as prioritizationFeeToUse`,
    );
  }
  const limit = raisedFeeLimit(c, cap);
  const pays = c.makerPaysLamports;
  return pays !== undefined && pays > limit
    ? refuse(
        FillRejectCode.RAISED_FEE_CAP_EXCEEDED,
        `the compute-unit price is ${price} micro-lamports, raised from the ${quoted} quoted: the maker would pay ${pays} lamports, more than the ${limit} a raised fill may cost`,
      )
    : undefined;
};

export const COMPUTE_BUDGET_RULES: readonly FillRule[] = [
  computeUnitLimitSet,
  computeUnitPriceSet,
  computeUnitLimitNotZero,
  computeUnitLimitWithinCeiling,
  raisedPriceWithinRaiseCap,
  makerFeeWithinCap,
];

/**
 * The compute budget, which the maker pays for: exactly one SetComputeUnitLimit (not zero; its floor
 * and ceiling are compute-unit-limit.ts) and
 * one SetComputeUnitPrice, no other ComputeBudget instruction, none naming accounts; the total
 * ceil(limit x price / 1e6) + 5,000 per signature within limits.maxFeeLamports; the price no higher
 * than the prioritizationFeeToUse the quote answered (lower is fine).
 */
import { FillRejectCode } from "../codes.ts";
import type { ComputeBudgetOtherIx, ComputeUnitLimitIx, ComputeUnitPriceIx } from "../decode.ts";
import { LAMPORTS_PER_SIGNATURE } from "../layout.ts";
import { type FillCheck, type FillRule, type Refusal, refuse } from "./check.ts";
import { computeUnitLimitWithinCeiling } from "./compute-unit-limit.ts";

export { MAX_COMPUTE_UNIT_LIMIT } from "./compute-unit-limit.ts";

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
  c: FillCheck,
  ix: ComputeUnitLimitIx | ComputeUnitPriceIx | ComputeBudgetOtherIx,
  where: string,
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
    if (c.computeUnitLimit !== undefined) {
      return refuse(
        FillRejectCode.INVALID_COMPUTE_BUDGET,
        `${where} sets the compute-unit limit a second time`,
      );
    }
    c.computeUnitLimit = ix.units;
    return undefined;
  }
  if (c.computeUnitPrice !== undefined) {
    return refuse(
      FillRejectCode.INVALID_COMPUTE_BUDGET,
      `${where} sets the compute-unit price a second time`,
    );
  }
  c.computeUnitPrice = ix.microLamports;
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
  const limit = c.computeUnitLimit!;
  const price = c.computeUnitPrice!;
  const signatures = c.d.header.numRequiredSignatures;
  c.makerPaysLamports = makerFeeLamports(limit, price, signatures);
  return c.makerPaysLamports > c.maxFeeLamports
    ? refuse(
        FillRejectCode.FEE_CAP_EXCEEDED,
        `the maker would pay ${c.makerPaysLamports} lamports (limit ${limit} x price ${price} micro-lamports + ${signatures} signatures), more than the cap of ${c.maxFeeLamports}`,
      )
    : undefined;
};

/**
 * The quote told the operator the price the maker pays (prioritizationFeeToUse, already capped by
 * limits.maxComputeUnitPriceMicroLamports); a higher one spends the maker's SOL beyond its answer.
 */
export const priceWithinQuotedPriorityFee: FillRule = (c) => {
  const quoted = c.quote.response.prioritizationFeeToUse;
  const price = c.computeUnitPrice!;
  return quoted !== undefined && price > BigInt(quoted)
    ? refuse(
        FillRejectCode.COMPUTE_UNIT_PRICE_EXCEEDED,
        `the compute-unit price is ${price} micro-lamports, above the ${quoted} the quote answered as prioritizationFeeToUse`,
      )
    : undefined;
};

export const COMPUTE_BUDGET_RULES: readonly FillRule[] = [
  computeUnitLimitSet,
  computeUnitPriceSet,
  computeUnitLimitNotZero,
  computeUnitLimitWithinCeiling,
  makerFeeWithinCap,
  priceWithinQuotedPriorityFee,
];

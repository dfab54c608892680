/**
 * The operator's fee, both sides (docs/contract.md, "Fees"). The maker quotes without the fee and owes it
 * to the operator; the fill carries it on the side of the order's fee mint, in one of two shapes,
 * the only two the operator (and our simulator, sandbox/operator/) builds:
 *
 * - FEE_IN_OUTPUT: `input_amount` is the quoted amountIn and `output_amount` the quoted amountOut less
 *   the fee on it (floor, or one unit more if the operator rounded up). The maker keeps the fee part
 *   of its output. The acceptance fixture: 25,000,000 at 10 bps -> 24,975,000.
 * - FEE_IN_INPUT: `output_amount` is the quoted amountOut and `input_amount` a gross G whose fee
 *   (floor or ceil of G x bps) less leaves exactly the quoted amountIn. The maker receives the fee on
 *   top of its price. The operator asks the maker for the net amount (exactIn) or charges the gross
 *   to the taker (exactOut), so that the taker pays or receives exactly what the order shows.
 *
 * Either way the maker's invariant holds: it never sends more than the quoted amountOut and never
 * receives less than the quoted amountIn. Which shape a fill uses is read from the fill itself: its
 * input equal to the quoted amountIn is the first, above it the second, below it is refused. (The
 * operator's fee-mint priority is not published in full, so the maker does not second-guess the side
 * it chose; the invariant protects the maker on either side.)
 */
import { FillRejectCode } from "../refusal/codes.ts";

const BPS = 10_000n;

const feeFloor = (amount: bigint, feeBps: number) => (amount * BigInt(feeBps)) / BPS;
const feeCeil = (amount: bigint, feeBps: number) => (amount * BigInt(feeBps) + BPS - 1n) / BPS;

/**
 * The smallest gross amount G with G - floor(G x bps / 10,000) = net: what a taker pays (or is owed)
 * so that `net` remains after the fee. Exists for every net when bps < 10,000 (G - fee(G) steps by 0
 * or 1). undefined for bps >= 10,000.
 *
 * Exact, no search: G - floor(G x b / B) = ceil(G x (B - b) / B) (B = 10,000), and for a whole n,
 * ceil(x) >= n exactly when x > n - 1; so G x (B - b) > (net - 1) x B, whose smallest G is
 * floor((net - 1) x B / (B - b)) + 1 (and 0 for a net of 0).
 */
export function grossForNet(net: bigint, feeBps: number): bigint | undefined {
  if (feeBps >= 10_000) return net === 0n ? 0n : undefined;
  if (net === 0n) return 0n;
  return ((net - 1n) * BPS) / (BPS - BigInt(feeBps)) + 1n;
}

export type FeeSide = "input" | "output";

export type FeeShapeCheck =
  | { ok: true; feeSide: FeeSide; feeOwed: bigint }
  | { ok: false; code: FillRejectCode; context: string };

export interface FillAmountsToCheck {
  quotedIn: bigint;
  quotedOut: bigint;
  feeBps: number;
  inputAmount: bigint;
  outputAmount: bigint;
}

/** Checks a fill's two amounts against the quote: one of the two fee shapes, or the refusal's code. */
export function checkFeeShape(a: FillAmountsToCheck): FeeShapeCheck {
  const { quotedIn, quotedOut, feeBps, inputAmount, outputAmount } = a;
  if (inputAmount < quotedIn) {
    return {
      ok: false,
      code: FillRejectCode.INVALID_INPUT_AMOUNT,
      context: `the fill takes ${inputAmount} from the taker, less than the quote's amountIn ${quotedIn}`,
    };
  }
  if (inputAmount === quotedIn) {
    // FEE_IN_OUTPUT (with feeBps 0 both shapes are this one: the quoted amounts exactly).
    const maxOut = quotedOut - feeFloor(quotedOut, feeBps);
    const minOut = quotedOut - feeCeil(quotedOut, feeBps);
    if (outputAmount > maxOut || outputAmount < minOut) {
      return {
        ok: false,
        code: FillRejectCode.INVALID_OUTPUT_AMOUNT,
        context: `the fill gives the taker ${outputAmount}, but the quote's amountOut ${quotedOut} less the ${feeBps} bps fee is ${minOut === maxOut ? maxOut : `${minOut}..${maxOut}`}`,
      };
    }
    return { ok: true, feeSide: "output", feeOwed: quotedOut - outputAmount };
  }
  // FEE_IN_INPUT: the taker pays the fee on top of the quoted amountIn, and receives amountOut whole.
  if (outputAmount !== quotedOut) {
    return {
      ok: false,
      code: FillRejectCode.INVALID_OUTPUT_AMOUNT,
      context: `the fill takes ${inputAmount} (the fee on the input side) but gives the taker ${outputAmount}; with the fee on the input the output must be the quote's amountOut ${quotedOut}`,
    };
  }
  const fee = inputAmount - quotedIn;
  if (fee < feeFloor(inputAmount, feeBps) || fee > feeCeil(inputAmount, feeBps)) {
    return {
      ok: false,
      code: FillRejectCode.INVALID_INPUT_AMOUNT,
      context: `the fill takes ${inputAmount} from the taker: ${fee} above the quote's amountIn ${quotedIn}, which is not the ${feeBps} bps fee on ${inputAmount}`,
    };
  }
  return { ok: true, feeSide: "input", feeOwed: fee };
}

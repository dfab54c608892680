/**
 * The fill's terms against the quote: the quoted amountIn, the request's fee bps, the quoted
 * amountOut less that fee (the operator rounds the fee down; one unit more kept back is accepted,
 * never less), the exact-out flag (bit 0 of the flags byte; the other bits, like the trailing bytes
 * generally, are ignored by the program and so here), and an expire_at no later than the quote's
 * expiry rounded up to the second plus the configured grace for the operator's clock. Whether the
 * fill or the quote has expired is judged once, after the claim, against chain time (src/swap).
 */
import { FillRejectCode } from "../codes.ts";
import { type FillRule, refuse } from "./check.ts";

export const inputAmountIsQuoted: FillRule = ({ args, quote }) => {
  const quotedIn = BigInt(quote.response.amountIn);
  return args!.inputAmount !== quotedIn
    ? refuse(
        FillRejectCode.INVALID_INPUT_AMOUNT,
        `the fill takes ${args!.inputAmount} from the taker, but the quote's amountIn is ${quotedIn}`,
      )
    : undefined;
};

export const feeBpsIsRequested: FillRule = ({ args, quote }) =>
  args!.feeBps !== quote.request.feeBps
    ? refuse(
        FillRejectCode.INVALID_FEE_BPS,
        `the fill's fee is ${args!.feeBps} bps, but the quote request's feeBps is ${quote.request.feeBps}`,
      )
    : undefined;

/** The bounds of output_amount: amountOut less the fee rounded up (min) or down (max). */
export function outputAmountRange(quotedOut: bigint, feeBps: number): { min: bigint; max: bigint } {
  const feeFloor = (quotedOut * BigInt(feeBps)) / 10_000n;
  const feeCeil = (quotedOut * BigInt(feeBps) + 9_999n) / 10_000n;
  return { min: quotedOut - feeCeil, max: quotedOut - feeFloor };
}

export const outputAmountIsQuotedLessFee: FillRule = ({ args, quote }) => {
  const quotedOut = BigInt(quote.response.amountOut);
  const feeBps = quote.request.feeBps;
  const { min, max } = outputAmountRange(quotedOut, feeBps);
  const out = args!.outputAmount;
  return out > max || out < min
    ? refuse(
        FillRejectCode.INVALID_OUTPUT_AMOUNT,
        `the fill gives the taker ${out}, but the quote's amountOut ${quotedOut} less the ${feeBps} bps fee is ${min === max ? max : `${min}..${max}`}`,
      )
    : undefined;
};

export const exactOutFlagMatchesQuoteType: FillRule = ({ args, quote }) =>
  args!.exactOut !== (quote.request.quoteType === "exactOut")
    ? refuse(
        FillRejectCode.INVALID_QUOTE_TYPE_FLAG,
        `the fill's exact-out flag is ${args!.exactOut ? "set" : "clear"}, but the quote is ${quote.request.quoteType}`,
      )
    : undefined;

/** The quote's expiry in whole seconds, rounded up. */
export const quoteExpiryUnix = (expiresAtMs: number): bigint => (BigInt(expiresAtMs) + 999n) / 1000n;

export const expireAtWithinQuoteExpiry: FillRule = ({ args, quote, expiryGraceSeconds: grace }) => {
  const quoteExpiry = quoteExpiryUnix(quote.expiresAtMs);
  return args!.expireAt > quoteExpiry + grace
    ? refuse(
        FillRejectCode.INVALID_EXPIRY,
        `the fill expires at ${args!.expireAt}, after the quote's expiry ${quoteExpiry}${grace > 0n ? ` (+${grace} s grace)` : ""}`,
      )
    : undefined;
};

export const AMOUNT_RULES: readonly FillRule[] = [
  inputAmountIsQuoted,
  feeBpsIsRequested,
  outputAmountIsQuotedLessFee,
  exactOutFlagMatchesQuoteType,
  expireAtWithinQuoteExpiry,
];

/**
 * The fill's terms against the quote: the request's fee bps, the two amounts in one of the
 * operator's two fee shapes (../fee-shape.ts: FEE_IN_OUTPUT, the quoted amountIn and the quoted
 * amountOut less the fee; FEE_IN_INPUT, the quoted amountOut and the quoted amountIn plus the fee; the
 * fee rounded down, or one unit up, never less: the maker never sends more than its quoted amountOut
 * nor receives less than its quoted amountIn), the exact-out flag (bit 0 of the flags byte; the other bits, like the trailing bytes
 * generally, are ignored by the program and so here), and an expire_at no later than the quote's
 * expiry rounded up to the second plus the configured grace for the operator's clock. Whether the
 * fill or the quote has expired is judged once, after the claim, against chain time (src/swap).
 */
import { FillRejectCode } from "../../refusal/codes.ts";
import { type FillRule, refuse } from "./check.ts";

export const feeBpsIsRequested: FillRule = ({ args, quote }) =>
  args && args.feeBps !== quote.request.feeBps
    ? refuse(
        FillRejectCode.INVALID_FEE_BPS,
        `the fill's fee is ${args.feeBps} bps, but the quote request's feeBps is ${quote.request.feeBps}`,
      )
    : undefined;

/** The amounts in one of the two fee shapes (resolved once, with the fee owed and its side). */
export const amountsFollowAFeeShape: FillRule = ({ feeShape }) =>
  feeShape && !feeShape.ok ? refuse(feeShape.code, feeShape.context) : undefined;

export const exactOutFlagMatchesQuoteType: FillRule = ({ args, quote }) =>
  args && args.exactOut !== (quote.request.quoteType === "exactOut")
    ? refuse(
        FillRejectCode.INVALID_QUOTE_TYPE_FLAG,
        `the fill's exact-out flag is ${args.exactOut ? "set" : "clear"}, but the quote is ${quote.request.quoteType}`,
      )
    : undefined;

/** The quote's expiry in whole seconds, rounded up. */
export const quoteExpiryUnix = (expiresAtMs: number): bigint => (BigInt(expiresAtMs) + 999n) / 1000n;

export const expireAtWithinQuoteExpiry: FillRule = ({ args, quote, expiryGraceSeconds: grace }) => {
  const quoteExpiry = quoteExpiryUnix(quote.expiresAtMs);
  return args && args.expireAt > quoteExpiry + grace
    ? refuse(
        FillRejectCode.INVALID_EXPIRY,
        `the fill expires at ${args.expireAt}, after the quote's expiry ${quoteExpiry}${grace > 0n ? ` (+${grace} s grace)` : ""}`,
      )
    : undefined;
};

export const AMOUNT_RULES: readonly FillRule[] = [
  feeBpsIsRequested,
  amountsFollowAFeeShape,
  exactOutFlagMatchesQuoteType,
  expireAtWithinQuoteExpiry,
];

/**
 * Expiry, judged once, after the claim, against chain time (the clock the order-engine program
 * checks expire_at against): the quote must not have expired (its expiry rounded up to the second),
 * and the fill's expire_at must leave `safetySeconds` for landing. validateFill only checks that
 * expire_at does not outlive the quote (INVALID_EXPIRY), which no clock can change.
 */
import { quoteExpiryUnix } from "../fill/rules/amounts.ts";

export interface ExpiryInput {
  quoteExpiresAtMs: number;
  /** The fill's expire_at, unix seconds. */
  expireAt: bigint;
  /** The chain's clock, unix seconds. */
  chainTime: bigint;
  safetySeconds: bigint;
}

/** Why the fill may not be signed at `chainTime` (the detail of a QUOTE_EXPIRED), or undefined. */
export function expiryRefusal({ quoteExpiresAtMs, expireAt, chainTime, safetySeconds }: ExpiryInput) {
  const quoteExpiry = quoteExpiryUnix(quoteExpiresAtMs);
  if (chainTime > quoteExpiry) return `the quote expired at ${quoteExpiry}; chain time is ${chainTime}`;
  if (expireAt < chainTime + safetySeconds) {
    return `the fill expires at ${expireAt}, chain time is ${chainTime} (${safetySeconds} s are kept for landing)`;
  }
  return undefined;
}

/**
 * The first moment (unix ms on the chain's clock) at which expiryRefusal refuses the fill: how long
 * the swap may keep asking the chain before signing it is pointless.
 */
export function unsignableFromMs({
  quoteExpiresAtMs,
  expireAt,
  safetySeconds,
}: Omit<ExpiryInput, "chainTime">): number {
  const quoteLast = quoteExpiryUnix(quoteExpiresAtMs);
  const fillLast = expireAt - safetySeconds;
  // Stryker disable next-line EqualityOperator: at equal bounds either one is the answer
  return Number((quoteLast < fillLast ? quoteLast : fillLast) + 1n) * 1000;
}

/**
 * Expiry judged after the claim against chain time (src/swap/expiry.ts), at its boundaries: the
 * quote's last second (its expiry rounded up) is still signable, the next is not; expire_at must be
 * at least the safety margin ahead of chain time. The end-to-end refusal through POST /swap is in
 * rejections.error.test.ts.
 */
import { describe, expect, it } from "vitest";
import { expiryRefusal, unsignableFromMs } from "../../src/swap/expiry.ts";

const EXPIRES_AT_MS = 1_800_000_000_500; // rounds up to 1,800,000,001 s
const LAST_SECOND = 1_800_000_001n;

describe("expiry against chain time", () => {
  it("signs at the quote's expiry second itself and refuses one second after it", () => {
    const at = (chainTime: bigint) =>
      expiryRefusal({
        quoteExpiresAtMs: EXPIRES_AT_MS,
        expireAt: LAST_SECOND + 10n,
        chainTime,
        safetySeconds: 1n,
      });
    expect(at(LAST_SECOND)).toBeUndefined();
    expect(at(LAST_SECOND + 1n)).toBe(
      `the quote expired at ${LAST_SECOND}; chain time is ${LAST_SECOND + 1n}`,
    );
  });

  it("signs a fill whose expire_at is exactly the safety margin ahead, and refuses one a second short", () => {
    const chainTime = LAST_SECOND - 5n;
    const at = (expireAt: bigint) =>
      expiryRefusal({ quoteExpiresAtMs: EXPIRES_AT_MS, expireAt, chainTime, safetySeconds: 2n });
    expect(at(chainTime + 2n)).toBeUndefined();
    expect(at(chainTime + 1n)).toBe(
      `the fill expires at ${chainTime + 1n}, chain time is ${chainTime} (2 s are kept for landing)`,
    );
  });

  it("says when the fill stops being signable: the second after the earlier of the quote's last second and expire_at less the margin", () => {
    const input = (expireAt: bigint) => ({ quoteExpiresAtMs: EXPIRES_AT_MS, expireAt, safetySeconds: 2n });
    const signableAt = (expireAt: bigint, ms: number) =>
      expiryRefusal({ ...input(expireAt), chainTime: BigInt(Math.floor(ms / 1000)) }) === undefined;
    // The quote's last second decides: expire_at leaves more.
    const quoteBound = unsignableFromMs(input(LAST_SECOND + 10n));
    expect(quoteBound).toBe(Number(LAST_SECOND + 1n) * 1000);
    // expire_at less the margin decides: earlier than the quote's last second.
    const fillBound = unsignableFromMs(input(LAST_SECOND - 3n));
    expect(fillBound).toBe(Number(LAST_SECOND - 4n) * 1000);
    for (const [expireAt, bound] of [
      [LAST_SECOND + 10n, quoteBound],
      [LAST_SECOND - 3n, fillBound],
    ] as const) {
      expect(signableAt(expireAt, bound - 1)).toBe(true);
      expect(signableAt(expireAt, bound)).toBe(false);
    }
  });
});

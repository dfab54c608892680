/**
 * The maker's signature on a swap the checks passed: through the Signer port, with the swap id and the
 * level set it was matched to, so a remote signer (SIGNER_URL, src/signer/) judges the swap itself
 * and may refuse. A refusal comes back as its code (the signer's, when this webhook knows it), so the
 * channel counts and logs it like its own.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import { isRefusalCode, type RefusalCode, SwapRefusalCode } from "../refusal/codes.ts";
import { type Signer, SignerRefusal } from "../signing/port.ts";
import { V2RejectCode } from "./codes.ts";
import type { StreamedSet } from "./streamed.ts";
import type { V2Leg } from "./swap-checks.ts";

const V2_CODES: ReadonlySet<string> = new Set(Object.values(V2RejectCode));

export async function signV2Swap(
  signer: Signer,
  tx: VersionedTransaction,
  swapUuid: string,
  matched: { leg: Pick<V2Leg, "takerSide" | "levels">; set: StreamedSet },
): Promise<{ ok: true } | { ok: false; code: V2RejectCode | RefusalCode; detail: string }> {
  const { set, leg } = matched;
  try {
    await signer.sign(tx, {
      swapUuid,
      claimed: {
        pair: set.pairKey,
        sequence: set.sequence,
        lotSizeBase: set.lotSizeBase,
        // The side the swap consumes (a Bid taker takes the maker's asks), as deep as the swap goes:
        // the signer compares level by level, and a transaction holds far fewer than the wire's limit.
        levels: (leg.takerSide === "bid" ? set.asks : set.bids).slice(0, leg.levels.length),
        validUntilMs: set.validUntilMs,
      },
    });
    return { ok: true };
  } catch (err) {
    if (err instanceof SignerRefusal) {
      // A code this webhook does not list (a newer signer) is counted under one label, never a new one.
      const known = isRefusalCode(err.code) || V2_CODES.has(err.code);
      return {
        ok: false,
        code: known ? (err.code as V2RejectCode | RefusalCode) : SwapRefusalCode.SIGNER_REFUSED,
        detail: known ? err.detail : `${err.code}: ${err.detail}`,
      };
    }
    return { ok: false, code: SwapRefusalCode.SIGNATURE_UNAVAILABLE, detail: (err as Error).message };
  }
}

/**
 * The maker's signature on a swap the checks passed: through the Signer port, with the swap id and the
 * level set it was matched to, so a remote signer (SIGNER_URL, src/signer/) judges the swap itself
 * and may refuse. A refusal comes back as its code (the signer's, when this webhook knows it), so the
 * channel counts and logs it like its own.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import { isRefusalCode, type Refused, SwapRefusalCode } from "../refusal/codes.ts";
import { type Signer, SignerRefusal } from "../signing/port.ts";
import type { StreamedSet } from "./streamed.ts";
import type { V2Leg } from "./swap-checks.ts";

export async function signV2Swap(
  signer: Signer,
  tx: VersionedTransaction,
  swapUuid: string,
  matched: { leg: Pick<V2Leg, "takerSide" | "levels">; set: StreamedSet },
): Promise<{ ok: true } | Refused> {
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
      return isRefusalCode(err.code)
        ? { ok: false, code: err.code, context: err.context }
        : { ok: false, code: SwapRefusalCode.SIGNER_REFUSED, context: `${err.code}: ${err.context}` };
    }
    return { ok: false, code: SwapRefusalCode.SIGNATURE_UNAVAILABLE, context: (err as Error).message };
  }
}

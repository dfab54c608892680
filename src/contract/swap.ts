/** POST /swap: the operator's request and our answer (docs/contract.md, "POST /swap"). */
import { z } from "zod";
import { type Refusal, type RefusalCode, SwapRefusalCode as S } from "../refusal/codes.ts";
import { wireId } from "./common.ts";

/** A v0 transaction is at most 1232 bytes; base64 of that is 1644 characters. Leave headroom. */
const MAX_TRANSACTION_BASE64 = 4096;

export const swapRequestSchema = z.object({
  requestId: wireId,
  quoteId: wireId,
  transaction: z
    .string({ error: "must be a base64 string" })
    .min(1, "must not be empty")
    .max(MAX_TRANSACTION_BASE64, `must be at most ${MAX_TRANSACTION_BASE64} characters`)
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be base64"),
});
export type SwapRequest = z.output<typeof swapRequestSchema>;

/** Reasons the operator understands as honest rejections (externally tagged on the wire). */
export const REJECTION_REASONS = [
  "insufficientBalance",
  "insufficientBalanceForAtaCreation",
  "signatureVerificationFailed",
  "botActivityDetected",
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

const swapStateSchema = z.union([
  z.literal("accepted"),
  z.literal("rejected"),
  z.object({ rejectedWithReason: z.enum(REJECTION_REASONS) }),
]);
export type SwapState = z.output<typeof swapStateSchema>;

/** Our answer to every well-formed /swap (always 200): accepted with the signature, or why not. */
export const swapResponseSchema = z.object({
  quoteId: z.string(),
  state: swapStateSchema,
  rejectionReason: z.string().optional().describe("why a rejected fill was refused, e.g. a fill rule's code"),
  /** Deprecated by the operator but still sent on acceptance. */
  txSignature: z.string().optional().describe("base58 signature of the sent fill (on acceptance)"),
});
export type SwapResponse = z.output<typeof swapResponseSchema>;

export const accepted = (quoteId: string, txSignature: string): SwapResponse => ({
  quoteId,
  state: "accepted",
  txSignature,
});

export const rejected = (quoteId: string, rejectionReason: string): SwapResponse => ({
  quoteId,
  state: "rejected",
  rejectionReason,
});

export const rejectedWithReason = (
  quoteId: string,
  reason: RejectionReason,
  detail?: string,
): SwapResponse => ({
  quoteId,
  state: { rejectedWithReason: reason },
  ...(detail ? { rejectionReason: detail } : {}),
});

/** The refusals the operator reads as honest, and the contract's tag for each. */
const HONEST_TAGS: Partial<Record<RefusalCode, RejectionReason>> = {
  [S.INSUFFICIENT_BALANCE]: "insufficientBalance",
  [S.INSUFFICIENT_BALANCE_FOR_ATA_CREATION]: "insufficientBalanceForAtaCreation",
  [S.SIGNATURE_VERIFICATION_FAILED]: "signatureVerificationFailed",
  [S.BOT_ACTIVITY_DETECTED]: "botActivityDetected",
};

/** The contract's honest-rejection tag of a refusal code; undefined for a plain rejection. */
export const honestTag = (code: RefusalCode): RejectionReason | undefined => HONEST_TAGS[code];

/** Codes answered with their context alone: the wording operators have always read for them. */
const CONTEXT_ONLY: ReadonlySet<RefusalCode> = new Set<RefusalCode>([
  S.QUOTE_STORE_UNAVAILABLE,
  S.QUOTE_NOT_FOUND,
  S.INVALID_REQUEST_ID,
  S.INVALID_MAKER_SIGNATURE_SLOT,
  S.ISSUANCE_STORE_UNAVAILABLE,
  S.MESSAGE_BOUND_TO_OTHER_QUOTE,
  S.QUOTE_ALREADY_CLAIMED,
  S.DUPLICATE_IN_FLIGHT,
  S.DUPLICATE_NOT_LANDED,
  S.CHAIN_CLOCK_UNAVAILABLE,
  S.BLOCKHASH_CHECK_UNAVAILABLE,
  S.TAKER_FUNDS_UNVERIFIABLE,
  S.INVENTORY_UNAVAILABLE,
  S.BUDGET_EXCEEDED,
  S.SIGNATURE_UNAVAILABLE,
  S.SIGNER_REFUSED,
  S.SEND_FAILED,
  S.COMPANION_UNAVAILABLE,
  S.BUNDLE_FAILED,
  S.INTERNAL_ERROR,
]);

/** A refusal as the operator reads it in `rejectionReason` (and as logs may quote it). */
export const refusalText = (r: Refusal): string =>
  CONTEXT_ONLY.has(r.code) ? r.context : `${r.code}: ${r.context}`;

/** The answer to a refused swap: the contract's honest tag when the code has one, else `rejected`. */
export function refusedAnswer(quoteId: string, r: Refusal): SwapResponse {
  const tag = honestTag(r.code);
  return tag ? rejectedWithReason(quoteId, tag, r.context) : rejected(quoteId, refusalText(r));
}

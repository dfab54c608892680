/** POST /swap: the operator's request and our answer (docs/contract.md, "POST /swap"). */
import { z } from "zod";
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

export const swapStateSchema = z.union([
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

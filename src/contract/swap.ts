/** POST /swap: the operator's request and our answer (CONTRACT.md, "POST /swap"). */
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

export type SwapState = "accepted" | "rejected" | { rejectedWithReason: RejectionReason };

export interface SwapResponse {
  quoteId: string;
  state: SwapState;
  rejectionReason?: string;
  /** Deprecated by the operator but still sent on acceptance. */
  txSignature?: string;
}

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

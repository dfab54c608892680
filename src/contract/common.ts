/** Wire-level building blocks shared by every V1 body. */
import { z } from "zod";
import { base58Pubkey, u64Digits } from "../../config/schema.ts";

export { base58Pubkey };

/** A u64 amount in smallest units, strictly positive, carried as a decimal string on the wire. */
export const positiveU64 = u64Digits({
  positive: true,
  digitsMessage: "must be a positive integer in smallest units, as a string of digits",
}).meta({
  pattern: "^[0-9]{1,20}$",
  description: "a positive u64 in the token's smallest units, as a string",
});

/**
 * Identifiers the operator generates (UUIDs today); bounded so a log line stays a log line, and kept to
 * a plain alphabet: they become Redis keys (where "{" and "}" would move the cluster hash tag) and
 * internal ids use characters outside it ("#").
 */
const WIRE_ID = /^[A-Za-z0-9._:-]+$/;
export const WIRE_ID_MAX = 128;
export const wireId = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(WIRE_ID_MAX)
  .regex(WIRE_ID, "must contain only letters, digits and . _ : -");

/** The contract's error body, used for every non-200 answer. */
export const errorBodySchema = z.object({
  message: z.string().describe("what was wrong, e.g. `amount: must fit in u64`"),
});
export type ErrorBody = z.output<typeof errorBodySchema>;

/** GET /tokens and GET /permissioned-tokens: mint addresses (base58). */
export const tokenListSchema = z.array(z.string());

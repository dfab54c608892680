/** Wire-level building blocks shared by every V1 body. */
import { z } from "zod";
import { base58Pubkey } from "../../config/schema.ts";

export { base58Pubkey };

export const U64_MAX = (1n << 64n) - 1n;

/** A u64 amount in smallest units, strictly positive, carried as a decimal string on the wire. */
export const positiveU64 = z.string({ error: "must be a string of digits" }).check((ctx) => {
  // One check, in order: BigInt() must only ever see digits (a refine after a failed regex still runs).
  const s = ctx.value;
  if (!/^\d+$/.test(s)) {
    ctx.issues.push({
      code: "custom",
      input: s,
      message: "must be a positive integer in smallest units, as a string of digits",
    });
  } else if (s.length > 20 || BigInt(s) > U64_MAX) {
    ctx.issues.push({ code: "custom", input: s, message: "must fit in u64" });
  } else if (BigInt(s) === 0n) {
    ctx.issues.push({ code: "custom", input: s, message: "must be greater than zero" });
  }
});

/**
 * Identifiers the operator generates (UUIDs today); bounded so a log line stays a log line, and kept to
 * a plain alphabet: they become Redis keys (where "{" and "}" would move the cluster hash tag) and
 * internal ids use characters outside it ("#").
 */
export const wireId = z
  .string({ error: "must be a string" })
  .min(1, "must not be empty")
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/, "must contain only letters, digits and . _ : -");

/** The contract's error body, used for every non-200 answer. */
export interface ErrorBody {
  message: string;
}

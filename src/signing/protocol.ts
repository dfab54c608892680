/**
 * The wire between the webhook's RemoteSigner (remote.ts) and the signer service
 * (src/signer/service/): newline-delimited JSON over one long-lived connection (a Unix socket, or TCP
 * with mutual TLS). Each request carries an `id` that its response repeats, so requests may be in
 * flight together and answered out of order.
 *
 *   {"id":1,"op":"keys"}
 *     -> {"id":1,"ok":true,"active":"<base58>","keys":["<base58>", ...],"issuer":"<base58>","v2ExpirySeconds":15}
 *        (`issuer`: only when the signer holds the issuer key, SIGNER_ISSUER_KEYPAIR; `v2ExpirySeconds`:
 *        how far ahead an RFQ v2 swap's expire_at may be for it to sign, its level validity and grace)
 *   {"id":2,"op":"sign","quoteId":"...","transaction":"<base64 of the whole fill transaction>"}
 *     -> {"id":2,"ok":true,"signature":"<base58>","messageHash":"<sha256 hex>","maker":"<base58>"}
 *     -> {"id":2,"ok":false,"code":"<refusal code>","detail":"..."}
 *   {"id":4,"op":"signV2","swapUuid":"...","transaction":"<base64 of the offered RFQ v2 swap>",
 *    "claimed":{"pair":"SOL/USDC","sequence":"17","lotSizeBase":"1000000","validUntilMs":1790000000000,
 *               "levels":[{"lots":"5","perLot":"150000"}, ...]}}
 *     -> as "sign". `claimed` is the level set the webhook matched the swap to (the consuming side's
 *        levels, as deep as the swap goes): the signer checks the swap lies within it, but prices the
 *        swap against its own mid.
 *   {"id":3,"op":"companion","quoteId":"...","transaction":"<base64 of the co-signed fill>","tipAccount":"<base58>"}
 *     -> {"id":3,"ok":true,"companion":"<base64 of the issuer's signed mint transaction>"}
 *     -> {"id":3,"ok":false,"code":"<refusal code>","detail":"..."}
 *
 * Lines longer than MAX_LINE_BYTES end the connection (a fill transaction is at most 1,232 bytes).
 */
import { z } from "zod";

const MAX_LINE_BYTES = 64 * 1024;

/** An unsigned integer as decimal text (bigints travel as strings). */
const digits = z.string().regex(/^\d{1,20}$/, "an unsigned integer as decimal text");

export const signerRequestSchema = z.discriminatedUnion("op", [
  z.object({ id: z.number().int(), op: z.literal("keys") }),
  z.object({
    id: z.number().int(),
    op: z.literal("sign"),
    quoteId: z.string().min(1).max(200),
    transaction: z.string().min(1).max(4096),
  }),
  z.object({
    id: z.number().int(),
    op: z.literal("signV2"),
    swapUuid: z.string().min(1).max(200),
    transaction: z.string().min(1).max(4096),
    claimed: z.strictObject({
      pair: z.string().min(1).max(100),
      sequence: digits,
      lotSizeBase: digits,
      validUntilMs: z.number().int().nonnegative(),
      // A 1,232-byte transaction holds under 80 levels of 16 bytes.
      levels: z.array(z.strictObject({ lots: digits, perLot: digits })).max(128),
    }),
  }),
  z.object({
    id: z.number().int(),
    op: z.literal("companion"),
    quoteId: z.string().min(1).max(200),
    transaction: z.string().min(1).max(4096),
    tipAccount: z.string().min(32).max(44),
  }),
]);
export type SignerRequest = z.infer<typeof signerRequestSchema>;
export type ClaimedLevelsWire = Extract<SignerRequest, { op: "signV2" }>["claimed"];

export type SignerResponse =
  | { id: number; ok: true; active: string; keys: string[]; issuer?: string; v2ExpirySeconds?: number }
  | { id: number; ok: true; companion: string }
  | { id: number; ok: true; signature: string; messageHash: string; maker: string }
  | { id: number; ok: false; code: string; context: string };

/**
 * Splits a byte stream into lines; calls `onLine` for each complete one. Returns a feed function that
 * returns false once a line exceeded `maxBytes` (the caller then drops the connection).
 */
export function lineReader(onLine: (line: string) => void, maxBytes = MAX_LINE_BYTES) {
  let buffered = "";
  return (chunk: Buffer | string): boolean => {
    buffered += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    let at = buffered.indexOf("\n");
    while (at >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (line.length) onLine(line);
      at = buffered.indexOf("\n");
    }
    return buffered.length <= maxBytes;
  };
}

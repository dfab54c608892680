/**
 * How a StoredQuote is written to Redis, and read back.
 *
 * Two formats, and the reader takes both:
 *
 * - **full** (every version): the StoredQuote as JSON. The request, the answer and the top level repeat
 *   the same ids, mints and taker: about 1,050 bytes for a quote with a taker.
 * - **compact** (`"v":2`): the request once, and of the answer only what the request does not already
 *   say (both amounts, the maker, the compute-unit price), plus the quote's own fields: about 570
 *   bytes. Reading it rebuilds the answer and the quote from the request with the functions the
 *   quote path builds them with (`quoteAnswer`, `storedQuoteOf`).
 *
 * The compact form is written only for a quote it gives back exactly: the answer echoes the request's
 * ids, mints, quote type, taker and receiver, says protocol "v1", and neither the answer nor the
 * quote carries a field this file does not know, and every field reading copies is present. Anything
 * else (a future field, an answer that differs from its request) is written in full, so no field a fill is checked against can be lost
 * by the encoding. test/quote-store/codec.test.ts holds it to that.
 *
 * Rolling out: a version before this one reads only the full form (it would find no answer in a
 * compact record, and refuse or fail the swap). While such an instance, or a signer service, still
 * shares the Redis, run the new ones with `limits.quoteStoreFormat: "full"`; once none is left,
 * "compact" (the default). Going back to an older version: an unclaimed quote lives `quoteTtlMs` +
 * `quoteRetainAfterExpiryMs` (85 s by default) after its last write, a claimed one CLAIM_RETAIN_MS
 * (a retried /swap reads it), so switch to "full" that long before.
 */
import { type QuoteRequest, quoteAnswer } from "../contract/quote.ts";
import { type StoredQuote, storedQuoteOf } from "./interface.ts";

export type QuoteStoreFormat = "compact" | "full";

/** The compact record: `v` tells it from the full one, which has no `v`. */
interface CompactQuote {
  v: 2;
  request: QuoteRequest;
  amountIn: string;
  amountOut: string;
  maker: string;
  prioritizationFeeToUse?: number | undefined;
  permissioned: boolean;
  createdAtMs: number;
  expiresAtMs: number;
}

/** Every field a StoredQuote and its answer may carry for the compact form to rebuild it. */
const QUOTE_FIELDS = new Set([
  "quoteId",
  "requestId",
  "request",
  "response",
  "feeBps",
  "taker",
  "permissioned",
  "createdAtMs",
  "expiresAtMs",
]);
const RESPONSE_FIELDS = new Set([
  "requestId",
  "quoteId",
  "tokenIn",
  "tokenOut",
  "quoteType",
  "protocol",
  "amountIn",
  "amountOut",
  "maker",
  "prioritizationFeeToUse",
  "taker",
  "receiver",
]);

function onlyFields(o: object, known: Set<string>): boolean {
  for (const k in o) if (!known.has(k)) return false;
  return true;
}

/** The request's fields the answer echoes: each a string, copied back into the answer on reading. */
const ECHOED = ["requestId", "quoteId", "tokenIn", "tokenOut", "quoteType"] as const;

/** True when the compact form gives `q` back exactly: everything it leaves out, the request says. */
export function compactable(q: StoredQuote): boolean {
  const { request: req, response: res } = q;
  for (const k of ECHOED) if (typeof req[k] !== "string" || res[k] !== req[k]) return false;
  return (
    res.protocol === "v1" &&
    res.taker === (req.taker || undefined) &&
    res.receiver === (req.receiver || undefined) &&
    q.quoteId === req.quoteId &&
    q.requestId === req.requestId &&
    typeof req.feeBps === "number" &&
    q.feeBps === req.feeBps &&
    q.taker === (req.taker || undefined) &&
    // What the compact record keeps as it is: present, so that reading gives no key back empty.
    typeof res.amountIn === "string" &&
    typeof res.amountOut === "string" &&
    typeof res.maker === "string" &&
    typeof q.permissioned === "boolean" &&
    typeof q.createdAtMs === "number" &&
    typeof q.expiresAtMs === "number" &&
    onlyFields(q, QUOTE_FIELDS) &&
    onlyFields(res, RESPONSE_FIELDS)
  );
}

/** The JSON the store writes for `q`: compact when asked for and exact, else full. */
export function encodeStoredQuote(q: StoredQuote, format: QuoteStoreFormat): string {
  if (format === "full" || !compactable(q)) return JSON.stringify(q);
  const res = q.response;
  const c: CompactQuote = {
    v: 2,
    request: q.request,
    amountIn: res.amountIn,
    amountOut: res.amountOut,
    maker: res.maker,
    // Absent when undefined: JSON leaves the key out.
    prioritizationFeeToUse: res.prioritizationFeeToUse,
    permissioned: q.permissioned,
    createdAtMs: q.createdAtMs,
    expiresAtMs: q.expiresAtMs,
  };
  return JSON.stringify(c);
}

/**
 * A stored record back as the StoredQuote it was written from, in either format. A format this
 * version does not know (written by a later one) throws, naming it: it is never read as something else.
 */
export function decodeStoredQuote(raw: string): StoredQuote {
  const o = JSON.parse(raw) as StoredQuote | CompactQuote | { v: unknown };
  if (!("v" in o)) return o;
  if (o.v !== 2) {
    throw new Error(`stored quote in format v${String(o.v)}, which this version cannot read`);
  }
  const c = o as CompactQuote;
  const req = c.request;
  // Rebuilt by the very functions the quote path built it with.
  const response = quoteAnswer(req, c.amountIn, c.amountOut, c.maker, c.prioritizationFeeToUse);
  return storedQuoteOf(req, response, c.permissioned, c.createdAtMs, c.expiresAtMs);
}

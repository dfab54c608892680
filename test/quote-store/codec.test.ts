/**
 * The quote store's record format (src/quote-store/codec.ts): the compact form gives back exactly the
 * quote it was written from, is written only when it can, and the reader takes the full form every
 * earlier version wrote.
 */
import { PublicKey } from "@solana/web3.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactable, decodeStoredQuote, encodeStoredQuote } from "../../src/quote-store/codec.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";

const MAKER = new PublicKey("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM");
const TAKER = new PublicKey("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU");
const RECEIVER = new PublicKey("4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T");

/** Removes `keys` from each of `objects` (a test's incomplete quote). */
function drop(keys: string[], ...objects: object[]): void {
  for (const o of objects) for (const k of keys) delete (o as Record<string, unknown>)[k];
}

/** What JSON gives back of a quote (absent and undefined fields alike): the full form's own round trip. */
const viaJson = (q: StoredQuote): StoredQuote => JSON.parse(JSON.stringify(q));

function quote(o: { taker?: boolean; receiver?: boolean; fee?: number; exactOut?: boolean } = {}) {
  return storedQuote({
    quoteId: "0f8c6a9e-1b2c-4d5e-8f90-123456789abc",
    requestId: "5a1b2c3d-4e5f-6789-abcd-ef0123456789",
    maker: MAKER,
    ...(o.taker ? { taker: TAKER } : {}),
    ...(o.receiver ? { receiver: RECEIVER } : {}),
    ...(o.fee !== undefined ? { prioritizationFee: o.fee } : {}),
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amountIn: 1_000_000n,
    amountOut: 5_544_794n,
    quoteType: o.exactOut ? "exactOut" : "exactIn",
    feeBps: 10,
    createdAtMs: 1_790_000_000_000,
  });
}

describe("stored quote format", () => {
  it("writes the compact form for the quotes the quote path makes, and reads each back equal to what was written", () => {
    for (const o of [
      {},
      { taker: true },
      { taker: true, receiver: true, fee: 53_770 },
      { exactOut: true, fee: 0 },
    ]) {
      const q = quote(o);
      const raw = encodeStoredQuote(q, "compact");
      expect(JSON.parse(raw)).toMatchObject({ v: 2 });
      expect(JSON.parse(raw)).not.toHaveProperty("response");
      expect(decodeStoredQuote(raw)).toStrictEqual(viaJson(q));
    }
  });

  it("is less than 60% of the full form's bytes for a quote with a taker", () => {
    const q = quote({ taker: true, fee: 10_000 });
    expect(encodeStoredQuote(q, "compact").length).toBeLessThan(0.6 * encodeStoredQuote(q, "full").length);
  });

  it("writes the full form when asked, which every version reads", () => {
    const q = quote({ taker: true });
    const raw = encodeStoredQuote(q, "full");
    expect(raw).toBe(JSON.stringify(q));
    expect(decodeStoredQuote(raw)).toStrictEqual(viaJson(q));
  });

  it("reads a record as the version before the compact form wrote it", () => {
    // Written by RedisQuoteStore.put at 9cd3f5d (JSON.stringify of the StoredQuote), quote with a taker.
    const legacy =
      '{"quoteId":"q-1","requestId":"r-1","request":{"requestId":"r-1","quoteId":"q-1","tokenIn":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","tokenOut":"So11111111111111111111111111111111111111112","amount":"1000000","quoteType":"exactIn","protocol":"v1","feeBps":2,"taker":"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"},"response":{"requestId":"r-1","quoteId":"q-1","tokenIn":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","tokenOut":"So11111111111111111111111111111111111111112","quoteType":"exactIn","protocol":"v1","amountIn":"1000000","amountOut":"5544794","maker":"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM","prioritizationFeeToUse":10000,"taker":"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"},"feeBps":2,"taker":"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU","permissioned":false,"createdAtMs":1790000000000,"expiresAtMs":1790000055000}';
    const q = decodeStoredQuote(legacy);
    expect(q.response).toMatchObject({
      amountIn: "1000000",
      amountOut: "5544794",
      prioritizationFeeToUse: 10_000,
    });
    expect(decodeStoredQuote(encodeStoredQuote(q, "compact"))).toStrictEqual(q);
  });

  it("refuses a record in a format it does not know, naming the format, rather than reading it as a quote", () => {
    expect(() => decodeStoredQuote('{"v":3,"request":{}}')).toThrow(
      /format v3, which this version cannot read/,
    );
  });

  const attacks: Array<[string, (q: StoredQuote) => void]> = [
    ["an answer for another output mint", (q) => (q.response.tokenOut = MINT.USDT)],
    ["an answer for another input mint", (q) => (q.response.tokenIn = MINT.JUP)],
    ["an answer of the other quote type", (q) => (q.response.quoteType = "exactOut")],
    ["an answer naming another taker", (q) => (q.response.taker = RECEIVER.toBase58())],
    ["an answer without the request's taker", (q) => delete q.response.taker],
    ["an answer naming a receiver the request did not", (q) => (q.response.receiver = RECEIVER.toBase58())],
    ["an answer under another quoteId", (q) => (q.response.quoteId = "other")],
    ["an answer under another requestId", (q) => (q.response.requestId = "other")],
    ["a quote whose fee differs from its request's", (q) => (q.feeBps = 3)],
    ["a quote whose taker differs from its request's", (q) => (q.taker = RECEIVER.toBase58())],
    ["a quote under another quoteId than its request", (q) => (q.quoteId = "other")],
    [
      "an answer with a field this version does not know",
      (q) => Object.assign(q.response, { expiresAt: 1_790_000_055 }),
    ],
    ["a quote with a field this version does not know", (q) => Object.assign(q, { swapMode: "ExactIn" })],
    // Incomplete quotes (none the quote path makes): compact, each would come back with the key present
    // and empty, so the full form keeps them as they are.
    ["a quote without a requestId anywhere", (q) => drop(["requestId"], q, q.request, q.response)],
    ["a quote without a quoteId anywhere", (q) => drop(["quoteId"], q, q.request, q.response)],
    ["a quote without its input mint", (q) => drop(["tokenIn"], q.request, q.response)],
    ["a quote without its output mint", (q) => drop(["tokenOut"], q.request, q.response)],
    ["a quote without its quote type", (q) => drop(["quoteType"], q.request, q.response)],
    ["a quote without its fee", (q) => drop(["feeBps"], q, q.request)],
    ["a quote without an input amount", (q) => drop(["amountIn"], q.response)],
    ["a quote without an output amount", (q) => drop(["amountOut"], q.response)],
    ["a quote without a maker", (q) => drop(["maker"], q.response)],
    ["a quote without its permissioned flag", (q) => drop(["permissioned"], q)],
    ["a quote without its creation time", (q) => drop(["createdAtMs"], q)],
    ["a quote without its expiry", (q) => drop(["expiresAtMs"], q)],
  ];
  for (const [name, change] of attacks) {
    it(`writes the full form, never a lossy compact one, for ${name}`, () => {
      const q = quote({ taker: true, fee: 10_000 });
      change(q);
      expect(compactable(q)).toBe(false);
      const raw = encodeStoredQuote(q, "compact");
      expect(JSON.parse(raw)).not.toHaveProperty("v");
      expect(decodeStoredQuote(raw)).toStrictEqual(viaJson(q));
    });
  }

  it("gives back every quote exactly, whatever is changed, added or removed in it (property)", () => {
    const text = fc.string({ minLength: 0, maxLength: 12 });
    const value = fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(undefined));
    const edit = fc.record({
      where: fc.constantFrom("top", "response", "request"),
      key: fc.constantFrom(
        "quoteId",
        "requestId",
        "tokenIn",
        "tokenOut",
        "quoteType",
        "protocol",
        "taker",
        "receiver",
        "feeBps",
        "amountIn",
        "amountOut",
        "maker",
        "prioritizationFeeToUse",
        "permissioned",
        "createdAtMs",
        "expiresAtMs",
        "extra",
      ),
      value,
    });
    fc.assert(
      fc.property(
        fc.record({ taker: fc.boolean(), receiver: fc.boolean(), exactOut: fc.boolean() }),
        fc.array(edit, { maxLength: 4 }),
        (shape, edits) => {
          const q = quote({ ...shape, fee: 7 });
          for (const e of edits) {
            const target = (
              e.where === "top" ? q : e.where === "response" ? q.response : q.request
            ) as Record<string, unknown>;
            if (e.value === undefined) delete target[e.key];
            else target[e.key] = e.value;
          }
          expect(decodeStoredQuote(encodeStoredQuote(q, "compact"))).toStrictEqual(viaJson(q));
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
    );
  });
});

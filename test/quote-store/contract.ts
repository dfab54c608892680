/**
 * One behaviour suite for every QuoteStore adapter: the memory store and the Redis store must be
 * interchangeable, so each runs exactly these tests.
 */
import { PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { QuoteStore, StoredQuote } from "../../src/quote-store/interface.ts";
import { MINT } from "../support/config.ts";
import { storedQuote } from "../support/quotes.ts";

/** The maker of every sample quote (a fixed wallet, so stored records are comparable). */
const SAMPLE_MAKER = new PublicKey("9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM");

/** 1 USDC sold for SOL, exactIn, 10 bps, under the given ids. */
export function sampleQuote(
  quoteId: string,
  requestId: string,
  createdAtMs: number,
  ttlMs = 55_000,
): StoredQuote {
  return storedQuote({
    quoteId,
    requestId,
    maker: SAMPLE_MAKER,
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amountIn: 1_000_000n,
    amountOut: 5_544_794n,
    quoteType: "exactIn",
    feeBps: 10,
    createdAtMs,
    ttlMs,
  });
}

export interface StoreFixture {
  store: QuoteStore;
  /** Moves the store's clock (memory) or waits for real expiry (Redis uses short TTLs instead). */
  unique: (name: string) => string;
}

export function quoteStoreContract(name: string, make: () => Promise<StoreFixture>): void {
  describe(`QuoteStore contract: ${name}`, () => {
    it("returns a stored quote by quoteId, byte for byte", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      expect(await store.get(q.quoteId)).toEqual(q);
    });

    it("replaces a stored quote answered again under the same quoteId, until a swap claims it", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      expect(await store.put(q)).toBe(true);
      const again = { ...q, requestId: unique("r2"), response: { ...q.response, amountOut: "1" } };
      expect(await store.put(again)).toBe(true);
      expect(await store.get(q.quoteId)).toEqual(again);
    });

    it("never re-opens a claimed quoteId: a put after the claim stores nothing", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      await store.claim(q.quoteId, "hash-1", 1);
      const later = { ...q, response: { ...q.response, amountOut: "1" } };
      expect(await store.put(later)).toBe(false);
      expect((await store.get(q.quoteId))?.response.amountOut).toBe(q.response.amountOut);
    });

    it("refuses a put for a quoteId claimed before it was ever stored", async () => {
      const { store, unique } = await make();
      const id = unique("q");
      await store.claim(id, "hash-1", 1);
      expect(await store.put(sampleQuote(id, unique("r"), Date.now()))).toBe(false);
      expect(await store.get(id)).toBeUndefined();
    });

    it("lets exactly the puts that come before a claim land, when puts and the claim race", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      const racing = await Promise.all([
        ...Array.from({ length: 20 }, (_, i) =>
          store.put({ ...q, response: { ...q.response, amountOut: String(100 + i) } }),
        ),
        store.claim(q.quoteId, "hash-1", 1),
      ]);
      const stored = await store.get(q.quoteId);
      // After the claim nothing changes any more.
      expect(await store.put({ ...q, response: { ...q.response, amountOut: "7" } })).toBe(false);
      expect(await store.get(q.quoteId)).toEqual(stored);
      expect(racing.at(-1)).toEqual({ kind: "claimed" });
    });

    it("answers undefined for an unknown quoteId", async () => {
      const { store, unique } = await make();
      expect(await store.get(unique("missing"))).toBeUndefined();
    });

    it("keeps every quoteId answered for one requestId apart", async () => {
      const { store, unique } = await make();
      const requestId = unique("r");
      const a = sampleQuote(unique("a"), requestId, Date.now());
      const b = { ...sampleQuote(unique("b"), requestId, Date.now()), feeBps: 20 };
      await store.put(a);
      await store.put(b);
      expect(await store.get(a.quoteId)).toEqual(a);
      expect(await store.get(b.quoteId)).toEqual(b);
    });

    it("grants the claim to the first caller only, and shows later callers the first message hash", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      expect(await store.claim(q.quoteId, "hash-1", 1)).toEqual({ kind: "claimed" });
      const second = await store.claim(q.quoteId, "hash-2", 2);
      expect(second.kind).toBe("taken");
      if (second.kind === "taken") {
        expect(second.existing.messageHash).toBe("hash-1");
        expect(second.existing.outcome).toBeUndefined();
      }
    });

    it("releases a claim only for the message that holds it, with its answer, so the quote can be claimed again", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      await store.claim(q.quoteId, "hash-1", 1);
      await store.recordOutcome(q.quoteId, { quoteId: q.quoteId, state: "rejected", rejectionReason: "x" });
      expect(await store.releaseClaim(q.quoteId, "hash-2")).toBe(false);
      expect((await store.claim(q.quoteId, "hash-2", 2)).kind).toBe("taken");
      expect(await store.releaseClaim(q.quoteId, "hash-1")).toBe(true);
      expect(await store.releaseClaim(q.quoteId, "hash-1")).toBe(false);
      expect(await store.claim(q.quoteId, "hash-2", 3)).toEqual({ kind: "claimed" });
      const again = await store.claim(q.quoteId, "hash-3", 4);
      expect(again.kind === "taken" && again.existing).toEqual({ messageHash: "hash-2", claimedAtMs: 3 });
    });

    it("grants exactly one of many concurrent claims", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.claim(q.quoteId, `h${i}`, i)),
      );
      expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
    });

    it("returns the recorded outcome to a later claimer", async () => {
      const { store, unique } = await make();
      const q = sampleQuote(unique("q"), unique("r"), Date.now());
      await store.put(q);
      await store.claim(q.quoteId, "hash-1", 1);
      const outcome = { quoteId: q.quoteId, state: "accepted" as const, txSignature: "sig" };
      await store.recordOutcome(q.quoteId, outcome);
      const again = await store.claim(q.quoteId, "hash-1", 2);
      expect(again).toEqual({ kind: "taken", existing: { messageHash: "hash-1", claimedAtMs: 1, outcome } });
    });

    it("binds a message to the first quoteId it is presented with and keeps answering that quoteId", async () => {
      const { store, unique } = await make();
      const hash = unique("msg");
      const first = unique("q1");
      expect(await store.bindMessage(hash, first)).toBe(first);
      expect(await store.bindMessage(hash, unique("q2"))).toBe(first);
      expect(await store.bindMessage(hash, first)).toBe(first);
      const other = unique("msg-other");
      expect(await store.bindMessage(other, unique("q3"))).not.toBe(first);
    });

    it("binds one message to exactly one of many concurrent quoteIds", async () => {
      const { store, unique } = await make();
      const hash = unique("msg");
      const ids = Array.from({ length: 20 }, (_, i) => unique(`q${i}`));
      const answers = await Promise.all(ids.map((id) => store.bindMessage(hash, id)));
      expect(new Set(answers).size).toBe(1);
      expect(ids).toContain(answers[0]);
    });

    it("keeps message bindings apart from claims: a quoteId equal to a message hash claims freely", async () => {
      const { store, unique } = await make();
      const id = unique("same");
      expect(await store.bindMessage(id, unique("q"))).not.toBe(id);
      expect(await store.claim(id, "hash-1", 1)).toEqual({ kind: "claimed" });
    });

    it("answers ping", async () => {
      const { store } = await make();
      expect(await store.ping()).toBe(true);
    });
  });
}

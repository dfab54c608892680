import { describe, expect, it } from "vitest";
import { QUOTE_RETAIN_AFTER_EXPIRY_MS } from "../../src/quote-store/interface.ts";
import { MemoryQuoteStore } from "../../src/quote-store/memory.ts";
import { quoteStoreContract, sampleQuote } from "./contract.ts";

let n = 0;
quoteStoreContract("memory", async () => ({ store: new MemoryQuoteStore(), unique: (s) => `${s}-${n++}` }));

describe("MemoryQuoteStore", () => {
  it("forgets a quote once its retention after expiry has passed", async () => {
    let now = 1_000_000;
    const store = new MemoryQuoteStore(100, () => now);
    const q = sampleQuote("q1", "r1", now);
    await store.put(q);
    now = q.expiresAtMs + QUOTE_RETAIN_AFTER_EXPIRY_MS - 1;
    expect(await store.get("q1")).toBeDefined();
    now += 1;
    expect(await store.get("q1")).toBeUndefined();
    expect(await store.quoteIdsForRequest("r1")).toEqual([]);
  });

  it("evicts the oldest quote when full, keeping its bound", async () => {
    const store = new MemoryQuoteStore(100);
    for (let i = 0; i < 150; i++) await store.put(sampleQuote(`q${i}`, `r${i}`, Date.now()));
    expect(store.size).toBe(100);
    expect(await store.get("q0")).toBeUndefined();
    expect(await store.get("q149")).toBeDefined();
  });
});

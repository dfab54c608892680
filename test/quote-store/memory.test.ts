import { describe, expect, it } from "vitest";
import { CLAIM_RETAIN_MS } from "../../src/quote-store/interface.ts";
import { MemoryQuoteStore } from "../../src/quote-store/memory.ts";
import { quoteStoreContract, sampleQuote } from "./contract.ts";

let n = 0;
quoteStoreContract("memory", async () => ({ store: new MemoryQuoteStore(), unique: (s) => `${s}-${n++}` }));

describe("MemoryQuoteStore", () => {
  it("forgets an unclaimed quote once the configured retention after its expiry has passed", async () => {
    let now = 1_000_000;
    const store = new MemoryQuoteStore(100, () => now, 5_000);
    const q = sampleQuote("q1", "r1", now);
    await store.put(q);
    now = q.expiresAtMs + 5_000 - 1;
    expect(await store.get("q1")).toBeDefined();
    now += 1;
    expect(await store.get("q1")).toBeUndefined();
  });

  it("keeps a claimed quote as long as its claim, so a retried /swap still reads it", async () => {
    let now = 1_000_000;
    const store = new MemoryQuoteStore(100, () => now, 0);
    const q = sampleQuote("q2", "r2", now);
    await store.put(q);
    expect((await store.claim("q2", "h", now)).kind).toBe("claimed");
    now = q.expiresAtMs + 60_000;
    expect(await store.get("q2")).toEqual(q);
    now = 1_000_000 + CLAIM_RETAIN_MS;
    expect(await store.get("q2")).toBeUndefined();
  });

  it("evicts the oldest quote when full, keeping its bound", async () => {
    const store = new MemoryQuoteStore(100);
    for (let i = 0; i < 150; i++) await store.put(sampleQuote(`q${i}`, `r${i}`, Date.now()));
    expect(store.size).toBe(100);
    expect(await store.get("q0")).toBeUndefined();
    expect(await store.get("q149")).toBeDefined();
  });
});

/**
 * temporaryWsolAccount remembers the maker's PDA (a PDA search per swap is ~0.25 ms) in a cache that
 * starts over after 1,000 makers, so a stream of makers cannot grow it without end. The bound is found
 * by filling the cache, whatever other tests left in it.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it, vi } from "vitest";
import { ORDER_ENGINE_PROGRAM_ID, temporaryWsolAccount } from "../../src/program/layout.ts";

describe("temporaryWsolAccount", () => {
  it("is the order engine's PDA of the maker, searched once per maker", () => {
    const search = vi.spyOn(PublicKey, "findProgramAddressSync");
    try {
      const a = Keypair.generate().publicKey;
      const b = Keypair.generate().publicKey;
      const pda = PublicKey.findProgramAddressSync(
        [Buffer.from("temporary-wsol-token-account"), a.toBuffer()],
        ORDER_ENGINE_PROGRAM_ID,
      )[0];
      search.mockClear();
      expect(temporaryWsolAccount(a).equals(pda)).toBe(true);
      expect(temporaryWsolAccount(a).equals(pda)).toBe(true);
      temporaryWsolAccount(b);
      expect(temporaryWsolAccount(a).equals(pda)).toBe(true);
      expect(search).toHaveBeenCalledTimes(2);
    } finally {
      search.mockRestore();
    }
  });

  it("forgets every maker when a maker arrives at 1,000 cached (the cache holds 1,000)", () => {
    const search = vi.spyOn(PublicKey, "findProgramAddressSync");
    const fresh = () => temporaryWsolAccount(Keypair.generate().publicKey);
    /** Whether `first` is still cached (asking re-caches it when it was not). */
    const cached = (first: PublicKey): boolean => {
      search.mockClear();
      temporaryWsolAccount(first);
      return search.mock.calls.length === 0;
    };
    try {
      // Whatever other tests cached: add makers until the cache starts over; it then holds exactly
      // the maker that made it start over and `first`, asked again.
      const first = Keypair.generate().publicKey;
      temporaryWsolAccount(first);
      let added = 0;
      do {
        fresh();
        added++;
      } while (cached(first) && added <= 1_001);
      expect(added).toBeLessThanOrEqual(1_000);
      for (let i = 0; i < 998; i++) fresh();
      expect(cached(first)).toBe(true);
      fresh(); // the 1,001st
      expect(cached(first)).toBe(false);
    } finally {
      search.mockRestore();
    }
  });
});

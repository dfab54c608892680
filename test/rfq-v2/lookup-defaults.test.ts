/**
 * The lookup-table resolver's defaults (src/rfq-v2/lookup.ts), against a chain port that serves tables
 * encoded here: a table is used from memory for 10 s, at most 256 are kept, and a resolution waits at
 * most 2 s for the chain. test/rfq-v2/lookup.test.ts shows each behaviour against the local chain with
 * the settings given.
 */
import { AddressLookupTableProgram, Keypair, MessageV0, type PublicKey } from "@solana/web3.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AccountSnapshot, Chain } from "../../src/chain/interface.ts";
import { V2RejectCode } from "../../src/refusal/codes.ts";
import { LookupTableResolver } from "../../src/rfq-v2/lookup.ts";

const payer = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();

/** A lookup table's account data: the 56-byte header (active, an authority) and its addresses. */
function tableAccount(addresses: PublicKey[]): AccountSnapshot {
  const data = Buffer.alloc(56 + 32 * addresses.length);
  data.writeUInt32LE(1, 0);
  data.writeBigUInt64LE(0xffff_ffff_ffff_ffffn, 4);
  data[21] = 1;
  payer.toBuffer().copy(data, 22);
  for (const [i, a] of addresses.entries()) a.toBuffer().copy(data, 56 + 32 * i);
  return {
    owner: AddressLookupTableProgram.programId,
    lamports: 1n,
    data,
    executable: false,
  } as unknown as AccountSnapshot;
}

/** A message loading `index` of each table read-only. */
const loading = (tables: PublicKey[], index = 0) =>
  new MessageV0({
    header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 0 },
    staticAccountKeys: [payer],
    recentBlockhash: blockhash,
    compiledInstructions: [],
    addressTableLookups: tables.map((accountKey) => ({
      accountKey,
      writableIndexes: [],
      readonlyIndexes: [index],
    })),
  });

function world() {
  const tables = new Map<string, AccountSnapshot>();
  const reads: string[] = [];
  const chain: Pick<Chain, "getAccounts"> = {
    getAccounts: async (keys) => {
      reads.push(...keys.map((k) => k.toBase58()));
      return keys.map((k) => tables.get(k.toBase58()) ?? null);
    },
  };
  const table = () => {
    const key = Keypair.generate().publicKey;
    tables.set(key.toBase58(), tableAccount([Keypair.generate().publicKey]));
    return key;
  };
  const clock = { t: 1_000_000 };
  return { chain, reads, table, clock };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the lookup-table resolver's defaults", () => {
  it("uses a table read from the chain for 10 s, reads it again at 10 s", async () => {
    const w = world();
    const resolver = new LookupTableResolver({ chain: w.chain, now: () => w.clock.t });
    const t = w.table();
    expect((await resolver.resolve(loading([t]))).ok).toBe(true);
    w.clock.t += 9_999;
    expect((await resolver.resolve(loading([t]))).ok).toBe(true);
    expect(w.reads).toHaveLength(1);
    w.clock.t += 1;
    expect((await resolver.resolve(loading([t]))).ok).toBe(true);
    expect(w.reads).toHaveLength(2);
  });

  it("keeps 256 tables, forgetting the oldest read for the 257th", async () => {
    const w = world();
    const resolver = new LookupTableResolver({ chain: w.chain, now: () => w.clock.t });
    const keys = Array.from({ length: 257 }, () => w.table());
    for (const k of keys.slice(0, 256)) expect((await resolver.resolve(loading([k]))).ok).toBe(true);
    expect(resolver.cachedTables()).toBe(256);
    expect((await resolver.resolve(loading([keys[256] as PublicKey]))).ok).toBe(true);
    expect(resolver.cachedTables()).toBe(256);
    const read = w.reads.length;
    await resolver.resolve(loading([keys[1] as PublicKey]));
    expect(w.reads).toHaveLength(read);
    await resolver.resolve(loading([keys[0] as PublicKey]));
    expect(w.reads).toHaveLength(read + 1);
  });

  it("waits 2 s for the chain, then refuses (V2_LOOKUP_TABLES_UNRESOLVED)", async () => {
    vi.useFakeTimers();
    const resolver = new LookupTableResolver({ chain: { getAccounts: () => new Promise(() => {}) } });
    let settled: unknown;
    void resolver.resolve(loading([Keypair.generate().publicKey, Keypair.generate().publicKey])).then((r) => {
      settled = r;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_TABLES_UNRESOLVED,
      context: "reading 2 lookup table(s): no answer from the chain within 2000 ms",
    });
  });
});

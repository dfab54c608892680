/**
 * The lookup-table resolution of RFQ v2 swaps (src/rfq-v2/lookup.ts) against tables made on a local
 * chain by the lookup table program itself: the keys in the runtime's order, the cache and when it is
 * read again, each refusal with its code, the deadline, and what is counted.
 */
import {
  type AddressLookupTableAccount,
  Keypair,
  type PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  type VersionedMessage,
} from "@solana/web3.js";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createLookupTable, deactivateLookupTable, extendLookupTable } from "../../sandbox/rfq-v2/tables.ts";
import type { Chain } from "../../src/chain/interface.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { creditSol } from "../../src/chain/local/seed.ts";
import { V2RejectCode } from "../../src/refusal/codes.ts";
import { type LookupResolverOptions, LookupTableResolver } from "../../src/rfq-v2/lookup.ts";
import { rfqV2Metrics } from "../../src/rfq-v2/metrics.ts";

const keys = (n: number) => Array.from({ length: n }, () => Keypair.generate().publicKey);

async function world() {
  const chain = LocalChain.create();
  const payer = Keypair.generate();
  creditSol(chain, payer.publicKey, 10_000_000_000n);
  const reads: PublicKey[][] = [];
  // The chain port as the service sees it, each read recorded.
  const port: Pick<Chain, "getAccounts"> = {
    getAccounts: (k) => {
      reads.push(k);
      return chain.getAccounts(k);
    },
  };
  const registry = new Registry();
  const metrics = rfqV2Metrics(registry);
  const clock = { t: Date.now() };
  const resolver = (o: Partial<LookupResolverOptions> = {}) =>
    new LookupTableResolver({ chain: port, metrics, now: () => clock.t, ...o });
  const { blockhash } = await chain.getLatestBlockhash();
  /** A message whose one instruction names `writable` and `readonly`, compiled against `tables`. */
  const message = (
    writable: PublicKey[],
    readonly: PublicKey[],
    tables: AddressLookupTableAccount[],
  ): { message: VersionedMessage; ix: TransactionInstruction } => {
    const ix = new TransactionInstruction({
      programId: SystemProgram.programId,
      keys: [
        ...writable.map((pubkey) => ({ pubkey, isSigner: false, isWritable: true })),
        ...readonly.map((pubkey) => ({ pubkey, isSigner: false, isWritable: false })),
      ],
      data: Buffer.alloc(0),
    });
    const m = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [ix],
    }).compileToV0Message(tables);
    return { message: m, ix };
  };
  const count = async (name: string, label: string, value: string) =>
    (await registry.getSingleMetric(name)!.get()).values.find((v) => v.labels[label] === value)?.value ?? 0;
  return { chain, payer, reads, resolver, message, clock, count };
}

describe("resolving the accounts a v0 swap loads from lookup tables", () => {
  it("gives static keys, then every table's writable keys, then every table's read-only keys: each instruction index names the key it was compiled from", async () => {
    const w = await world();
    const [a, b] = [keys(4), keys(3)];
    const ta = await createLookupTable(w.chain, w.payer, a);
    const tb = await createLookupTable(w.chain, w.payer, b);
    const writable = [a[2]!, b[0]!];
    const readonly = [a[0]!, b[2]!, a[3]!];
    const { message, ix } = w.message(writable, readonly, [ta, tb]);
    expect(message.addressTableLookups).toHaveLength(2);
    const r = await w.resolver().resolve(message);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.accountKeys.slice(0, message.staticAccountKeys.length)).toEqual(message.staticAccountKeys);
    const named = message.compiledInstructions[0]!.accountKeyIndexes.map((i) => r.accountKeys[i]!.toBase58());
    expect(named).toEqual(ix.keys.map((k) => k.pubkey.toBase58()));
    // writable lookups (both tables) before any read-only one
    const loaded = r.accountKeys.slice(message.staticAccountKeys.length).map((k) => k.toBase58());
    expect(new Set(loaded.slice(0, 2))).toEqual(new Set(writable.map((k) => k.toBase58())));
    expect(new Set(loaded.slice(2))).toEqual(new Set(readonly.map((k) => k.toBase58())));
  });

  it("makes no read for a message without lookups", async () => {
    const w = await world();
    const { message } = w.message(keys(1), keys(1), []);
    expect(await w.resolver().resolve(message)).toEqual({ ok: true, accountKeys: message.staticAccountKeys });
    expect(w.reads).toEqual([]);
  });

  it("reads a table once within its TTL, again after it; the reads are counted by source", async () => {
    const w = await world();
    const a = keys(3);
    const t = await createLookupTable(w.chain, w.payer, a);
    const { message } = w.message([], [a[1]!], [t]);
    const resolver = w.resolver({ ttlMs: 10_000 });
    expect((await resolver.resolve(message)).ok).toBe(true);
    expect((await resolver.resolve(message)).ok).toBe(true);
    expect(w.reads).toHaveLength(1);
    w.clock.t += 10_000;
    expect((await resolver.resolve(message)).ok).toBe(true);
    expect(w.reads).toHaveLength(2);
    expect(await w.count("rfq_v2_lookup_tables_total", "source", "cache")).toBe(1);
    expect(await w.count("rfq_v2_lookup_tables_total", "source", "chain")).toBe(2);
    expect(await w.count("rfq_v2_lookup_resolutions_total", "outcome", "resolved")).toBe(3);
  });

  it("reads a cached table again for an index past its cached length: an extended table resolves at once", async () => {
    const w = await world();
    const a = keys(2);
    const t = await createLookupTable(w.chain, w.payer, a);
    const resolver = w.resolver({ ttlMs: 60_000 });
    expect((await resolver.resolve(w.message([], [a[0]!], [t]).message)).ok).toBe(true);
    const added = keys(1);
    await extendLookupTable(w.chain, w.payer, { key: t.key, authority: t.authority }, added);
    const grown = {
      key: t.key,
      state: { ...t.state, addresses: [...a, ...added] },
    } as AddressLookupTableAccount;
    const { message, ix } = w.message([], [added[0]!], [grown]);
    expect(message.addressTableLookups[0]!.readonlyIndexes).toEqual([2]);
    const r = await resolver.resolve(message);
    expect(w.reads).toHaveLength(2);
    expect(r.ok && r.accountKeys[message.compiledInstructions[0]!.accountKeyIndexes[0]!]).toEqual(
      ix.keys[0]!.pubkey,
    );
  });

  it("refuses an index beyond the table as the chain holds it now: V2_LOOKUP_INDEX_OUT_OF_RANGE, naming table and index", async () => {
    const w = await world();
    const a = keys(2);
    const t = await createLookupTable(w.chain, w.payer, a);
    const { message } = w.message([], [a[1]!], [t]);
    message.addressTableLookups[0]!.readonlyIndexes[0] = 2;
    const r = await w.resolver().resolve(message);
    expect(r).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_INDEX_OUT_OF_RANGE,
      context: `lookup table ${t.key.toBase58()} holds 2 addresses: read-only index 2 is beyond them`,
    });
    expect(await w.count("rfq_v2_lookup_resolutions_total", "outcome", "V2_LOOKUP_INDEX_OUT_OF_RANGE")).toBe(
      1,
    );
  });

  it("refuses a table that does not exist, and an account that is not a lookup table: V2_LOOKUP_TABLE_NOT_FOUND", async () => {
    const w = await world();
    const a = keys(2);
    const t = await createLookupTable(w.chain, w.payer, a);
    const missing = w.message([], [a[0]!], [t]).message;
    missing.addressTableLookups[0]!.accountKey = Keypair.generate().publicKey;
    const r1 = await w.resolver().resolve(missing);
    expect(r1.ok || r1.code).toBe(V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND);
    expect(r1.ok || r1.context).toContain("does not exist");
    // The payer's system account: it exists, but the lookup table program does not own it.
    const other = w.message([], [a[0]!], [t]).message;
    other.addressTableLookups[0]!.accountKey = w.payer.publicKey;
    const r2 = await w.resolver().resolve(other);
    expect(r2.ok || r2.code).toBe(V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND);
    expect(r2.ok || r2.context).toContain("not the lookup table program");
  });

  it("refuses a deactivated table, also one that was deactivated after it was cached once the TTL passes: V2_LOOKUP_TABLE_DEACTIVATED", async () => {
    const w = await world();
    const a = keys(2);
    const t = await createLookupTable(w.chain, w.payer, a);
    const { message } = w.message([], [a[0]!], [t]);
    const resolver = w.resolver({ ttlMs: 5_000 });
    expect((await resolver.resolve(message)).ok).toBe(true);
    await deactivateLookupTable(w.chain, w.payer, { key: t.key, authority: t.authority });
    w.clock.t += 5_000;
    const r = await resolver.resolve(message);
    expect(r.ok || r.code).toBe(V2RejectCode.V2_LOOKUP_TABLE_DEACTIVATED);
    expect(resolver.cachedTables()).toBe(0);
    // A fresh resolver (nothing cached) refuses it as well.
    const fresh = await w.resolver().resolve(message);
    expect(fresh.ok || fresh.code).toBe(V2RejectCode.V2_LOOKUP_TABLE_DEACTIVATED);
  });

  it("gives up at the deadline when the chain does not answer, and on a failed read: V2_LOOKUP_TABLES_UNRESOLVED", async () => {
    const w = await world();
    const a = keys(1);
    const t = await createLookupTable(w.chain, w.payer, a);
    const { message } = w.message([], [a[0]!], [t]);
    const hung = new LookupTableResolver({
      chain: { getAccounts: () => new Promise(() => {}) },
      deadlineMs: 200,
    });
    const started = Date.now();
    const r = await hung.resolve(message);
    const took = Date.now() - started;
    expect(r).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_TABLES_UNRESOLVED,
      context: "reading 1 lookup table(s): no answer from the chain within 200 ms",
    });
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(1_000);
    const failing = new LookupTableResolver({
      chain: { getAccounts: () => Promise.reject(new Error("getMultipleAccounts: HTTP 503")) },
    });
    const f = await failing.resolve(message);
    expect(f.ok || f.context).toContain("HTTP 503");
  });

  it("keeps at most maxTables, forgetting the oldest read first", async () => {
    const w = await world();
    const tables = [];
    for (let i = 0; i < 3; i++) tables.push(await createLookupTable(w.chain, w.payer, keys(1)));
    const resolver = w.resolver({ maxTables: 2 });
    for (const t of tables)
      expect((await resolver.resolve(w.message([], [t.state.addresses[0]!], [t]).message)).ok).toBe(true);
    expect(resolver.cachedTables()).toBe(2);
    // The first one was forgotten: read again.
    const before = w.reads.length;
    await resolver.resolve(w.message([], [tables[0]!.state.addresses[0]!], [tables[0]!]).message);
    expect(w.reads.length).toBe(before + 1);
  });
});

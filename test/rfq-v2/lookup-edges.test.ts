/**
 * The lookup-table resolver (src/rfq-v2/lookup.ts) at its edges, against a chain port that serves
 * tables encoded here (no local chain): each refusal's exact detail (data that is no table, a
 * deactivated table, a writable index past the table), one table named by two lookups of a message,
 * the time a resolution is counted, and the deadline's timer cleared once the chain answers.
 */
import { AddressLookupTableProgram, Keypair, Message, MessageV0, type PublicKey } from "@solana/web3.js";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AccountSnapshot, Chain } from "../../src/chain/interface.ts";
import { V2RejectCode } from "../../src/refusal/codes.ts";
import { LookupTableResolver } from "../../src/rfq-v2/lookup.ts";
import { rfqV2Metrics } from "../../src/rfq-v2/metrics.ts";

const payer = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();
const ACTIVE = 0xffff_ffff_ffff_ffffn;

/** A lookup table's account data: the 56-byte header (deactivation slot, an authority), its addresses. */
function tableAccount(addresses: PublicKey[], deactivationSlot = ACTIVE): AccountSnapshot {
  const data = Buffer.alloc(56 + 32 * addresses.length);
  data.writeUInt32LE(1, 0);
  data.writeBigUInt64LE(deactivationSlot, 4);
  data[21] = 1;
  payer.toBuffer().copy(data, 22);
  for (const [i, a] of addresses.entries()) a.toBuffer().copy(data, 56 + 32 * i);
  return { owner: AddressLookupTableProgram.programId, lamports: 1n, data, executable: false };
}

type Lookup = { accountKey: PublicKey; writableIndexes: number[]; readonlyIndexes: number[] };
const messageOf = (lookups: Lookup[]) =>
  new MessageV0({
    header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 0 },
    staticAccountKeys: [payer],
    recentBlockhash: blockhash,
    compiledInstructions: [],
    addressTableLookups: lookups,
  });

function world(delayMs = 0) {
  const tables = new Map<string, AccountSnapshot>();
  const reads: string[][] = [];
  const chain: Pick<Chain, "getAccounts"> = {
    getAccounts: async (keys) => {
      reads.push(keys.map((k) => k.toBase58()));
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return keys.map((k) => tables.get(k.toBase58()) ?? null);
    },
  };
  const put = (acc: AccountSnapshot, key = Keypair.generate().publicKey) => {
    tables.set(key.toBase58(), acc);
    return key;
  };
  const clock = { t: 1_000_000 };
  return { chain, reads, tables, put, clock };
}

const addresses = (n: number) => Array.from({ length: n }, () => Keypair.generate().publicKey);

afterEach(() => {
  vi.useRealTimers();
});

describe("the lookup-table resolver's refusals, each with its detail", () => {
  it("refuses an account of the lookup table program whose data is no table: V2_LOOKUP_TABLE_NOT_FOUND, naming the table and the decoder's reason", async () => {
    const w = world();
    const good = tableAccount(addresses(2));
    // The same account with its type tag changed (a table's is 1), then cut inside its header.
    const retagged = Buffer.from(good.data);
    retagged.writeUInt32LE(2, 0);
    const t = w.put({ ...good, data: retagged });
    const r = await new LookupTableResolver({ chain: w.chain }).resolve(
      messageOf([{ accountKey: t, writableIndexes: [], readonlyIndexes: [0] }]),
    );
    expect(r).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
      context: `lookup table ${t.toBase58()}: cannot read its data: invalid account data; account type mismatch 2 != 1`,
    });
    const cut = w.put({ ...good, data: good.data.subarray(0, 10) });
    const c = await new LookupTableResolver({ chain: w.chain }).resolve(
      messageOf([{ accountKey: cut, writableIndexes: [], readonlyIndexes: [0] }]),
    );
    expect(c).toMatchObject({ ok: false, code: V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND });
    expect(c.ok || c.context).toMatch(
      new RegExp(`^lookup table ${cut.toBase58()}: cannot read its data: .+`),
    );
    // The intact table resolves.
    const ok = w.put(good);
    expect(
      (
        await new LookupTableResolver({ chain: w.chain }).resolve(
          messageOf([{ accountKey: ok, writableIndexes: [], readonlyIndexes: [0] }]),
        )
      ).ok,
    ).toBe(true);
  });

  it("refuses a table that does not exist, and an account another program owns, naming table and owner", async () => {
    const w = world();
    const absent = Keypair.generate().publicKey;
    const resolver = new LookupTableResolver({ chain: w.chain });
    expect(
      await resolver.resolve(messageOf([{ accountKey: absent, writableIndexes: [], readonlyIndexes: [0] }])),
    ).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
      context: `lookup table ${absent.toBase58()} does not exist`,
    });
    // A table's exact bytes under another owner.
    const stranger = Keypair.generate().publicKey;
    const t = w.put({ ...tableAccount(addresses(1)), owner: stranger });
    expect(
      await resolver.resolve(messageOf([{ accountKey: t, writableIndexes: [], readonlyIndexes: [0] }])),
    ).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
      context: `lookup table ${t.toBase58()} is owned by ${stranger.toBase58()}, not the lookup table program`,
    });
  });

  it("refuses a table deactivated at any slot, even the last before u64::MAX: V2_LOOKUP_TABLE_DEACTIVATED, naming the slot", async () => {
    const w = world();
    const list = addresses(1);
    for (const slot of [0n, 123_456n, ACTIVE - 1n]) {
      const t = w.put(tableAccount(list, slot));
      expect(
        await new LookupTableResolver({ chain: w.chain }).resolve(
          messageOf([{ accountKey: t, writableIndexes: [], readonlyIndexes: [0] }]),
        ),
      ).toEqual({
        ok: false,
        code: V2RejectCode.V2_LOOKUP_TABLE_DEACTIVATED,
        context: `lookup table ${t.toBase58()} was deactivated at slot ${slot}`,
      });
    }
  });

  it("refuses a writable index at the table's length, not one below it: V2_LOOKUP_INDEX_OUT_OF_RANGE, naming it writable", async () => {
    const w = world();
    const t = w.put(tableAccount(addresses(3)));
    const resolver = new LookupTableResolver({ chain: w.chain });
    expect(
      await resolver.resolve(messageOf([{ accountKey: t, writableIndexes: [0, 3], readonlyIndexes: [] }])),
    ).toEqual({
      ok: false,
      code: V2RejectCode.V2_LOOKUP_INDEX_OUT_OF_RANGE,
      context: `lookup table ${t.toBase58()} holds 3 addresses: writable index 3 is beyond them`,
    });
    expect(
      (await resolver.resolve(messageOf([{ accountKey: t, writableIndexes: [0, 2], readonlyIndexes: [] }])))
        .ok,
    ).toBe(true);
  });
});

describe("one table named by two lookups of a message", () => {
  it("reads a cached table again when either lookup asks past its cached length, and resolves every key", async () => {
    const w = world();
    const first = addresses(2);
    const key = w.put(tableAccount(first));
    const resolver = new LookupTableResolver({ chain: w.chain, now: () => w.clock.t });
    expect(
      (await resolver.resolve(messageOf([{ accountKey: key, writableIndexes: [], readonlyIndexes: [1] }])))
        .ok,
    ).toBe(true);
    expect(w.reads).toHaveLength(1);
    // The table grows on the chain; a message names it twice: index 3 first, then index 0.
    const grown = [...first, ...addresses(2)];
    w.put(tableAccount(grown), key);
    const r = await resolver.resolve(
      messageOf([
        { accountKey: key, writableIndexes: [3], readonlyIndexes: [] },
        { accountKey: key, writableIndexes: [], readonlyIndexes: [0] },
      ]),
    );
    expect(w.reads).toHaveLength(2);
    expect(r).toEqual({ ok: true, accountKeys: [payer, grown[3], grown[0]] });
    // Both lookups within the cached length: no read.
    const again = await resolver.resolve(
      messageOf([
        { accountKey: key, writableIndexes: [0], readonlyIndexes: [] },
        { accountKey: key, writableIndexes: [], readonlyIndexes: [2] },
      ]),
    );
    expect(w.reads).toHaveLength(2);
    expect(again).toEqual({ ok: true, accountKeys: [payer, grown[0], grown[2]] });
  });
});

describe("a resolver that keeps no tables", () => {
  it("with maxTables 0, or below, reads the table for every resolution and keeps none", async () => {
    for (const maxTables of [0, -1]) {
      const w = world();
      const t = w.put(tableAccount(addresses(1)));
      const resolver = new LookupTableResolver({ chain: w.chain, maxTables });
      const m = messageOf([{ accountKey: t, writableIndexes: [], readonlyIndexes: [0] }]);
      expect((await resolver.resolve(m)).ok).toBe(true);
      expect((await resolver.resolve(m)).ok).toBe(true);
      expect(w.reads).toHaveLength(2);
      expect(resolver.cachedTables()).toBe(0);
    }
  });
});

describe("what a resolution costs", () => {
  it("a legacy message is its static keys: no read, and no resolution counted", async () => {
    const w = world();
    const registry = new Registry();
    const resolver = new LookupTableResolver({ chain: w.chain, metrics: rfqV2Metrics(registry) });
    const legacy = new Message({
      header: { numRequiredSignatures: 1, numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 0 },
      accountKeys: [payer],
      recentBlockhash: blockhash,
      instructions: [],
    });
    expect(await resolver.resolve(legacy)).toEqual({ ok: true, accountKeys: [payer] });
    expect(w.reads).toEqual([]);
    const counted = (await registry.getSingleMetric("rfq_v2_lookup_resolution_seconds")!.get()).values;
    expect(
      counted.find(
        (v) => (v as { metricName?: string }).metricName === "rfq_v2_lookup_resolution_seconds_count",
      )?.value ?? 0,
    ).toBe(0);
  });

  it("counts the seconds a resolution waits for the chain", async () => {
    const w = world(60);
    const registry = new Registry();
    const metrics = rfqV2Metrics(registry);
    const t = w.put(tableAccount(addresses(1)));
    const resolver = new LookupTableResolver({ chain: w.chain, metrics });
    expect(
      (await resolver.resolve(messageOf([{ accountKey: t, writableIndexes: [], readonlyIndexes: [0] }]))).ok,
    ).toBe(true);
    const values = (await registry.getSingleMetric("rfq_v2_lookup_resolution_seconds")!.get()).values;
    const sum =
      values.find((v) => (v as { metricName?: string }).metricName === "rfq_v2_lookup_resolution_seconds_sum")
        ?.value ?? -1;
    const count =
      values.find(
        (v) => (v as { metricName?: string }).metricName === "rfq_v2_lookup_resolution_seconds_count",
      )?.value ?? -1;
    expect(count).toBe(1);
    expect(sum).toBeGreaterThanOrEqual(0.05);
    expect(sum).toBeLessThan(1);
  });

  it("leaves no deadline timer behind once the chain answers", async () => {
    vi.useFakeTimers();
    const w = world();
    const t = w.put(tableAccount(addresses(1)));
    const resolver = new LookupTableResolver({ chain: w.chain });
    const r = await resolver.resolve(
      messageOf([{ accountKey: t, writableIndexes: [], readonlyIndexes: [0] }]),
    );
    expect(r.ok).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

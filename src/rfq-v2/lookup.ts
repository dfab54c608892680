/**
 * The accounts a v0 swap loads from address lookup tables, resolved before the checks of fill.ts so
 * they see every key the runtime will use: the static keys, then every table's writable indexes, then
 * every table's read-only ones (the v0 order the instructions' indexes count in).
 *
 * Tables are read through the chain port (one `getAccounts` call for all that are needed), within a
 * deadline, and kept a short while by address. A cached table is safe to use for indexes it holds:
 * a table only grows (extend appends), and its address cannot be created again once closed (it is
 * derived from a slot that must be among the last 512 at creation, and closing waits 512 slots after
 * deactivation), so an index below the cached length names the same key on the chain. An index
 * at or past the cached length reads the table again. A table that is missing, not a lookup table,
 * deactivated (or deactivating: it may be closed before the swap lands), or too short for an index
 * is refused with its code.
 */
import {
  AddressLookupTableAccount,
  AddressLookupTableProgram,
  type PublicKey,
  type VersionedMessage,
} from "@solana/web3.js";
import type { Chain } from "../chain/interface.ts";
import { type Refused, V2RejectCode } from "../refusal/codes.ts";
import type { RfqV2Metrics } from "./metrics.ts";

export interface LookupResolverOptions {
  chain: Pick<Chain, "getAccounts">;
  /** How long a table read from the chain is used without reading it again, ms (default 10,000). */
  ttlMs?: number;
  /** Tables kept at most; the oldest read is forgotten first (default 256). */
  maxTables?: number;
  /** The most one resolution waits for the chain, ms (default 2,000). */
  deadlineMs?: number;
  now?: () => number;
  metrics?: Pick<RfqV2Metrics, "lookupResolutions" | "lookupTables" | "lookupSeconds">;
}

export type LookupResolution = { ok: true; accountKeys: PublicKey[] } | Refused<V2RejectCode>;

/** deactivation_slot of a table never deactivated (u64::MAX). */
const ACTIVE = 0xffff_ffff_ffff_ffffn;

interface Cached {
  table: AddressLookupTableAccount;
  readAtMs: number;
}

export class LookupTableResolver {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;
  private readonly maxTables: number;
  private readonly deadlineMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: LookupResolverOptions) {
    this.ttlMs = opts.ttlMs ?? 10_000;
    this.maxTables = opts.maxTables ?? 256;
    this.deadlineMs = opts.deadlineMs ?? 2_000;
    this.now = opts.now ?? Date.now;
  }

  /** The message's full key list; a message without lookups is its static keys, no read made. */
  async resolve(message: VersionedMessage): Promise<LookupResolution> {
    // Stryker disable next-line ConditionalExpression: a legacy message's addressTableLookups is [] as well
    const lookups = message.version === 0 ? message.addressTableLookups : [];
    if (lookups.length === 0) return { ok: true, accountKeys: message.staticAccountKeys };
    const started = performance.now();
    const r = await this.resolveLookups(message);
    const m = this.opts.metrics;
    m?.lookupSeconds.observe((performance.now() - started) / 1000);
    m?.lookupResolutions.inc({ outcome: r.ok ? "resolved" : r.code });
    return r;
  }

  /** Tables in the cache now (for tests and the operator's view). */
  cachedTables(): number {
    return this.cache.size;
  }

  private async resolveLookups(message: VersionedMessage): Promise<LookupResolution> {
    const refuse = (code: V2RejectCode, context: string): LookupResolution => ({ ok: false, code, context });
    // The highest index each table is asked for.
    const highest = new Map<string, { key: PublicKey; index: number }>();
    for (const l of message.addressTableLookups) {
      const a = l.accountKey.toBase58();
      const index = Math.max(-1, ...l.writableIndexes, ...l.readonlyIndexes);
      highest.set(a, { key: l.accountKey, index: Math.max(index, highest.get(a)?.index ?? -1) });
    }
    const now = this.now();
    const tables = new Map<string, AddressLookupTableAccount>();
    const toRead: PublicKey[] = [];
    for (const [a, { key, index }] of highest) {
      const c = this.cache.get(a);
      if (c && now - c.readAtMs < this.ttlMs && index < c.table.state.addresses.length)
        tables.set(a, c.table);
      else toRead.push(key);
    }
    this.opts.metrics?.lookupTables.inc({ source: "cache" }, tables.size);
    if (toRead.length > 0) {
      let accounts: Awaited<ReturnType<Chain["getAccounts"]>>;
      try {
        accounts = await withDeadline(this.opts.chain.getAccounts(toRead), this.deadlineMs);
      } catch (err) {
        return refuse(
          V2RejectCode.V2_LOOKUP_TABLES_UNRESOLVED,
          `reading ${toRead.length} lookup table(s): ${(err as Error).message}`,
        );
      }
      this.opts.metrics?.lookupTables.inc({ source: "chain" }, toRead.length);
      for (const [i, key] of toRead.entries()) {
        const a = key.toBase58();
        const acc = accounts[i];
        this.cache.delete(a);
        if (!acc) return refuse(V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND, `lookup table ${a} does not exist`);
        if (!acc.owner.equals(AddressLookupTableProgram.programId))
          return refuse(
            V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
            `lookup table ${a} is owned by ${acc.owner.toBase58()}, not the lookup table program`,
          );
        let state: AddressLookupTableAccount["state"];
        try {
          state = AddressLookupTableAccount.deserialize(acc.data);
        } catch (err) {
          return refuse(
            V2RejectCode.V2_LOOKUP_TABLE_NOT_FOUND,
            `lookup table ${a}: cannot read its data: ${(err as Error).message}`,
          );
        }
        if (state.deactivationSlot !== ACTIVE)
          return refuse(
            V2RejectCode.V2_LOOKUP_TABLE_DEACTIVATED,
            `lookup table ${a} was deactivated at slot ${state.deactivationSlot}`,
          );
        const table = new AddressLookupTableAccount({ key, state });
        tables.set(a, table);
        this.remember(a, { table, readAtMs: now });
      }
    }
    for (const l of message.addressTableLookups) {
      const a = l.accountKey.toBase58();
      // Stryker disable next-line OptionalChaining: every table of the message is in tables here (cached or read, else refused above)
      const n = tables.get(a)?.state.addresses.length ?? 0;
      for (const [kind, indexes] of [
        ["writable", l.writableIndexes],
        ["read-only", l.readonlyIndexes],
      ] as const) {
        const beyond = indexes.find((i) => i >= n);
        if (beyond !== undefined)
          return refuse(
            V2RejectCode.V2_LOOKUP_INDEX_OUT_OF_RANGE,
            `lookup table ${a} holds ${n} addresses: ${kind} index ${beyond} is beyond them`,
          );
      }
    }
    const keys = message.getAccountKeys({ addressLookupTableAccounts: [...tables.values()] });
    return { ok: true, accountKeys: keys.keySegments().flat() };
  }

  private remember(address: string, entry: Cached): void {
    this.cache.set(address, entry);
    while (this.cache.size > this.maxTables) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }
}

/** `p`, or a rejection once `ms` pass without it settling. */
function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the chain within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/**
 * Redis FillJournal: shared by every instance and kept across restarts.
 *
 *   <prefix>{fills}:pending   hash quoteId -> PendingFill JSON
 *   <prefix>{fills}:fees      list of FeeOwed JSON, appended per landed fill (the settlement ledger;
 *                             whoever settles with the operator reads and trims it)
 *   <prefix>{fills}:ledger    stream of LedgerRecord JSON (field `r`): the ledger outbox, drained by
 *                             the ledger writer through the consumer group `ledger` (an entry is
 *                             acknowledged and deleted once the database holds it; one left
 *                             unacknowledged by a dead consumer is claimed by another after `staleMs`,
 *                             and a consumer holding nothing that has not read for `staleMs` is
 *                             removed from the group)
 *
 * The keys share the `{fills}` hash tag so the settle script (HDEL + RPUSH + XADD) runs on Redis Cluster too.
 */
import type { LedgerRecord, OutboxEntry } from "../ledger/records.ts";
import type { RedisClient } from "../redis/client.ts";
import type { FeeOwed, FillJournal, PendingFill } from "./interface.ts";

/** A safety net only: the writer keeps the outbox near empty. Past this the oldest entries are trimmed. */
const OUTBOX_MAX = "1000000";
const GROUP = "ledger";

/**
 * Removes the pending entry and, only if this caller removed it, appends the fee line (ARGV[2]) and
 * the ledger records (ARGV[4], ARGV[5], ...) to the outbox, in order.
 */
const SETTLE = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[2]) end
for i = 4, #ARGV do redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'r', ARGV[i]) end
return 1
`;

/**
 * Removes the group's consumers (ARGV[1]) other than ARGV[2] that hold no entry and have been idle at
 * least ARGV[3] ms; returns how many.
 */
const PRUNE_CONSUMERS = `
local removed = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
  if info['name'] ~= ARGV[2] and info['pending'] == 0 and info['idle'] >= tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed
`;

/** The journal's keys; the settle script touches all three, so they share the `{fills}` hash tag. */
export function journalKeys(prefix: string) {
  return {
    pending: `${prefix}{fills}:pending`,
    fees: `${prefix}{fills}:fees`,
    ledger: `${prefix}{fills}:ledger`,
  };
}

type StreamEntry = [id: string, fields: string[] | null];

function entriesOf(raw: StreamEntry[] | null | undefined): OutboxEntry[] {
  const out: OutboxEntry[] = [];
  for (const [id, fields] of raw ?? []) {
    // A pending entry deleted meanwhile comes back without fields; the caller acknowledges it away.
    const at = fields ? fields.indexOf("r") : -1;
    const json = fields && at >= 0 ? fields[at + 1] : undefined;
    if (json === undefined) continue;
    out.push({ id, record: JSON.parse(json) as LedgerRecord });
  }
  return out;
}

export class RedisFillJournal implements FillJournal {
  private readonly pendingKey: string;
  private readonly feesKey: string;
  private readonly ledgerKey: string;
  private groupReady = false;
  /** When this instance last pruned the group's consumers (pruneConsumers). */
  private prunedAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly redis: RedisClient,
    prefix = "rfq:",
  ) {
    ({ pending: this.pendingKey, fees: this.feesKey, ledger: this.ledgerKey } = journalKeys(prefix));
  }

  async addPending(fill: PendingFill): Promise<void> {
    await this.redis.hset(this.pendingKey, fill.quoteId, JSON.stringify(fill));
  }

  async listPending(): Promise<PendingFill[]> {
    const all = await this.redis.hvals(this.pendingKey);
    return all.map((raw) => JSON.parse(raw) as PendingFill);
  }

  async settle(quoteId: string, fee?: FeeOwed, records: readonly LedgerRecord[] = []): Promise<boolean> {
    const removed = await this.redis.eval(
      SETTLE,
      3,
      this.pendingKey,
      this.feesKey,
      this.ledgerKey,
      quoteId,
      fee ? JSON.stringify(fee) : "",
      OUTBOX_MAX,
      ...records.map((r) => JSON.stringify(r)),
    );
    return removed === 1;
  }

  async feesOwed(): Promise<FeeOwed[]> {
    const all = await this.redis.lrange(this.feesKey, 0, -1);
    return all.map((raw) => JSON.parse(raw) as FeeOwed);
  }

  async appendLedger(record: LedgerRecord): Promise<void> {
    await this.redis.xadd(this.ledgerKey, "MAXLEN", "~", OUTBOX_MAX, "*", "r", JSON.stringify(record));
  }

  async takeLedger(consumer: string, max: number, staleMs: number): Promise<OutboxEntry[]> {
    await this.ensureGroup();
    const read = async (from: string, count: number): Promise<OutboxEntry[]> => {
      const res = (await this.redis.call(
        "XREADGROUP",
        "GROUP",
        GROUP,
        consumer,
        "COUNT",
        String(count),
        "STREAMS",
        this.ledgerKey,
        from,
      )) as [string, StreamEntry[]][] | null;
      return entriesOf(res?.[0]?.[1]);
    };
    // Taken before and not acknowledged (the last write failed): these first.
    const out = await read("0", max);
    if (out.length < max) {
      const claimed = (await this.redis.call(
        "XAUTOCLAIM",
        this.ledgerKey,
        GROUP,
        consumer,
        String(staleMs),
        "0",
        "COUNT",
        String(max - out.length),
      )) as [string, StreamEntry[], string[]?];
      out.push(...entriesOf(claimed[1]));
    }
    if (out.length < max) out.push(...(await read(">", max - out.length)));
    await this.pruneConsumers(consumer, staleMs);
    return out;
  }

  /**
   * Every writer joins the group under a name of its own (one per process start), and Redis keeps a
   * consumer until it is deleted: without this, each restart would leave one behind for good. At most
   * once per `staleMs`, consumers other than `self` that hold nothing (their entries taken over, or
   * none) and have not read for `staleMs` leave the group, checked and removed in one script: a
   * consumer deleted while holding entries would strand them (nothing can claim them afterwards). A
   * live writer reads every pass, and one removed anyway held nothing and rejoins on its next read.
   */
  private async pruneConsumers(self: string, staleMs: number): Promise<void> {
    const now = Date.now();
    if (now - this.prunedAtMs < staleMs) return;
    this.prunedAtMs = now;
    await this.redis.eval(PRUNE_CONSUMERS, 1, this.ledgerKey, GROUP, self, String(staleMs));
  }

  async ackLedger(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.redis
      .multi()
      .xack(this.ledgerKey, GROUP, ...ids)
      .xdel(this.ledgerKey, ...ids)
      .exec();
  }

  async ledgerBacklog(): Promise<number> {
    return this.redis.xlen(this.ledgerKey);
  }

  private async ensureGroup(): Promise<void> {
    if (this.groupReady) return;
    try {
      await this.redis.xgroup("CREATE", this.ledgerKey, GROUP, "0", "MKSTREAM");
    } catch (e) {
      if (!String((e as Error).message).includes("BUSYGROUP")) throw e;
    }
    this.groupReady = true;
  }
}

/**
 * Redis FillJournal: shared by every instance and kept across restarts.
 *
 *   <prefix>{fills}:pending   hash quoteId -> PendingFill JSON
 *   <prefix>{fills}:fees      list of FeeOwed JSON, appended per landed fill (the settlement ledger;
 *                             whoever settles with the operator reads and trims it)
 *   <prefix>{fills}:ledger    stream of LedgerRecord JSON (field `r`): the ledger outbox, drained by
 *                             the ledger writer through the consumer group `ledger` (an entry is
 *                             acknowledged and deleted once the database holds it; one left
 *                             unacknowledged by a dead consumer is claimed by another after `staleMs`)
 *
 * The keys share the `{fills}` hash tag so the settle script (HDEL + RPUSH + XADD) runs on Redis Cluster too.
 */
import type { LedgerRecord, OutboxEntry } from "../../ledger/records.ts";
import type { RedisClient } from "../../redis/client.ts";
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
    return out;
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

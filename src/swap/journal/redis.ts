/**
 * Redis FillJournal: shared by every instance and kept across restarts.
 *
 *   <prefix>{fills}:pending   hash quoteId -> PendingFill JSON
 *   <prefix>{fills}:fees      list of FeeOwed JSON, appended per landed fill (the settlement ledger;
 *                             whoever settles with the operator reads and trims it)
 *
 * Both keys share the `{fills}` hash tag so the settle script (HDEL + RPUSH) runs on Redis Cluster too.
 */
import type { RedisClient } from "../../redis/client.ts";
import type { FeeOwed, FillJournal, PendingFill } from "./interface.ts";

/** Removes the pending entry and, only if this caller removed it, appends the fee line. */
const SETTLE = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[2]) end
return 1
`;

/** The journal's keys; the settle script touches both, so they share the `{fills}` hash tag. */
export function journalKeys(prefix: string) {
  return { pending: `${prefix}{fills}:pending`, fees: `${prefix}{fills}:fees` };
}

export class RedisFillJournal implements FillJournal {
  private readonly pendingKey: string;
  private readonly feesKey: string;

  constructor(
    private readonly redis: RedisClient,
    prefix = "rfq:",
  ) {
    ({ pending: this.pendingKey, fees: this.feesKey } = journalKeys(prefix));
  }

  async addPending(fill: PendingFill): Promise<void> {
    await this.redis.hset(this.pendingKey, fill.quoteId, JSON.stringify(fill));
  }

  async listPending(): Promise<PendingFill[]> {
    const all = await this.redis.hvals(this.pendingKey);
    return all.map((raw) => JSON.parse(raw) as PendingFill);
  }

  async settle(quoteId: string, fee?: FeeOwed): Promise<boolean> {
    const removed = await this.redis.eval(
      SETTLE,
      2,
      this.pendingKey,
      this.feesKey,
      quoteId,
      fee ? JSON.stringify(fee) : "",
    );
    return removed === 1;
  }

  async feesOwed(): Promise<FeeOwed[]> {
    const all = await this.redis.lrange(this.feesKey, 0, -1);
    return all.map((raw) => JSON.parse(raw) as FeeOwed);
  }
}

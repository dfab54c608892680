/** The in-memory FillJournal: one process, lost on restart (like the memory quote store). */
import type { LedgerRecord, OutboxEntry } from "../ledger/records.ts";
import type { FeeOwed, FillJournal, PendingFill } from "./interface.ts";

interface Held {
  record: LedgerRecord;
  /** The consumer holding it and since when (ms epoch); unset: not handed out yet. */
  consumer?: string;
  takenAtMs?: number;
}

export class MemoryFillJournal implements FillJournal {
  private readonly pending = new Map<string, PendingFill>();
  private readonly fees: FeeOwed[] = [];
  private readonly outbox = new Map<string, Held>();
  private nextId = 1;

  constructor(private readonly now: () => number = Date.now) {}

  async addPending(fill: PendingFill): Promise<void> {
    this.pending.set(fill.quoteId, { ...fill });
  }

  async listPending(): Promise<PendingFill[]> {
    return [...this.pending.values()].map((f) => ({ ...f }));
  }

  async settle(quoteId: string, fee?: FeeOwed, records: readonly LedgerRecord[] = []): Promise<boolean> {
    if (!this.pending.delete(quoteId)) return false;
    if (fee) this.fees.push({ ...fee });
    for (const r of records) this.push(r);
    return true;
  }

  async feesOwed(): Promise<FeeOwed[]> {
    return this.fees.map((f) => ({ ...f }));
  }

  async appendLedger(record: LedgerRecord): Promise<void> {
    this.push(record);
  }

  async takeLedger(consumer: string, max: number, staleMs: number): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = [];
    const now = this.now();
    for (const [id, held] of this.outbox) {
      if (out.length >= max) break;
      const free =
        held.consumer === undefined || held.consumer === consumer || now - (held.takenAtMs ?? 0) >= staleMs;
      if (!free) continue;
      held.consumer = consumer;
      held.takenAtMs = now;
      out.push({ id, record: structuredClone(held.record) });
    }
    return out;
  }

  async ackLedger(ids: string[]): Promise<void> {
    for (const id of ids) this.outbox.delete(id);
  }

  async ledgerBacklog(): Promise<number> {
    return this.outbox.size;
  }

  private push(record: LedgerRecord): void {
    this.outbox.set(String(this.nextId++), { record: structuredClone(record) });
  }
}

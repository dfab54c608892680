/** The in-memory FillJournal: one process, lost on restart (like the memory quote store). */
import type { FeeOwed, FillJournal, PendingFill } from "./interface.ts";

export class MemoryFillJournal implements FillJournal {
  private readonly pending = new Map<string, PendingFill>();
  private readonly fees: FeeOwed[] = [];

  async addPending(fill: PendingFill): Promise<void> {
    this.pending.set(fill.quoteId, { ...fill });
  }

  async listPending(): Promise<PendingFill[]> {
    return [...this.pending.values()].map((f) => ({ ...f }));
  }

  async settle(quoteId: string, fee?: FeeOwed): Promise<boolean> {
    if (!this.pending.delete(quoteId)) return false;
    if (fee) this.fees.push({ ...fee });
    return true;
  }

  async feesOwed(): Promise<FeeOwed[]> {
    return this.fees.map((f) => ({ ...f }));
  }
}

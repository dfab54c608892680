/** The in-process IssuanceUsage: the paper setup's, where one process is the only instance. */
import type {
  IssuanceDirection,
  IssuanceReservation,
  IssuanceReserveResult,
  IssuanceUsage,
} from "./interface.ts";

const keyOf = (mint: string, direction: IssuanceDirection, day: string) => `${mint} ${direction} ${day}`;

export class MemoryIssuanceUsage implements IssuanceUsage {
  private readonly totals = new Map<string, bigint>();
  private readonly open = new Map<string, IssuanceReservation>();

  used(mint: string, direction: IssuanceDirection, day: string): bigint {
    return this.totals.get(keyOf(mint, direction, day)) ?? 0n;
  }

  async reserve(r: IssuanceReservation): Promise<IssuanceReserveResult> {
    if (this.open.has(r.quoteId)) return { ok: true };
    const key = keyOf(r.mint, r.direction, r.day);
    const used = this.totals.get(key) ?? 0n;
    if (used + r.amount > r.dailyCap) return capExceeded(r, used);
    this.totals.set(key, used + r.amount);
    this.open.set(r.quoteId, r);
    return { ok: true };
  }

  async release(quoteId: string): Promise<void> {
    const r = this.open.get(quoteId);
    if (!r) return;
    this.open.delete(quoteId);
    const key = keyOf(r.mint, r.direction, r.day);
    this.totals.set(key, (this.totals.get(key) ?? 0n) - r.amount);
  }

  async commit(quoteId: string): Promise<void> {
    this.open.delete(quoteId);
  }

  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

export function capExceeded(r: IssuanceReservation, used: bigint): IssuanceReserveResult {
  const left = r.dailyCap > used ? r.dailyCap - used : 0n;
  return {
    ok: false,
    code: "ISSUANCE_CAP_EXCEEDED",
    context: `${r.direction} of ${r.amount} would cross the daily cap of ${r.dailyCap} (${left} left on ${r.day} UTC)`,
  };
}

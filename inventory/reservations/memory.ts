/**
 * The reservation state for one process (the embedded default). The same state machine as the Redis reservation state's Lua
 * scripts; every method runs to completion without awaiting, so it is as atomic as a script.
 * Instances in one process that share a MemoryReservations see one another's reservations.
 */
import type { Reservation } from "../interface.ts";
import type {
  CommitResult,
  Reservations,
  ReservationsState,
  ReserveOutcome,
  ReserveRequest,
  Totals,
} from "./interface.ts";

interface Record {
  r: Reservation;
  state: "open" | "committed";
  settleAtMs?: number;
}

export class MemoryReservations implements Reservations {
  private balancesAtMs: number | undefined;
  private lamports: bigint | undefined;
  private readonly balances = new Map<string, bigint>();
  private readonly reserved = new Map<string, bigint>();
  private readonly incoming = new Map<string, bigint>();
  private readonly records = new Map<string, Record>();

  async reserve(q: ReserveRequest): Promise<ReserveOutcome> {
    this.sweep(q.nowMs);
    if (this.records.has(q.quoteId)) return { kind: "exists" };
    const bal = this.balances.get(q.outMint) ?? 0n;
    const res = this.reserved.get(q.outMint) ?? 0n;
    const after = bal - res - q.outAmount;
    if (after < q.bufferOut) {
      const available = bal - res - q.bufferOut;
      // Stryker disable next-line EqualityOperator: at available = 0 both branches give 0
      return { kind: "insufficient", available: available > 0n ? available : 0n };
    }
    if (q.floorOut !== undefined && after < q.floorOut) return { kind: "exposure", leg: "out" };
    if (q.inMint !== undefined && q.ceilingIn !== undefined) {
      const held = (this.balances.get(q.inMint) ?? 0n) + (this.incoming.get(q.inMint) ?? 0n);
      if (held + (q.inAmount ?? 0n) > q.ceilingIn) return { kind: "exposure", leg: "in" };
    }
    const r: Reservation = {
      quoteId: q.quoteId,
      mint: q.outMint,
      amount: q.outAmount,
      expiresAtMs: q.expiresAtMs,
      ...(q.inMint !== undefined ? { inputMint: q.inMint, inputAmount: q.inAmount ?? 0n } : {}),
    };
    this.records.set(q.quoteId, { r, state: "open" });
    return { kind: "reserved", totals: this.add(r, 1n) };
  }

  async release(quoteId: string): Promise<Totals | undefined> {
    const rec = this.records.get(quoteId);
    if (rec?.state !== "open") return undefined;
    this.records.delete(quoteId);
    return this.add(rec.r, -1n);
  }

  async commit(quoteId: string, settleAtMs: number): Promise<CommitResult> {
    const rec = this.records.get(quoteId);
    if (!rec) return "missing";
    if (rec.state === "committed") return "already";
    rec.state = "committed";
    rec.settleAtMs = settleAtMs;
    return "committed";
  }

  async setBalances(readAtMs: number, lamports: bigint, balances: ReadonlyMap<string, bigint>) {
    if (this.balancesAtMs !== undefined && readAtMs < this.balancesAtMs) return false;
    this.balancesAtMs = readAtMs;
    this.lamports = lamports;
    for (const [mint, amount] of balances) this.balances.set(mint, amount);
    for (const [id, rec] of this.records) {
      // Stryker disable next-line ConditionalExpression: only a committed record has a settleAtMs (undefined <= n is false)
      if (rec.state === "committed" && rec.settleAtMs! <= readAtMs) {
        this.records.delete(id);
        this.add(rec.r, -1n);
      }
    }
    return true;
  }

  async state(nowMs: number): Promise<ReservationsState> {
    this.sweep(nowMs);
    return {
      balancesAtMs: this.balancesAtMs,
      lamports: this.lamports,
      balances: new Map(this.balances),
      reserved: new Map(this.reserved),
      incoming: new Map(this.incoming),
    };
  }

  async list() {
    return [...this.records.values()].map((rec) => ({ ...rec.r, state: rec.state }));
  }

  private sweep(nowMs: number): void {
    for (const [id, rec] of this.records) {
      if (rec.state === "open" && rec.r.expiresAtMs <= nowMs) {
        this.records.delete(id);
        this.add(rec.r, -1n);
      }
    }
  }

  /**
   * Adds (sign 1) or removes (sign -1) a reservation's amounts; returns the touched totals. A total is
   * the sum of its live records' amounts, each removed once, so it never goes below zero.
   */
  private add(r: Reservation, sign: 1n | -1n): Totals {
    const totals: Totals = { reserved: new Map(), incoming: new Map() };
    const out = (this.reserved.get(r.mint) ?? 0n) + sign * r.amount;
    setOrDelete(this.reserved, r.mint, out);
    totals.reserved.set(r.mint, out);
    if (r.inputMint !== undefined) {
      const inc = (this.incoming.get(r.inputMint) ?? 0n) + sign * (r.inputAmount ?? 0n);
      setOrDelete(this.incoming, r.inputMint, inc);
      totals.incoming.set(r.inputMint, inc);
    }
    return totals;
  }
}

function setOrDelete(m: Map<string, bigint>, k: string, v: bigint): void {
  if (v > 0n) m.set(k, v);
  else m.delete(k);
}

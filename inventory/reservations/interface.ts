/**
 * The shared state behind an Inventory: latest balances and every open reservation, changed only by
 * atomic operations. RedisReservations (redis.ts, Lua scripts) is shared by all instances;
 * MemoryReservations (memory.ts) is the same state machine for one process.
 *
 * A reservation's life: open (counted in `reserved`/`incoming`) -> released, expired (swept), or
 * committed. A committed reservation stays counted until a balance read that started after its
 * `settleAtMs` replaces it: until then the chain balance may not show the fill yet, and dropping the
 * reservation early would let the same units be promised twice.
 */
import type { Reservation } from "../interface.ts";

export interface ReserveRequest {
  quoteId: string;
  outMint: string;
  outAmount: bigint;
  inMint?: string;
  inAmount?: bigint;
  expiresAtMs: number;
  nowMs: number;
  /** balance - reserved - outAmount must stay >= bufferOut (the safety buffer). */
  bufferOut: bigint;
  /** Exposure: balance - reserved - outAmount must stay >= this. Unset: no limit. */
  floorOut?: bigint;
  /** Exposure: balance + incoming + inAmount of the input mint must stay <= this. Unset: no limit. */
  ceilingIn?: bigint;
}

/** Totals after an operation for the mints it touched, so the caller's memory view updates at once. */
export interface Totals {
  reserved: Map<string, bigint>;
  incoming: Map<string, bigint>;
}

export type ReserveOutcome =
  | { kind: "reserved"; totals: Totals }
  /** The quoteId already holds a reservation (a retry): nothing changed. */
  | { kind: "exists" }
  | { kind: "insufficient"; available: bigint }
  | { kind: "exposure"; leg: "out" | "in" };

export type CommitResult = "committed" | "already" | "missing";

export interface ReservationsState {
  balancesAtMs: number | undefined;
  lamports: bigint | undefined;
  balances: Map<string, bigint>;
  reserved: Map<string, bigint>;
  incoming: Map<string, bigint>;
}

export interface Reservations {
  reserve(r: ReserveRequest): Promise<ReserveOutcome>;
  /** Drops an open reservation; returns the new totals, or undefined when there was none open. */
  release(quoteId: string): Promise<Totals | undefined>;
  /** Marks a reservation committed; it stays counted until a balance read started at or after settleAtMs. */
  commit(quoteId: string, settleAtMs: number): Promise<CommitResult>;
  /**
   * Records balances read from the chain (the read started at `readAtMs`). An older read than the one
   * stored is ignored (returns false); otherwise committed reservations it covers are settled.
   */
  setBalances(readAtMs: number, lamports: bigint, balances: ReadonlyMap<string, bigint>): Promise<boolean>;
  /** Everything, after sweeping reservations expired at `nowMs`. */
  state(nowMs: number): Promise<ReservationsState>;
  /** Open and committed-but-unsettled reservations. */
  list(): Promise<(Reservation & { state: "open" | "committed" })[]>;
}

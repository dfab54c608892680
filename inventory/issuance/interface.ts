/**
 * Issuance usage: how much of each permissioned token has been minted (and burned) today, and the
 * reservations of claimed swaps whose bundle is still to land. The issuance analogue of the inventory
 * reservations: the daily cap holds across every instance because a reservation is one atomic step (a Redis
 * Lua script; one process's memory in the paper setup), and a swap never mints without first holding
 * its reservation. A reservation is released when its bundle fails or its blockhash expires, and
 * committed (counted for good) when the fill lands.
 *
 * Adapters: memory.ts (paper setup) and redis.ts (production); both pass test/inventory/issuance.test.ts.
 */

import type { Refused, SwapRefusalCode } from "../../src/refusal/codes.ts";

export type IssuanceDirection = "mint" | "burn";

export interface IssuanceReservation {
  quoteId: string;
  mint: string;
  direction: IssuanceDirection;
  amount: bigint;
  /** The most (reserved and committed together) this direction may reach on `day`. */
  dailyCap: bigint;
  /** The UTC day the units count against, "YYYY-MM-DD" (utcDay()). */
  day: string;
}

export type IssuanceReserveResult = { ok: true } | Refused<typeof SwapRefusalCode.ISSUANCE_CAP_EXCEEDED>;

export interface IssuanceUsage {
  /**
   * Units counted today (committed plus reserved) for a mint and direction, as this instance last saw
   * them: synchronous and in memory, for the quote path. Its own reservations count at once; other
   * instances' within a sync interval. The reserve step is the one that holds the cap.
   */
  used(mint: string, direction: IssuanceDirection, day: string): bigint;
  /** Takes a reservation under the daily cap, atomically. Idempotent per quoteId. */
  reserve(r: IssuanceReservation): Promise<IssuanceReserveResult>;
  /** The bundle failed or expired: the units no longer count. Unknown quoteIds are ignored. */
  release(quoteId: string): Promise<void>;
  /** The fill landed: the units count for good (the reservation is forgotten, the day's total stays). */
  commit(quoteId: string): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The UTC day of a moment, "YYYY-MM-DD": daily caps reset at UTC midnight. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

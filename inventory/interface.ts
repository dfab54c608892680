/**
 * Inventory port: what the maker can promise and has promised.
 *
 * `canCover` is synchronous and in-memory: it runs on the quote path. Reservations are atomic across
 * every instance (Redis Lua in production) and keyed by quoteId so a retry never reserves twice.
 */

export type ReserveResult =
  | { ok: true }
  | { ok: false; reason: "INVENTORY_INSUFFICIENT" | "EXPOSURE_LIMIT_EXCEEDED"; detail: string };

export interface Reservation {
  quoteId: string;
  /** The mint the maker pays out, and how much (smallest units, fee included: the maker owes it). */
  mint: string;
  amount: bigint;
  /** When an unsettled reservation lapses on its own (ms epoch), so a crash never strands inventory. */
  expiresAtMs: number;
}

export interface Inventory {
  /** Can the maker promise `amount` of `mint` now: available minus reserved minus the safety buffer. */
  canCover(mint: string, amount: bigint): boolean;
  /** Takes a reservation for a claimed swap. Idempotent per quoteId. */
  reserve(reservation: Reservation): Promise<ReserveResult>;
  /** The fill failed or expired: the units are available again. */
  release(quoteId: string): Promise<void>;
  /** The fill landed: the units left the wallet (balances refresh from the chain). */
  commit(quoteId: string): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

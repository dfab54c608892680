/**
 * Inventory port: what the maker can promise and has promised.
 *
 * `check` and `position` are synchronous and in-memory: they run on the quote path.
 * Reservations are atomic across every instance (a Redis Lua script in production) and keyed by
 * quoteId so a retry never reserves twice. Adapters: memory.ts (embedded default) and redis.ts
 * (production); both pass test/inventory/contract.ts.
 */
import type { InventoryRefusalCode, Refused } from "../src/refusal/codes.ts";

export type ReserveResult =
  | { ok: true }
  | Refused<
      typeof InventoryRefusalCode.INVENTORY_INSUFFICIENT | typeof InventoryRefusalCode.EXPOSURE_LIMIT_EXCEEDED
    >;

export interface Reservation {
  quoteId: string;
  /** The mint the maker pays out, and how much (smallest units, fee included: the maker owes it). */
  mint: string;
  amount: bigint;
  /** When an unsettled reservation lapses on its own (ms epoch), so a crash never strands inventory. */
  expiresAtMs: number;
  /**
   * The mint the maker receives and how much. Optional, but when given the inflow counts toward that
   * token's exposure limit while the fill is pending.
   */
  inputMint?: string;
  inputAmount?: bigint;
}

/** Why the inventory declines a trade at quote time: InventoryRefusalCode (src/refusal/codes.ts). */
export type CheckResult = { ok: true } | Refused<InventoryRefusalCode>;

/** A trade as the quote path sees it: what leaves the maker's wallet and what arrives. */
export interface TradeCheck {
  outMint: string;
  outAmount: bigint;
  inMint?: string;
  inAmount?: bigint;
}

/** One configured token as the maker holds it. */
export interface Holding {
  mint: string;
  symbol: string;
  /** The maker's associated token account for the mint (under the mint's token program). */
  ata: string;
  ataExists: boolean;
  /** Latest known balance (shared across instances), smallest units. */
  balance: bigint;
  /** Promised to claimed swaps and not yet settled. */
  reserved: bigint;
  /** Expected from claimed swaps and not yet settled. */
  incoming: bigint;
  /**
   * Why the token cannot be traded at all: mint missing, wrong token program, decimals differ from
   * the configuration, or a Token-2022 transfer fee (the order engine refuses those).
   */
  problem?: string;
}

export interface InventorySnapshot {
  maker: string;
  /** Native SOL of the maker (fees and rent); undefined before the first successful read. */
  lamports: bigint | undefined;
  /** When the balances in use were read (start of the read, ms epoch); undefined before any. */
  balancesAtMs: number | undefined;
  /** When this instance last read the chain successfully (holdings, ATAs, mints). */
  chainReadAtMs: number | undefined;
  holdings: Holding[];
}

export interface Inventory {
  /**
   * The quote-time check: freshness, SOL for fees, cover (available minus reserved minus the safety
   * buffer), and exposure limits on both legs.
   */
  check(trade: TradeCheck): CheckResult;
  /** Expected holding: balance - reserved + incoming (for inventory skew); undefined if unknown. */
  position(mint: string): bigint | undefined;
  snapshot(): InventorySnapshot;
  /** Called after a chain read or a shared-state sync that changed something; returns unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Takes a reservation for a claimed swap. Idempotent per quoteId. */
  reserve(reservation: Reservation): Promise<ReserveResult>;
  /** The fill failed or expired: the units are available again. */
  release(quoteId: string): Promise<void>;
  /** The fill landed: the units left the wallet (balances refresh from the chain). */
  commit(quoteId: string): Promise<void>;
  /**
   * Open reservations (after a restart: swaps whose outcome is still to be tracked), and committed
   * ones (the fill landed) that no balance read has settled yet.
   */
  reservations(): Promise<(Reservation & { state: "open" | "committed" })[]>;
  /** Re-reads balances from the chain now. */
  refresh(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

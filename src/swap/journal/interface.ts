/**
 * The swap executor's journal: fills sent but not yet settled (so a restarted process resumes tracking
 * them instead of stranding their inventory reservations), and the ledger of operator fees owed per
 * landed fill (docs/contract.md, "Fees": settled later off-chain).
 *
 * Adapters: memory.ts (one process; lost on restart, like the memory quote store) and redis.ts
 * (shared by every instance, survives restarts).
 */

/** A fill handed to the chain whose fate is not known yet. */
export interface PendingFill {
  quoteId: string;
  requestId: string;
  /** sha256 (hex) of the signed message. */
  messageHash: string;
  /** The transaction signature (base58): the maker's, slot 0. */
  signature: string;
  /**
   * The transaction's recent blockhash: once it expires the fill can no longer land, and is settled as
   * expired at once (absent in fills journaled before this field existed: they wait for trackUntilMs).
   */
  blockhash?: string;
  sentAtMs: number;
  /** Give up polling after this (ms epoch): the blockhash is long dead, the fill can no longer land. */
  trackUntilMs: number;
  /** What the maker owes the operator if this fill lands. */
  fee: { mint: string; amount: string; feeBps: number };
}

/** One line of the fee ledger: a landed fill and the operator fee it owes. */
export interface FeeOwed {
  quoteId: string;
  requestId: string;
  txSignature: string;
  /** Mint the fee is counted in (the quote's output mint), amount in its smallest units. */
  mint: string;
  amount: string;
  feeBps: number;
  landedAtMs: number;
}

export interface FillJournal {
  addPending(fill: PendingFill): Promise<void>;
  listPending(): Promise<PendingFill[]>;
  /**
   * Removes a pending fill. Returns true for exactly one caller across every instance sharing the
   * journal, so only one of them counts the outcome. When `fee` is given it is appended to the fee
   * ledger in the same atomic step (a crash cannot settle a fill and lose its fee line).
   */
  settle(quoteId: string, fee?: FeeOwed): Promise<boolean>;
  /** The fee ledger, oldest first (for settlement tooling and tests). */
  feesOwed(): Promise<FeeOwed[]>;
}

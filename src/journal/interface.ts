import type { TradeTerms } from "../ledger/markouts.ts";
import type { DecisionRecord, LedgerOutbox, LedgerRecord } from "../ledger/records.ts";

/**
 * The swap executor's journal: fills sent but not yet settled (so a restarted process resumes tracking
 * them instead of stranding their inventory reservations), and the ledger of operator fees owed per
 * landed fill (docs/contract.md, "Fees": settled later off-chain), and the ledger outbox: every /swap
 * decision and every settlement, waiting for the ledger writer (src/ledger/writer.ts) to drain them
 * into the database, so the database is never on the /swap path.
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
  /** The pair, the maker's side and the amounts traded (for markouts; absent in older entries). */
  trade?: TradeTerms;
  /**
   * The /swap decision this fill answers, as it is answered when the send succeeds (accepted, with
   * the signature). Journaled with the fill, before the send, so that a fill that lands always has its
   * acceptance in the ledger: the settlement of a landed fill carries it again (an idempotent upsert),
   * which covers a process killed after the send and before it could answer and journal the decision,
   * and an ambiguous send answered as a refusal whose transaction landed after all.
   */
  decision?: DecisionRecord;
  /**
   * A permissioned fill sent as a bundle with the maker's mint or burn (src/issuance/bundle.ts): the
   * bundle engine's id, polled beside the fill's signature so a dropped bundle settles at once.
   */
  bundleId?: string;
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

export interface FillJournal extends LedgerOutbox {
  addPending(fill: PendingFill): Promise<void>;
  listPending(): Promise<PendingFill[]>;
  /**
   * Removes a pending fill. Returns true for exactly one caller across every instance sharing the
   * journal, so only one of them counts the outcome. When `fee` is given it is appended to the fee
   * ledger in the same atomic step (a crash cannot settle a fill and lose its fee line); so are
   * `records` to the ledger outbox, in order.
   */
  settle(quoteId: string, fee?: FeeOwed, records?: readonly LedgerRecord[]): Promise<boolean>;
  /** The fee ledger, oldest first (for settlement tooling and tests). */
  feesOwed(): Promise<FeeOwed[]>;
}

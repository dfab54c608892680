/**
 * What the swap path hands the ledger, through the fill journal's outbox (src/journal/): one
 * `decision` record per `/swap` answer and one `settlement` record per sent fill the chain decided.
 * The ledger writer (writer.ts) drains them into the database; every write is an idempotent upsert
 * keyed by `decisionKey` or `txSignature`, so a record delivered twice (a retry, a restart between the
 * database commit and the acknowledgement) still makes one row.
 *
 * Amounts are decimal strings in smallest units (bigint on the wire, NUMERIC in the database).
 */
import type { Refusal } from "../refusal/codes.ts";

/**
 * The maker channel a row came through: the webhook (POST /swap) or RFQ v2 (a streamed-level swap the
 * maker co-signed, src/rfq-v2/). Absent on a record: the webhook (records journaled before channels).
 */
export type LedgerChannel = "webhook" | "rfq-v2";

/** The quote a decision answered, as stored when it was quoted. */
export interface LedgerQuote {
  inputMint: string;
  outputMint: string;
  amountIn: string;
  amountOut: string;
  quoteType: string;
  /** The taker named at quote time; absent for an indicative quote. */
  taker?: string;
  feeBps: number;
  createdAtMs: number;
  expiresAtMs: number;
}

export interface DecisionRecord {
  kind: "decision";
  /** Absent: the webhook. */
  channel?: LedgerChannel;
  /**
   * One row per key: the quoteId and the message hash of the transaction (or a hash of the raw bytes
   * when they did not decode). A retry of the same bytes is the same decision.
   */
  decisionKey: string;
  quoteId: string;
  requestId: string;
  /** The fill's taker (first signer of the transaction), else the quote's. */
  taker?: string;
  /** "BASE/QUOTE" as configured, and the maker's side: "sell" when the maker gives the base. */
  pair?: string;
  side?: "buy" | "sell";
  quote?: LedgerQuote;
  /** What the transaction moves (validated fills only). */
  filledAmountIn?: string;
  filledAmountOut?: string;
  feeBps?: number;
  feeMint?: string;
  feeOwed?: string;
  /** RFQ v2: the sequence number of the streamed level set the swap was judged against. */
  levelSequence?: string;
  decision: "accepted" | "rejected" | "rejectedWithReason";
  /** Why a rejected fill was refused: its code (the ledger's `code` column) and context (`reason`). */
  refusal?: Refusal;
  messageHash?: string;
  txSignature?: string;
  receivedAtMs: number;
  decidedAtMs: number;
}

export interface SettlementRecord {
  kind: "settlement";
  /** Absent: the webhook. */
  channel?: LedgerChannel;
  quoteId: string;
  requestId: string;
  messageHash: string;
  txSignature: string;
  outcome: "landed" | "failed" | "expired";
  slot?: string;
  detail?: string;
  feeMint: string;
  /** The fee owed when landed ("0" otherwise). */
  feeOwed: string;
  feeBps: number;
  sentAtMs: number;
  settledAtMs: number;
}

/** One markout sample of a landed fill (markouts.ts). */
export interface MarkoutRecord {
  kind: "markout";
  txSignature: string;
  quoteId: string;
  /** "0s", "5s", "60s", "300s". */
  horizon: string;
  horizonMs: number;
  pair: string;
  side: "buy" | "sell";
  taker?: string;
  /** The fill's price, quote per base (human units). */
  price: number;
  midAtFill?: number;
  mid: number;
  markoutBps: number;
  atMs: number;
}

export type LedgerRecord = DecisionRecord | SettlementRecord | MarkoutRecord;

/** One outbox entry: its id in the journal (to acknowledge it) and the record. */
export interface OutboxEntry {
  id: string;
  record: LedgerRecord;
}

/**
 * The ledger outbox as the ledger uses it: the journal that holds it (src/journal/) implements this, so
 * the ledger depends on no journal code. Markouts append; the writer takes, acknowledges and counts.
 */
export interface LedgerOutbox {
  /** Appends a record to the outbox. */
  appendLedger(record: LedgerRecord): Promise<void>;
  /**
   * Up to `max` outbox entries for `consumer` to write: first those it took before and did not
   * acknowledge, then those another consumer took and left unacknowledged for `staleMs`, then new
   * ones. Several instances may drain at once; an entry is handed out again only when unacknowledged.
   */
  takeLedger(consumer: string, max: number, staleMs: number): Promise<OutboxEntry[]>;
  /** Acknowledges (and drops) entries once the ledger holds them. */
  ackLedger(ids: string[]): Promise<void>;
  /** Entries not yet acknowledged (the writer's backlog). */
  ledgerBacklog(): Promise<number>;
}

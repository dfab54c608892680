/**
 * The fill ledger: every /swap decision and every sent fill's outcome, in PostgreSQL (or PGlite),
 * written by the ledger writer from the journal's outbox. Every write is an idempotent upsert:
 *
 *  - swap_decisions: one row per decision key (quoteId + message hash). A record delivered again
 *    changes nothing; a later decision for the same key (a retry after a failed pre-flight gave the
 *    quote back) replaces an earlier refusal; an acceptance is never replaced.
 *  - fills: one row per transaction signature (the chain lands a signature once; the journal's
 *    settle is exactly-once, the insert ignores a redelivery).
 * Every row carries the mode (paper, production) and the maker that wrote it (`LedgerStamp`), so that
 * one database never mixes the paper setup's books with the real ones unseen.
 * Decisions and fills also carry their channel: the webhook's (POST /swap) or RFQ v2's (src/rfq-v2/ledger.ts).
 */
import type { DecisionRecord, LedgerRecord, SettlementRecord } from "./records.ts";
import type { SqlClient, SqlQueries } from "./sql.ts";

const DECISION_COLUMNS = [
  "decision_key",
  "quote_id",
  "request_id",
  "taker",
  "pair",
  "side",
  "input_mint",
  "output_mint",
  "quote_type",
  "quote_taker",
  "quoted_amount_in",
  "quoted_amount_out",
  "quote_fee_bps",
  "quote_created_at_ms",
  "quote_expires_at_ms",
  "filled_amount_in",
  "filled_amount_out",
  "fee_bps",
  "fee_mint",
  "fee_owed",
  "decision",
  "reason",
  "code",
  "message_hash",
  "tx_signature",
  "received_at_ms",
  "decided_at_ms",
  "channel",
  "level_sequence",
  "mode",
  "maker",
] as const;

/** Who wrote a row: the service's mode and the maker's address. */
export interface LedgerStamp {
  mode: string;
  maker: string;
}

const UPSERT_DECISION = `
  INSERT INTO swap_decisions (${DECISION_COLUMNS.join(", ")})
  VALUES (${DECISION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ")})
  ON CONFLICT (decision_key) DO UPDATE SET
    ${DECISION_COLUMNS.slice(1)
      .map((c) => `${c} = EXCLUDED.${c}`)
      .join(",\n    ")}
  WHERE swap_decisions.decision <> 'accepted'
    AND (EXCLUDED.decision = 'accepted' OR EXCLUDED.decided_at_ms > swap_decisions.decided_at_ms)
`;

const INSERT_FILL = `
  INSERT INTO fills (tx_signature, decision_key, quote_id, request_id, message_hash, outcome, slot, detail,
                     fee_mint, fee_owed, fee_bps, sent_at_ms, settled_at_ms, channel, mode, maker)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
  ON CONFLICT (tx_signature) DO NOTHING
`;

const INSERT_MARKOUT = `
  INSERT INTO markouts (tx_signature, horizon, horizon_ms, quote_id, pair, side, taker, price, mid_at_fill, mid,
                        markout_bps, at_ms, mode, maker)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
  ON CONFLICT (tx_signature, horizon) DO NOTHING
`;

/** The decision key of a fill: its quote and the hash of the message the taker signed. */
export const decisionKey = (quoteId: string, messageHash: string): string => `${quoteId}:${messageHash}`;

function decisionParams(r: DecisionRecord): (string | number | undefined)[] {
  return [
    r.decisionKey,
    r.quoteId,
    r.requestId,
    r.taker,
    r.pair,
    r.side,
    r.quote?.inputMint,
    r.quote?.outputMint,
    r.quote?.quoteType,
    r.quote?.taker,
    r.quote?.amountIn,
    r.quote?.amountOut,
    r.quote?.feeBps,
    r.quote?.createdAtMs,
    r.quote?.expiresAtMs,
    r.filledAmountIn,
    r.filledAmountOut,
    r.feeBps,
    r.feeMint,
    r.feeOwed,
    r.decision,
    r.refusal?.context,
    r.refusal?.code,
    r.messageHash,
    r.txSignature,
    r.receivedAtMs,
    r.decidedAtMs,
    r.channel ?? "webhook",
    r.levelSequence,
  ];
}

function fillParams(r: SettlementRecord): (string | number | undefined)[] {
  return [
    r.txSignature,
    decisionKey(r.quoteId, r.messageHash),
    r.quoteId,
    r.requestId,
    r.messageHash,
    r.outcome,
    r.slot,
    r.detail,
    r.feeMint,
    r.feeOwed,
    r.feeBps,
    r.sentAtMs,
    r.settledAtMs,
    r.channel ?? "webhook",
  ];
}

export interface DecisionRow {
  decision_key: string;
  /** "webhook" or "rfq-v2" (LedgerChannel). */
  channel: string;
  quote_id: string;
  request_id: string;
  taker: string | null;
  pair: string | null;
  side: string | null;
  decision: string;
  /** The refusal's code (src/refusal/codes.ts); null for an acceptance. */
  code: string | null;
  /** The refusal's context. */
  reason: string | null;
  tx_signature: string | null;
  fee_mint: string | null;
  fee_owed: string | null;
  filled_amount_in: string | null;
  filled_amount_out: string | null;
  decided_at_ms: number;
  /** RFQ v2: the level set's sequence number. */
  level_sequence: string | null;
}

export interface FillRow {
  tx_signature: string;
  /** "webhook" or "rfq-v2" (LedgerChannel). */
  channel: string;
  quote_id: string;
  outcome: string;
  slot: string | null;
  fee_mint: string;
  fee_owed: string;
  settled_at_ms: number;
}

export class Ledger {
  constructor(readonly db: SqlClient) {}

  /** Writes records in one transaction (all or none), each an idempotent upsert, stamped with `stamp`. */
  async write(records: readonly LedgerRecord[], stamp?: LedgerStamp): Promise<void> {
    if (records.length === 0) return;
    const who = [stamp?.mode, stamp?.maker];
    await this.db.transaction(async (tx) => {
      // Durable when it returns, whatever the server's default: the writer removes these records from
      // the outbox next, and a server at synchronous_commit=off that crashes loses commits it answered.
      await tx.query("SET LOCAL synchronous_commit = on");
      for (const r of records) await writeOne(tx, r, who);
    });
  }

  /** Every decision, oldest first (tests and tooling). */
  decisions(): Promise<DecisionRow[]> {
    return this.db.query<DecisionRow>(
      `SELECT decision_key, channel, quote_id, request_id, taker, pair, side, decision, code, reason, tx_signature, fee_mint,
              fee_owed::text AS fee_owed, filled_amount_in::text AS filled_amount_in,
              filled_amount_out::text AS filled_amount_out, decided_at_ms::float8 AS decided_at_ms,
              level_sequence::text AS level_sequence
         FROM swap_decisions ORDER BY decided_at_ms, decision_key`,
    );
  }

  /** Every settled fill, oldest first. */
  fills(): Promise<FillRow[]> {
    return this.db.query<FillRow>(
      `SELECT tx_signature, channel, quote_id, outcome, slot::text AS slot, fee_mint, fee_owed::text AS fee_owed,
              settled_at_ms::float8 AS settled_at_ms
         FROM fills ORDER BY settled_at_ms, tx_signature`,
    );
  }
}

async function writeOne(tx: SqlQueries, r: LedgerRecord, who: (string | undefined)[]): Promise<void> {
  if (r.kind === "decision") await tx.query(UPSERT_DECISION, [...decisionParams(r), ...who]);
  else if (r.kind === "settlement") await tx.query(INSERT_FILL, [...fillParams(r), ...who]);
  else {
    await tx.query(INSERT_MARKOUT, [
      r.txSignature,
      r.horizon,
      r.horizonMs,
      r.quoteId,
      r.pair,
      r.side,
      r.taker,
      r.price,
      r.midAtFill,
      r.mid,
      r.markoutBps,
      r.atMs,
      ...who,
    ]);
  }
}

/**
 * RFQ v2 swaps in the fill ledger, through the same outbox as the webhook's (the fill journal's,
 * drained by the ledger writer): one `decision` row per offered swap (channel "rfq-v2"), signed or
 * refused with its code, and one `settlement` row (a fill) when the operator confirms it landed
 * (TRANSACTION_CONFIRMED), with the decided swap's pair, side, amounts, taker and level-set sequence.
 *
 * The key is the webhook's: `decisionKey(quoteId, messageHash)`, quoteId `v2:<swap uuid>` (the
 * inventory reservation's id too) and the sha256 of the offered message. A SWAP_AVAILABLE delivered
 * again is refused V2_DUPLICATE_SWAP by the service and written nothing here (its first decision
 * stands); after a restart the same bytes are judged again and upsert the same row. A signed
 * swap's decision is in the outbox before the signed transaction is handed back, so a crash after the
 * co-signature cannot lose it; the operator's confirmation carries it again (an idempotent upsert),
 * and a confirmation after a restart finds the signed decision in the ledger (`lookup`).
 *
 * RFQ v2 publishes no maker fee: a v2 fill owes 0, counted in the mint the maker pays out.
 */
import { createHash } from "node:crypto";
import type { VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { fillMessageHash } from "../fill/validate.ts";
import { decisionKey } from "../ledger/ledger.ts";
import type { TradeTerms } from "../ledger/markouts.ts";
import type { DecisionRecord, LedgerOutbox, LedgerRecord, SettlementRecord } from "../ledger/records.ts";
import type { SqlQueries } from "../ledger/sql.ts";
import { bounded } from "../lib/bounded.ts";
import type { Logger } from "../observability/logger.ts";
import type { Refusal } from "../refusal/codes.ts";
import { V2RejectCode } from "../refusal/codes.ts";
import type { V2Verdict } from "./swap-checks.ts";

export type V2Judged = Extract<V2Verdict, { ok: true }>;

/** One offered swap as the service saw it: what it could read of it. */
export interface V2Offered {
  swapUuid: string;
  /** The SWAP_AVAILABLE's unsigned_transaction, as received. */
  base64: string;
  receivedAtMs: number;
  /** Decoded (absent when the bytes could not be read). */
  tx?: VersionedTransaction;
  /** The checks' verdict when they passed (a refusal after them, e.g. the inventory, keeps the terms). */
  verdict?: V2Judged;
}

/** What the RFQ v2 service tells the ledger at each decision point. */
export interface V2SwapRecorder {
  /** A swap let pass unsigned with its code (not awaited: the answer is silence anyway). */
  refused(offer: V2Offered, refusal: Refusal): void;
  /** A co-signed swap, in the outbox (bounded wait) before the signed transaction goes back. */
  signed(offer: V2Offered & { tx: VersionedTransaction; verdict: V2Judged }): Promise<void>;
  /** The operator's TRANSACTION_CONFIRMED: the fill row of a swap signed here. */
  confirmed(swapUuid: string, signature: string): Promise<void>;
}

export interface V2LedgerOptions {
  journal: LedgerOutbox;
  log: Logger;
  now?: () => number;
  /** A landed v2 fill's trade, for its markouts (src/ledger/markouts.ts), from its landing. */
  onLanded?: (txSignature: string, quoteId: string, trade: TradeTerms, landedAtMs: number) => void;
  /** How long a signed swap's decision may take to reach the outbox before the swap is answered anyway, ms. */
  appendTimeoutMs?: number;
  /** Signed swaps remembered until their confirmation (the oldest forgotten past it). */
  remember?: number;
  /**
   * A signed swap this process does not remember (signed before a restart), from the ledger
   * (`decidedInLedger`): its confirmation still writes its fill.
   */
  lookup?: (quoteId: string) => Promise<V2Decided | undefined>;
}

/** What a confirmation needs of the signed swap's decision. */
export interface V2Decided {
  quoteId: string;
  requestId: string;
  messageHash: string;
  feeMint: string;
  decidedAtMs: number;
  txSignature?: string;
  trade: TradeTerms;
}

/** The accepted rfq-v2 decision of `quoteId` in the ledger, if it is there. */
export async function decidedInLedger(db: SqlQueries, quoteId: string): Promise<V2Decided | undefined> {
  const rows = await db.query<{
    quote_id: string;
    request_id: string;
    message_hash: string;
    fee_mint: string;
    decided_at_ms: number;
    tx_signature: string | null;
    pair: string;
    side: "buy" | "sell";
    taker: string | null;
    amount_in: string;
    amount_out: string;
  }>(
    `SELECT quote_id, request_id, message_hash, fee_mint, decided_at_ms::float8 AS decided_at_ms, tx_signature,
            pair, side, taker, filled_amount_in::text AS amount_in, filled_amount_out::text AS amount_out
       FROM swap_decisions
      WHERE quote_id = $1 AND channel = 'rfq-v2' AND decision = 'accepted'
        AND message_hash IS NOT NULL AND fee_mint IS NOT NULL AND pair IS NOT NULL AND side IS NOT NULL
        AND filled_amount_in IS NOT NULL AND filled_amount_out IS NOT NULL
      ORDER BY decided_at_ms DESC LIMIT 1`,
    [quoteId],
  );
  const r = rows[0];
  if (!r) return undefined;
  const sells = r.side === "sell";
  return {
    quoteId: r.quote_id,
    requestId: r.request_id,
    messageHash: r.message_hash,
    feeMint: r.fee_mint,
    decidedAtMs: Number(r.decided_at_ms),
    ...(r.tx_signature ? { txSignature: r.tx_signature } : {}),
    trade: {
      pair: r.pair,
      side: r.side,
      ...(r.taker ? { taker: r.taker } : {}),
      baseAmount: sells ? r.amount_out : r.amount_in,
      quoteAmount: sells ? r.amount_in : r.amount_out,
    },
  };
}

const v2QuoteId = (swapUuid: string): string => `v2:${swapUuid}`;

/** The message hash of an offered swap: of its message when it decoded, else of the raw text. */
function offeredHash(offer: Pick<V2Offered, "base64" | "tx">): string {
  return offer.tx ? fillMessageHash(offer.tx) : createHash("sha256").update(offer.base64).digest("hex");
}

/** The trade a judged swap makes, from the maker's side: "sell" when it pays out the base (a taker Bid). */
function v2Trade(v: V2Judged): TradeTerms & { inputMint: string; outputMint: string } {
  const makerSells = v.leg.takerSide === "bid";
  return {
    pair: v.pair.pairKey,
    side: makerSells ? "sell" : "buy",
    taker: v.leg.taker.toBase58(),
    inputMint: makerSells ? v.pair.quote.mint : v.pair.base.mint,
    outputMint: makerSells ? v.pair.base.mint : v.pair.quote.mint,
    baseAmount: (makerSells ? v.amountOut : v.amountIn).toString(),
    quoteAmount: (makerSells ? v.amountIn : v.amountOut).toString(),
  };
}

export class V2SwapLedger implements V2SwapRecorder {
  private readonly now: () => number;
  private readonly limit: number;
  /** Signed swaps awaiting the operator's confirmation, by uuid. */
  private readonly awaiting = new Map<string, { decision: DecisionRecord; decided: V2Decided }>();

  constructor(private readonly opts: V2LedgerOptions) {
    this.now = opts.now ?? Date.now;
    this.limit = opts.remember ?? 10_000;
  }

  refused(offer: V2Offered, refusal: Refusal): void {
    // A redelivery of a swap id already decided: not a decision of its own.
    if (refusal.code === V2RejectCode.V2_DUPLICATE_SWAP) return;
    const record = this.decision(offer, refusal);
    void this.opts.journal.appendLedger(record).catch((err: unknown) => {
      this.opts.log.warn(
        { err, swapUuid: offer.swapUuid, code: refusal.code },
        "ledger outbox append failed: this v2 refusal is missing from the ledger",
      );
    });
  }

  async signed(offer: V2Offered & { tx: VersionedTransaction; verdict: V2Judged }): Promise<void> {
    const record = this.decision(offer);
    this.awaiting.set(offer.swapUuid, {
      decision: record,
      decided: {
        quoteId: record.quoteId,
        requestId: record.requestId,
        messageHash: record.messageHash as string,
        feeMint: record.feeMint as string,
        decidedAtMs: record.decidedAtMs,
        ...(record.txSignature ? { txSignature: record.txSignature } : {}),
        trade: v2Trade(offer.verdict),
      },
    });
    trim(this.awaiting, this.limit);
    const res = await bounded(
      () => this.opts.journal.appendLedger(record),
      this.opts.appendTimeoutMs ?? 1_000,
    );
    if (!res.ok) {
      // Signed anyway (the reservation holds the inventory); the confirmation carries the decision again.
      this.opts.log.warn(
        { error: res.error, swapUuid: offer.swapUuid },
        "ledger outbox append failed: this v2 swap's decision is written with its confirmation only",
      );
    }
  }

  async confirmed(swapUuid: string, signature: string): Promise<void> {
    const log = this.opts.log;
    const known = this.awaiting.get(swapUuid);
    this.awaiting.delete(swapUuid);
    const decided =
      known?.decided ??
      (await this.opts.lookup?.(v2QuoteId(swapUuid)).catch((err: unknown) => {
        log.warn({ err, swapUuid }, "rfq v2: could not read the swap's decision from the ledger");
        return undefined;
      }));
    if (!decided) {
      log.warn(
        { swapUuid, signature },
        "rfq v2: a confirmation for a swap with no signed decision here or in the ledger: no fill row",
      );
      return;
    }
    const { trade } = decided;
    if (decided.txSignature !== signature)
      log.warn(
        { swapUuid, signature, expected: decided.txSignature },
        "rfq v2: the confirmed signature is not the offered transaction's: recorded as the operator reports it",
      );
    const landedAtMs = this.now();
    const fill: SettlementRecord = {
      kind: "settlement",
      channel: "rfq-v2",
      quoteId: decided.quoteId,
      requestId: decided.requestId,
      messageHash: decided.messageHash,
      txSignature: signature,
      outcome: "landed",
      feeMint: decided.feeMint,
      feeOwed: "0",
      feeBps: 0,
      sentAtMs: decided.decidedAtMs,
      settledAtMs: landedAtMs,
    };
    // The decision again when this process made it (an upsert that changes nothing when it is there).
    const records: LedgerRecord[] = known ? [{ ...known.decision, txSignature: signature }, fill] : [fill];
    for (const r of records) {
      await this.opts.journal.appendLedger(r).catch((err: unknown) => {
        log.warn({ err, swapUuid, kind: r.kind }, "ledger outbox append failed: this v2 record is missing");
      });
    }
    this.opts.onLanded?.(signature, decided.quoteId, trade, landedAtMs);
  }

  private decision(offer: V2Offered, refusal?: Refusal): DecisionRecord {
    const messageHash = offeredHash(offer);
    const quoteId = v2QuoteId(offer.swapUuid);
    const key = decisionKey(quoteId, messageHash);
    const v = offer.verdict;
    const trade = v ? v2Trade(v) : undefined;
    const first = offer.tx?.signatures[0];
    // The taker signs before the maker sees it: its signature (slot 0) is the transaction's id.
    const txSignature = first?.some((b) => b !== 0) ? bs58.encode(first) : undefined;
    return {
      kind: "decision",
      channel: "rfq-v2",
      decisionKey: key,
      quoteId,
      requestId: offer.swapUuid,
      ...(trade && v
        ? {
            taker: trade.taker as string,
            pair: trade.pair,
            side: trade.side,
            // What the streamed set quotes for this input (the program's walk of its levels).
            quote: {
              inputMint: trade.inputMint,
              outputMint: trade.outputMint,
              amountIn: v.amountIn.toString(),
              amountOut: v.amountOut.toString(),
              quoteType: "rfqV2Levels",
              feeBps: 0,
              createdAtMs: v.set.sentAtMs,
              expiresAtMs: v.set.validUntilMs,
            },
            filledAmountIn: v.amountIn.toString(),
            filledAmountOut: v.amountOut.toString(),
            feeBps: 0,
            feeMint: trade.outputMint,
            feeOwed: "0",
            levelSequence: v.set.sequence.toString(),
          }
        : {}),
      decision: refusal ? "rejected" : "accepted",
      ...(refusal ? { refusal } : {}),
      messageHash,
      ...(!refusal && txSignature ? { txSignature } : {}),
      receivedAtMs: offer.receivedAtMs,
      decidedAtMs: this.now(),
    };
  }
}

/** Drops the oldest entries past `limit` (insertion order). */
function trim(c: Map<string, unknown>, limit: number): void {
  while (c.size > limit) {
    const oldest = c.keys().next().value;
    if (oldest === undefined) return;
    c.delete(oldest);
  }
}

/**
 * Markouts: for each landed fill, the pair's mid from its price source at fill time and at +5 s,
 * +60 s and +5 min, and the fill's markout at each horizon in basis points from the maker's side:
 *
 *   maker sold base at price p (quote per base, from the filled amounts):  (p - mid) / mid x 10,000
 *   maker bought base at price p:                                          (mid - p) / mid x 10,000
 *
 * Positive: the trade is worth more to the maker at the later mid than what it paid or got (spread
 * kept); negative: the price moved against it (the taker knew). Each sample is observed on
 * `rfq_markout_bps{horizon,pair}` (no taker label: one series per taker would be unbounded) and
 * journaled to the ledger outbox as a `markout` record, one row per fill and horizon in the ledger,
 * where per-taker and per-pair averages are queried (report.ts).
 *
 * Horizons are measured from the fill's landing, not from when this process learnt of it: a fill
 * settled late (by a process restarted meanwhile) takes, for each horizon already past, the mid this
 * process saw at that time (its price history, sampled every `sampleMs`). A horizon with no mid at its
 * due time (a process restarted across it, a price source between two answers) takes the first live
 * mid seen up to two samples after it, as the history takes one up to two samples before; past that
 * it is left out rather than given a later mid. At start, `resume` reads the ledger's landed fills
 * whose horizons are not all in it and takes the ones still to come.
 *
 * A markout the outbox cannot take (Redis down: "Stream isn't writeable ...") is kept in memory, in
 * order, and appended when the outbox answers again (retried every `retryMs`), at most
 * `MAX_PENDING_MARKOUTS` of them (beyond that the oldest is dropped and counted): what waits is
 * `rfq_markouts_pending`, what was dropped `rfq_markouts_dropped_total`. Kept in this process only: a
 * restart during the outage loses what was kept (resume then takes what it can, as above).
 *
 * Toxic-flow flagging (src/toxicity/) is decided here too: once a taker's 60 s markout is in the
 * outbox, the tracker hands it to the flagger, which averages it with the taker's previous 60 s
 * markouts read from the ledger (`recentTakerMarkouts`) and flags the taker when the average is bad.
 */
import type { Config } from "../../config/load.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { LedgerOutbox, MarkoutRecord } from "./records.ts";
import type { SqlQueries } from "./sql.ts";

export interface MarkoutHorizon {
  /** The label on the metric and in the ledger, e.g. "60s". */
  label: string;
  /** Delay after the fill landed, ms (0: at fill time). */
  ms: number;
}

export const MARKOUT_HORIZONS: readonly MarkoutHorizon[] = [
  { label: "0s", ms: 0 },
  { label: "5s", ms: 5_000 },
  { label: "60s", ms: 60_000 },
  { label: "300s", ms: 300_000 },
];

/** What a landed fill traded, as the executor journaled it. */
export interface TradeTerms {
  pair: string;
  side: "buy" | "sell";
  taker?: string;
  /** Base and quote that changed hands, smallest units (decimal strings). */
  baseAmount: string;
  quoteAmount: string;
  /**
   * The pair's mid as the sending process saw it when it journaled the fill: the fill's 0 s mid when
   * the process that settles it started after the fill was sent (absent: the sender had no price).
   */
  midAtSend?: number;
}

/** One markout sample, as handed to the flagger once it is in the ledger outbox. */
export interface MarkoutSample {
  txSignature: string;
  quoteId: string;
  taker: string;
  pair: string;
  horizon: string;
  markoutBps: number;
}

/** Judges a taker on its markouts (src/toxicity/flagger.ts). */
export interface MarkoutJudge {
  judge(sample: MarkoutSample): Promise<void>;
}

/** The horizon toxic-flow flagging is judged on. */
export const FLAG_HORIZON = "60s";

/**
 * A taker's most recent markouts at `horizon` in the ledger, newest first, at most `limit`, leaving out
 * the fill `exceptTx` (the one being judged, which may still be in the outbox).
 */
export async function recentTakerMarkouts(
  db: SqlQueries,
  taker: string,
  horizon: string,
  limit: number,
  exceptTx: string,
): Promise<number[]> {
  if (limit <= 0) return [];
  const rows = await db.query<{ markout_bps: number }>(
    `SELECT markout_bps FROM markouts
      WHERE taker = $1 AND horizon = $2 AND tx_signature <> $3
      ORDER BY at_ms DESC LIMIT $4`,
    [taker, horizon, exceptTx, limit],
  );
  return rows.map((r) => Number(r.markout_bps));
}

export interface MarkoutTrackerOptions {
  config: Config;
  priceSources: ReadonlyMap<string, PriceSource>;
  journal: LedgerOutbox;
  metrics: Metrics;
  log: Logger;
  horizons?: readonly MarkoutHorizon[];
  now?: () => number;
  /** The toxic-flow flagger, given every `FLAG_HORIZON` sample of a known taker (toxicity enabled). */
  judge?: MarkoutJudge;
  /** How often each pair's mid is kept for horizons that come due unseen (ms, 1,000). */
  sampleMs?: number;
  /** How often markouts kept during an outbox outage are tried again (ms, 250). */
  retryMs?: number;
}

/**
 * Markouts kept while the outbox is down: at four horizons a fill, 10,000 are 2,500 fills' worth (a
 * long Redis outage at a busy maker's fill rate) in a few MB; the oldest goes first past it.
 */
export const MAX_PENDING_MARKOUTS = 10_000;

/** A landed fill's horizons already in the ledger, and its mid at landing when known. */
export interface TakenHorizons {
  horizons: ReadonlySet<string>;
  midAtFill?: number;
}

/** Each pair's mid as this process saw it, every `sampleMs`, for as long as the longest horizon. */
class MidHistory {
  private readonly points = new Map<string, { atMs: number; mid: number }[]>();

  constructor(
    private readonly keepMs: number,
    private readonly sampleMs: number,
  ) {}

  record(pair: string, atMs: number, mid: number): void {
    const list = this.points.get(pair) ?? [];
    this.points.set(pair, list);
    list.push({ atMs, mid });
    while (list.length > 1 && (list[0] as { atMs: number }).atMs < atMs - this.keepMs) list.shift();
  }

  /** The mid seen last at or before `atMs`, if one was seen within two samples before it. */
  at(pair: string, atMs: number): number | undefined {
    const list = this.points.get(pair) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const p = list[i] as { atMs: number; mid: number };
      if (p.atMs <= atMs) return atMs - p.atMs <= 2 * this.sampleMs ? p.mid : undefined;
    }
    return undefined;
  }
}

const ratioToNumber = (r: { num: bigint; den: bigint }) => Number(r.num) / Number(r.den);

/** The markout in bps of a trade at `price` against `mid`, from the maker's side. */
export function markoutBps(side: "buy" | "sell", price: number, mid: number): number {
  return ((side === "sell" ? price - mid : mid - price) / mid) * 10_000;
}

export class MarkoutTracker {
  private readonly horizons: readonly MarkoutHorizon[];
  private readonly now: () => number;
  private readonly sampleMs: number;
  private readonly history: MidHistory;
  private readonly timers = new Set<NodeJS.Timeout>();
  private sampler: NodeJS.Timeout | undefined;
  /** Samples still being appended to the outbox (and judged). */
  private readonly working = new Set<Promise<void>>();
  /** Markouts the outbox could not take yet, oldest first, with the sample to judge once appended. */
  private readonly pending: { record: MarkoutRecord; judged?: MarkoutSample }[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private flushing = false;
  private droppedSome = false;
  private readonly retryMs: number;
  /** How long after a horizon's due time its first live mid is still its mid: two samples, as before it. */
  private readonly lateMs: number;
  /** How often a horizon with no mid yet asks its price source again. */
  private readonly pollMs: number;

  constructor(private readonly opts: MarkoutTrackerOptions) {
    this.horizons = opts.horizons ?? MARKOUT_HORIZONS;
    this.now = opts.now ?? Date.now;
    this.sampleMs = opts.sampleMs ?? 1_000;
    this.lateMs = 2 * this.sampleMs;
    this.pollMs = Math.min(100, this.sampleMs);
    this.retryMs = opts.retryMs ?? 250;
    const longest = Math.max(0, ...this.horizons.map((h) => h.ms));
    this.history = new MidHistory(longest + 4 * this.sampleMs, this.sampleMs);
  }

  /** Starts keeping each pair's mid (horizons that come due unseen take theirs from it). */
  start(): void {
    this.sampleMids();
    this.sampler ??= setInterval(() => this.sampleMids(), this.sampleMs);
    this.sampler.unref();
  }

  private sampleMids(): void {
    const at = this.now();
    for (const p of this.opts.config.file.pairs) {
      const pair = `${p.base}/${p.quote}`;
      const mid = this.liveMid(pair);
      if (mid !== undefined) this.history.record(pair, at, mid);
    }
  }

  /** The pair's mid from its price source now (journaled with each fill sent: `TradeTerms.midAtSend`). */
  liveMid(pair: string): number | undefined {
    const p = this.opts.config.file.pairs.find((x) => `${x.base}/${x.quote}` === pair);
    const point = p ? this.opts.priceSources.get(p.priceSource)?.price(pair) : undefined;
    const mid = point ? ratioToNumber(point.mid) : undefined;
    return mid !== undefined && mid > 0 ? mid : undefined;
  }

  /** The pair's mid at `atMs`: the live one within a sample of now, else this process's history. */
  private midAt(pair: string, atMs: number): number | undefined {
    if (this.now() - atMs <= this.sampleMs) return this.liveMid(pair);
    return this.history.at(pair, atMs);
  }

  /**
   * Samples a landed fill's markouts from `landedAtMs` (default now): each horizon still to come on
   * its timer, each one already past at the mid of its time. `taken`: horizons already in the ledger.
   */
  onLanded(
    txSignature: string,
    quoteId: string,
    trade: TradeTerms,
    landedAtMs: number = this.now(),
    taken?: TakenHorizons,
  ): void {
    const pair = this.opts.config.file.pairs.find((p) => `${p.base}/${p.quote}` === trade.pair);
    const base = this.opts.config.tokensBySymbol.get(pair?.base ?? "");
    const quote = this.opts.config.tokensBySymbol.get(pair?.quote ?? "");
    const source = pair ? this.opts.priceSources.get(pair.priceSource) : undefined;
    if (!pair || !base || !quote || !source) return;
    const baseUnits = Number(trade.baseAmount) / 10 ** base.decimals;
    const quoteUnits = Number(trade.quoteAmount) / 10 ** quote.decimals;
    if (!(baseUnits > 0)) return;
    const price = quoteUnits / baseUnits;
    const midAtFill = taken?.midAtFill ?? this.midAt(trade.pair, landedAtMs) ?? trade.midAtSend;
    const missed: string[] = [];
    for (const h of this.horizons) {
      if (taken?.horizons.has(h.label)) continue;
      const dueMs = landedAtMs + h.ms;
      const sample = (mid: number) => {
        const bps = markoutBps(trade.side, price, mid);
        this.opts.metrics.markout.observe({ horizon: h.label, pair: trade.pair }, bps);
        const record: MarkoutRecord = {
          kind: "markout",
          txSignature,
          quoteId,
          horizon: h.label,
          horizonMs: h.ms,
          pair: trade.pair,
          side: trade.side,
          ...(trade.taker ? { taker: trade.taker } : {}),
          price,
          ...(midAtFill !== undefined ? { midAtFill } : {}),
          mid,
          markoutBps: bps,
          atMs: dueMs,
        };
        const taker = trade.taker;
        const judged =
          this.opts.judge && taker && h.label === FLAG_HORIZON
            ? { txSignature, quoteId, taker, pair: trade.pair, horizon: h.label, markoutBps: bps }
            : undefined;
        this.append(record, judged);
      };
      const delay = dueMs - this.now();
      const leftOut = () => this.leftOut(txSignature, quoteId, [h.label]);
      if (delay <= 0) {
        // The 0 s mid is the mid at fill, whichever process saw it.
        const mid = h.ms === 0 ? midAtFill : this.midAt(trade.pair, dueMs);
        if (mid !== undefined) sample(mid);
        else if (h.ms > 0 && this.now() - dueMs <= this.lateMs)
          this.firstMidAfter(trade.pair, dueMs, sample, leftOut);
        else missed.push(h.label);
      } else {
        this.after(delay, () => this.firstMidAfter(trade.pair, dueMs, sample, leftOut));
      }
    }
    if (missed.length) this.leftOut(txSignature, quoteId, missed);
  }

  private leftOut(txSignature: string, quoteId: string, horizons: string[]): void {
    this.opts.log.info(
      { txSignature, quoteId, horizons },
      "markouts: horizons past before this process saw a price are left out",
    );
  }

  /** Runs `fn` in `ms`, on a timer `close` clears. */
  private after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  /**
   * Samples the pair's live mid now, or the first one seen up to `lateMs` after `dueMs` (a process
   * just restarted, a price source between two answers), asking every `pollMs`; past it, `missing`.
   */
  private firstMidAfter(
    pair: string,
    dueMs: number,
    sample: (mid: number) => void,
    missing: () => void,
  ): void {
    const mid = this.liveMid(pair);
    if (mid !== undefined) sample(mid);
    else if (this.now() - dueMs + this.pollMs > this.lateMs) missing();
    else this.after(this.pollMs, () => this.firstMidAfter(pair, dueMs, sample, missing));
  }

  /** Appends one markout to the outbox, or keeps it (behind any already kept) until the outbox answers. */
  private append(record: MarkoutRecord, judged?: MarkoutSample): void {
    if (this.pending.length > 0) {
      this.keep(record, judged);
      return;
    }
    const work = this.opts.journal
      .appendLedger(record)
      .then(
        () => this.judge(judged),
        (err: unknown) => {
          if (this.pending.length === 0)
            this.opts.log.warn(
              { err, txSignature: record.txSignature },
              "ledger outbox append failed: markouts are kept and appended once it answers again",
            );
          this.keep(record, judged);
        },
      )
      .finally(() => this.working.delete(work));
    this.working.add(work);
  }

  private async judge(sample: MarkoutSample | undefined): Promise<void> {
    if (!sample || !this.opts.judge) return;
    await this.opts.judge.judge(sample).catch((err: unknown) => {
      this.opts.log.warn(
        { err, taker: sample.taker, quoteId: sample.quoteId },
        "toxicity: could not judge a taker's markouts",
      );
    });
  }

  private keep(record: MarkoutRecord, judged?: MarkoutSample): void {
    this.pending.push(judged ? { record, judged } : { record });
    if (this.pending.length > MAX_PENDING_MARKOUTS) {
      const dropped = this.pending.shift();
      this.opts.metrics.markoutsDropped.inc();
      // One line per outage, not one per markout dropped.
      if (!this.droppedSome)
        this.opts.log.warn(
          {
            txSignature: dropped?.record.txSignature,
            horizon: dropped?.record.horizon,
            kept: MAX_PENDING_MARKOUTS,
          },
          "markouts: too many kept while the outbox is down, the oldest are dropped",
        );
      this.droppedSome = true;
    }
    this.opts.metrics.markoutsPending.set(this.pending.length);
    this.retryLater();
  }

  private retryLater(): void {
    if (this.retryTimer || this.flushing) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      const work = this.flush().finally(() => this.working.delete(work));
      this.working.add(work);
    }, this.retryMs);
    this.retryTimer.unref();
  }

  /** Appends the kept markouts in order; stops at the first failure and tries again later. */
  private async flush(): Promise<void> {
    this.flushing = true;
    let written = 0;
    try {
      for (;;) {
        const head = this.pending[0];
        if (!head) break;
        try {
          await this.opts.journal.appendLedger(head.record);
        } catch {
          return;
        }
        this.pending.shift();
        written++;
        this.opts.metrics.markoutsPending.set(this.pending.length);
        await this.judge(head.judged);
      }
    } finally {
      this.flushing = false;
      if (this.pending.length > 0) this.retryLater();
      else {
        this.droppedSome = false;
        if (written > 0) this.opts.log.info({ written }, "markouts kept during the outage appended");
      }
    }
  }

  /** Markouts kept while the outbox is down (tests). */
  get kept(): number {
    return this.pending.length;
  }

  /**
   * Takes up, from the ledger, the landed fills whose horizons are not all in it (this process
   * restarted while they were being sampled). Fills sent longer ago than the longest horizon are done.
   */
  async resume(db: SqlQueries): Promise<number> {
    const longest = Math.max(0, ...this.horizons.map((h) => h.ms));
    const since = this.now() - longest - 4 * this.sampleMs;
    const fills = await db.query<{
      tx_signature: string;
      quote_id: string;
      sent_at_ms: string | number;
      pair: string;
      side: "buy" | "sell";
      taker: string | null;
      quoted_amount_in: string;
      quoted_amount_out: string;
    }>(
      `SELECT f.tx_signature, f.quote_id, f.sent_at_ms, d.pair, d.side, d.taker,
              d.quoted_amount_in::text AS quoted_amount_in, d.quoted_amount_out::text AS quoted_amount_out
         FROM fills f JOIN swap_decisions d ON d.decision_key = f.decision_key
        WHERE f.outcome = 'landed' AND f.sent_at_ms >= $1
          AND d.pair IS NOT NULL AND d.side IS NOT NULL
          AND d.quoted_amount_in IS NOT NULL AND d.quoted_amount_out IS NOT NULL`,
      [since],
    );
    if (!fills.length) return 0;
    const rows = await db.query<{ tx_signature: string; horizon: string; mid_at_fill: number | null }>(
      "SELECT tx_signature, horizon, mid_at_fill FROM markouts WHERE at_ms >= $1",
      [since],
    );
    const taken = new Map<string, { horizons: Set<string>; midAtFill?: number }>();
    for (const r of rows) {
      const t = taken.get(r.tx_signature) ?? { horizons: new Set<string>() };
      t.horizons.add(r.horizon);
      if (r.mid_at_fill !== null) t.midAtFill = Number(r.mid_at_fill);
      taken.set(r.tx_signature, t);
    }
    let resumed = 0;
    for (const f of fills) {
      const t = taken.get(f.tx_signature);
      if (t && this.horizons.every((h) => t.horizons.has(h.label))) continue;
      const trade: TradeTerms = {
        pair: f.pair,
        side: f.side,
        ...(f.taker ? { taker: f.taker } : {}),
        baseAmount: f.side === "sell" ? f.quoted_amount_out : f.quoted_amount_in,
        quoteAmount: f.side === "sell" ? f.quoted_amount_in : f.quoted_amount_out,
      };
      this.onLanded(f.tx_signature, f.quote_id, trade, Number(f.sent_at_ms), t);
      resumed++;
    }
    return resumed;
  }

  /** Horizons not sampled yet (tests, shutdown). */
  get scheduled(): number {
    return this.timers.size;
  }

  /** Resolves once every sample taken so far is in the outbox and judged (tests). */
  async idle(): Promise<void> {
    while (this.working.size > 0) await Promise.all([...this.working]);
  }

  close(): void {
    if (this.sampler) clearInterval(this.sampler);
    this.sampler = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }
}

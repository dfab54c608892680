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
 * where per-taker and per-pair averages are queried (report.ts). Samples are timers in this process:
 * a restart loses the horizons still to come for fills landed before it.
 *
 * Toxic-flow flagging (src/toxicity/) is decided here too: once a taker's 60 s markout is in the
 * outbox, the tracker hands it to the flagger, which averages it with the taker's previous 60 s
 * markouts read from the ledger (`recentTakerMarkouts`) and flags the taker when the average is bad.
 */
import type { Config } from "../../config/load.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { FillJournal } from "../swap/journal/interface.ts";
import type { MarkoutRecord } from "./records.ts";
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
  journal: FillJournal;
  metrics: Metrics;
  log: Logger;
  horizons?: readonly MarkoutHorizon[];
  now?: () => number;
  /** The toxic-flow flagger, given every `FLAG_HORIZON` sample of a known taker (toxicity enabled). */
  judge?: MarkoutJudge;
}

const ratioToNumber = (r: { num: bigint; den: bigint }) => Number(r.num) / Number(r.den);

/** The markout in bps of a trade at `price` against `mid`, from the maker's side. */
export function markoutBps(side: "buy" | "sell", price: number, mid: number): number {
  return ((side === "sell" ? price - mid : mid - price) / mid) * 10_000;
}

export class MarkoutTracker {
  private readonly horizons: readonly MarkoutHorizon[];
  private readonly now: () => number;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Samples still being appended to the outbox (and judged). */
  private readonly working = new Set<Promise<void>>();

  constructor(private readonly opts: MarkoutTrackerOptions) {
    this.horizons = opts.horizons ?? MARKOUT_HORIZONS;
    this.now = opts.now ?? Date.now;
  }

  /** Starts sampling a landed fill's markouts. */
  onLanded(txSignature: string, quoteId: string, trade: TradeTerms): void {
    const pair = this.opts.config.file.pairs.find((p) => `${p.base}/${p.quote}` === trade.pair);
    const base = this.opts.config.tokensBySymbol.get(pair?.base ?? "");
    const quote = this.opts.config.tokensBySymbol.get(pair?.quote ?? "");
    const source = pair ? this.opts.priceSources.get(pair.priceSource) : undefined;
    if (!pair || !base || !quote || !source) return;
    const baseUnits = Number(trade.baseAmount) / 10 ** base.decimals;
    const quoteUnits = Number(trade.quoteAmount) / 10 ** quote.decimals;
    if (!(baseUnits > 0)) return;
    const price = quoteUnits / baseUnits;
    let midAtFill: number | undefined;
    for (const h of this.horizons) {
      const sample = () => {
        const point = source.price(trade.pair);
        if (!point) return;
        const mid = ratioToNumber(point.mid);
        if (!(mid > 0)) return;
        if (h.ms === 0) midAtFill = mid;
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
          atMs: this.now(),
        };
        const { judge } = this.opts;
        const taker = trade.taker;
        const work = this.opts.journal
          .appendLedger(record)
          .then(async () => {
            if (!judge || !taker || h.label !== FLAG_HORIZON) return;
            await judge
              .judge({ txSignature, quoteId, taker, pair: trade.pair, horizon: h.label, markoutBps: bps })
              .catch((err: unknown) => {
                this.opts.log.warn({ err, taker, quoteId }, "toxicity: could not judge a taker's markouts");
              });
          })
          .catch((err: unknown) => {
            this.opts.log.warn({ err, txSignature }, "ledger outbox append failed: a markout is missing");
          })
          .finally(() => this.working.delete(work));
        this.working.add(work);
      };
      if (h.ms === 0) sample();
      else {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          sample();
        }, h.ms);
        timer.unref();
        this.timers.add(timer);
      }
    }
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
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

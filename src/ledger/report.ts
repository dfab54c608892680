/**
 * Reports over the fill ledger for a time range [from, to): the landed fills, volume by pair, fees
 * owed by mint (what the operator will invoice: the sum of the fee every landed fill kept back, in the
 * mint it was kept in), the fill rate by hour (landed over decided, honest rejections left out, as
 * `rfq_fill_rate_1h` counts it) and rejections by refusal code. `npm run report` prints them; the admin API
 * serves them (`GET /admin/fills`, `GET /admin/fees`).
 *
 * Per channel (the webhook, RFQ v2) and in total ("all"): the fill rate, fees owed, markouts, and the
 * takers whose markouts would flag them (toxic flow).
 */
import { FLAG_HORIZON } from "./markouts.ts";
import type { SqlQueries } from "./sql.ts";

export interface ReportRange {
  fromMs: number;
  /** Exclusive. */
  toMs: number;
}

export interface FillLine {
  txSignature: string;
  /** "webhook" or "rfq-v2". */
  channel: string;
  quoteId: string;
  requestId: string;
  taker: string | null;
  pair: string | null;
  side: string | null;
  inputMint: string | null;
  outputMint: string | null;
  amountIn: string | null;
  amountOut: string | null;
  feeMint: string;
  feeOwed: string;
  feeBps: number;
  slot: string | null;
  landedAt: string;
}

export interface PairVolume {
  pair: string;
  fills: number;
  /** Smallest units of the pair's base and quote tokens that changed hands. */
  baseVolume: string;
  quoteVolume: string;
}

export interface FeesOwed {
  mint: string;
  fills: number;
  /** Smallest units of `mint`. */
  feeOwed: string;
}

export interface HourFillRate {
  /** The hour's start, ISO 8601 UTC. */
  hour: string;
  decided: number;
  accepted: number;
  landed: number;
  honestRejections: number;
  /** landed / (decided - honest rejections); null when that is 0. */
  fillRate: number | null;
}

export interface RejectionCount {
  /** The refusal code (src/refusal/codes.ts); "?" for a row from before codes that none could name. */
  code: string;
  count: number;
}

/** A channel's rows, or "all" for both together. */
export type ReportChannel = "webhook" | "rfq-v2" | "all";
const CHANNELS: readonly ReportChannel[] = ["webhook", "rfq-v2", "all"];

export interface ChannelFillRate {
  channel: ReportChannel;
  decided: number;
  accepted: number;
  landed: number;
  honestRejections: number;
  /** landed / (decided - honest rejections); null when that is 0. */
  fillRate: number | null;
}

/** A taker whose mean markout at the flag horizon is below the flag line over at least `minFills` fills. */
export interface ToxicTaker {
  channel: ReportChannel;
  taker: string;
  fills: number;
  avgBps: number;
}

/** The toxic-flow flag line the report judges takers by (toxicity.flagBelowBps, toxicity.minFills). */
export interface ToxicLine {
  flagBelowBps: number;
  minFills: number;
}

/** The configuration schema's defaults (config/schema.ts, toxicity). */
const DEFAULT_TOXIC_LINE: ToxicLine = { flagBelowBps: -10, minFills: 20 };

export interface LedgerReport {
  from: string;
  to: string;
  /** Fill rate per channel, and "all". */
  fillRateByChannel: ChannelFillRate[];
  /** Fees owed per channel and mint, and "all" (the same as feesOwedByMint). */
  feesOwedByChannel: (FeesOwed & { channel: ReportChannel })[];
  /** Mean markout per channel and horizon, and "all". */
  markoutsByChannel: (MarkoutAverage & { channel: ReportChannel })[];
  /** The line `toxicTakersByChannel` is drawn at. */
  toxicLine: ToxicLine;
  /** Takers under the line per channel, and "all", worst first. */
  toxicTakersByChannel: ToxicTaker[];
  fills: FillLine[];
  volumeByPair: PairVolume[];
  feesOwedByMint: FeesOwed[];
  fillRateByHour: HourFillRate[];
  rejectionsByCode: RejectionCount[];
  markoutsByPair: (MarkoutAverage & { pair: string })[];
  markoutsByTaker: (MarkoutAverage & { taker: string })[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Landed fills in the range, oldest first; at most `limit` (all when unset). */
export async function landedFills(db: SqlQueries, r: ReportRange, limit?: number): Promise<FillLine[]> {
  const rows = await db.query<{
    tx_signature: string;
    channel: string;
    quote_id: string;
    request_id: string;
    taker: string | null;
    pair: string | null;
    side: string | null;
    input_mint: string | null;
    output_mint: string | null;
    amount_in: string | null;
    amount_out: string | null;
    fee_mint: string;
    fee_owed: string;
    fee_bps: number;
    slot: string | null;
    settled_at_ms: number;
  }>(
    `SELECT f.tx_signature, f.channel, f.quote_id, f.request_id, d.taker, d.pair, d.side, d.input_mint, d.output_mint,
            d.filled_amount_in::text AS amount_in, d.filled_amount_out::text AS amount_out,
            f.fee_mint, f.fee_owed::text AS fee_owed, f.fee_bps, f.slot::text AS slot,
            f.settled_at_ms::float8 AS settled_at_ms
       FROM fills f LEFT JOIN swap_decisions d ON d.decision_key = f.decision_key
      WHERE f.outcome = 'landed' AND f.settled_at_ms >= $1 AND f.settled_at_ms < $2
      ORDER BY f.settled_at_ms, f.tx_signature
      ${limit !== undefined ? "LIMIT $3" : ""}`,
    limit !== undefined ? [r.fromMs, r.toMs, limit] : [r.fromMs, r.toMs],
  );
  return rows.map((x) => ({
    txSignature: x.tx_signature,
    channel: x.channel,
    quoteId: x.quote_id,
    requestId: x.request_id,
    taker: x.taker,
    pair: x.pair,
    side: x.side,
    inputMint: x.input_mint,
    outputMint: x.output_mint,
    amountIn: x.amount_in,
    amountOut: x.amount_out,
    feeMint: x.fee_mint,
    feeOwed: x.fee_owed,
    feeBps: x.fee_bps,
    slot: x.slot,
    landedAt: iso(x.settled_at_ms),
  }));
}

export async function feesOwedByMint(db: SqlQueries, r: ReportRange): Promise<FeesOwed[]> {
  const rows = await db.query<{ fee_mint: string; fills: number; fee_owed: string }>(
    `SELECT fee_mint, count(*)::int4 AS fills, sum(fee_owed)::text AS fee_owed
       FROM fills
      WHERE outcome = 'landed' AND settled_at_ms >= $1 AND settled_at_ms < $2
      GROUP BY fee_mint ORDER BY fee_mint`,
    [r.fromMs, r.toMs],
  );
  return rows.map((x) => ({ mint: x.fee_mint, fills: x.fills, feeOwed: x.fee_owed }));
}

export async function volumeByPair(db: SqlQueries, r: ReportRange): Promise<PairVolume[]> {
  const rows = await db.query<{ pair: string; fills: number; base_volume: string; quote_volume: string }>(
    `SELECT coalesce(d.pair, '?') AS pair, count(*)::int4 AS fills,
            coalesce(sum(CASE WHEN d.side = 'sell' THEN d.filled_amount_out ELSE d.filled_amount_in END), 0)::text AS base_volume,
            coalesce(sum(CASE WHEN d.side = 'sell' THEN d.filled_amount_in ELSE d.filled_amount_out END), 0)::text AS quote_volume
       FROM fills f LEFT JOIN swap_decisions d ON d.decision_key = f.decision_key
      WHERE f.outcome = 'landed' AND f.settled_at_ms >= $1 AND f.settled_at_ms < $2
      GROUP BY 1 ORDER BY 1`,
    [r.fromMs, r.toMs],
  );
  return rows.map((x) => ({
    pair: x.pair,
    fills: x.fills,
    baseVolume: x.base_volume,
    quoteVolume: x.quote_volume,
  }));
}

export async function fillRateByHour(db: SqlQueries, r: ReportRange): Promise<HourFillRate[]> {
  const rows = await db.query<{
    hour_ms: number;
    decided: number;
    accepted: number;
    honest: number;
    landed: number;
  }>(
    `SELECT (floor(d.decided_at_ms / 3600000.0) * 3600000)::float8 AS hour_ms,
            count(*)::int4 AS decided,
            (count(*) FILTER (WHERE d.decision = 'accepted'))::int4 AS accepted,
            (count(*) FILTER (WHERE d.decision = 'rejectedWithReason'))::int4 AS honest,
            (count(f.tx_signature) FILTER (WHERE f.outcome = 'landed'))::int4 AS landed
       FROM swap_decisions d
       LEFT JOIN fills f ON f.decision_key = d.decision_key AND f.tx_signature = d.tx_signature
      WHERE d.decided_at_ms >= $1 AND d.decided_at_ms < $2
      GROUP BY 1 ORDER BY 1`,
    [r.fromMs, r.toMs],
  );
  return rows.map((x) => {
    const counted = x.decided - x.honest;
    return {
      hour: iso(x.hour_ms),
      decided: x.decided,
      accepted: x.accepted,
      landed: x.landed,
      honestRejections: x.honest,
      fillRate: counted > 0 ? x.landed / counted : null,
    };
  });
}

export async function rejectionsByCode(db: SqlQueries, r: ReportRange): Promise<RejectionCount[]> {
  const rows = await db.query<{ code: string; count: number }>(
    `SELECT coalesce(code, '?') AS code, count(*)::int4 AS count
       FROM swap_decisions
      WHERE decision <> 'accepted' AND decided_at_ms >= $1 AND decided_at_ms < $2
      GROUP BY 1 ORDER BY 2 DESC, 1`,
    [r.fromMs, r.toMs],
  );
  return rows;
}

export async function ledgerReport(
  db: SqlQueries,
  r: ReportRange,
  toxicLine: ToxicLine = DEFAULT_TOXIC_LINE,
): Promise<LedgerReport> {
  return {
    from: iso(r.fromMs),
    to: iso(r.toMs),
    fillRateByChannel: await fillRateByChannel(db, r),
    feesOwedByChannel: await feesOwedByChannel(db, r),
    markoutsByChannel: await markoutsByChannel(db, r),
    toxicLine,
    toxicTakersByChannel: await toxicTakersByChannel(db, r, toxicLine),
    fills: await landedFills(db, r),
    volumeByPair: await volumeByPair(db, r),
    feesOwedByMint: await feesOwedByMint(db, r),
    fillRateByHour: await fillRateByHour(db, r),
    rejectionsByCode: await rejectionsByCode(db, r),
    markoutsByPair: await markoutsByPair(db, r),
    markoutsByTaker: await markoutsByTaker(db, r),
  };
}

/** Parses a report bound: a date (YYYY-MM-DD, UTC midnight) or a full ISO 8601 instant. */
function parseInstant(text: string, what: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  if (!Number.isFinite(ms))
    throw new RangeError(`${what}: not a date (YYYY-MM-DD) or ISO 8601 instant: ${text}`);
  return ms;
}

/** [from, to) for `--from A --to B`: a bare date as `--to` includes that whole day. */
export function reportRange(from: string, to: string): ReportRange {
  const fromMs = parseInstant(from, "--from");
  const toBase = parseInstant(to, "--to");
  const toMs = /^\d{4}-\d{2}-\d{2}$/.test(to) ? toBase + 86_400_000 : toBase;
  if (toMs <= fromMs) throw new RangeError(`--to (${to}) must be after --from (${from})`);
  return { fromMs, toMs };
}

export interface MarkoutAverage {
  horizon: string;
  fills: number;
  /** Mean markout in bps from the maker's side. */
  avgBps: number;
}

/** Mean markout per taker and horizon over the fills that landed in the range (worst first). */
export async function markoutsByTaker(
  db: SqlQueries,
  r: ReportRange,
): Promise<(MarkoutAverage & { taker: string })[]> {
  const rows = await db.query<{ taker: string; horizon: string; fills: number; avg_bps: number }>(
    `SELECT coalesce(m.taker, '?') AS taker, m.horizon, count(*)::int4 AS fills, avg(m.markout_bps)::float8 AS avg_bps
       FROM markouts m JOIN fills f ON f.tx_signature = m.tx_signature
      WHERE f.settled_at_ms >= $1 AND f.settled_at_ms < $2
      GROUP BY 1, 2, m.horizon_ms ORDER BY m.horizon_ms, avg_bps, taker`,
    [r.fromMs, r.toMs],
  );
  return rows.map((x) => ({ taker: x.taker, horizon: x.horizon, fills: x.fills, avgBps: x.avg_bps }));
}

/** Mean markout per pair and horizon. */
export async function markoutsByPair(
  db: SqlQueries,
  r: ReportRange,
): Promise<(MarkoutAverage & { pair: string })[]> {
  const rows = await db.query<{ pair: string; horizon: string; fills: number; avg_bps: number }>(
    `SELECT m.pair, m.horizon, count(*)::int4 AS fills, avg(m.markout_bps)::float8 AS avg_bps
       FROM markouts m JOIN fills f ON f.tx_signature = m.tx_signature
      WHERE f.settled_at_ms >= $1 AND f.settled_at_ms < $2
      GROUP BY 1, 2, m.horizon_ms ORDER BY m.pair, m.horizon_ms`,
    [r.fromMs, r.toMs],
  );
  return rows.map((x) => ({ pair: x.pair, horizon: x.horizon, fills: x.fills, avgBps: x.avg_bps }));
}

/** The channel of a grouped row: null in the grand total (GROUPING SETS' empty set) is "all". */
const channelOf = (c: string | null): ReportChannel => (c === null ? "all" : (c as ReportChannel));
const channelOrder = (c: ReportChannel) => CHANNELS.indexOf(c);

/** Fill rate per channel and in total; every channel has its row (zeros when it decided nothing). */
export async function fillRateByChannel(db: SqlQueries, r: ReportRange): Promise<ChannelFillRate[]> {
  const rows = await db.query<{
    channel: string | null;
    decided: number;
    accepted: number;
    honest: number;
    landed: number;
  }>(
    `SELECT d.channel, count(*)::int4 AS decided,
            (count(*) FILTER (WHERE d.decision = 'accepted'))::int4 AS accepted,
            (count(*) FILTER (WHERE d.decision = 'rejectedWithReason'))::int4 AS honest,
            (count(f.tx_signature) FILTER (WHERE f.outcome = 'landed'))::int4 AS landed
       FROM swap_decisions d
       LEFT JOIN fills f ON f.decision_key = d.decision_key AND f.tx_signature = d.tx_signature
      WHERE d.decided_at_ms >= $1 AND d.decided_at_ms < $2
      GROUP BY GROUPING SETS ((d.channel), ())`,
    [r.fromMs, r.toMs],
  );
  const by = new Map(rows.map((x) => [channelOf(x.channel), x]));
  return CHANNELS.map((channel) => {
    const x = by.get(channel) ?? { decided: 0, accepted: 0, honest: 0, landed: 0 };
    const counted = x.decided - x.honest;
    return {
      channel,
      decided: x.decided,
      accepted: x.accepted,
      landed: x.landed,
      honestRejections: x.honest,
      fillRate: counted > 0 ? x.landed / counted : null,
    };
  });
}

/** Fees owed per channel and mint, then per mint over both channels ("all"). */
export async function feesOwedByChannel(
  db: SqlQueries,
  r: ReportRange,
): Promise<(FeesOwed & { channel: ReportChannel })[]> {
  const rows = await db.query<{ channel: string | null; fee_mint: string; fills: number; fee_owed: string }>(
    `SELECT channel, fee_mint, count(*)::int4 AS fills, sum(fee_owed)::text AS fee_owed
       FROM fills
      WHERE outcome = 'landed' AND settled_at_ms >= $1 AND settled_at_ms < $2
      GROUP BY GROUPING SETS ((channel, fee_mint), (fee_mint))`,
    [r.fromMs, r.toMs],
  );
  return rows
    .map((x) => ({ channel: channelOf(x.channel), mint: x.fee_mint, fills: x.fills, feeOwed: x.fee_owed }))
    .sort((a, b) => channelOrder(a.channel) - channelOrder(b.channel) || a.mint.localeCompare(b.mint));
}

/** Mean markout per channel and horizon (the fill's channel), and over both. */
export async function markoutsByChannel(
  db: SqlQueries,
  r: ReportRange,
): Promise<(MarkoutAverage & { channel: ReportChannel })[]> {
  const rows = await db.query<{
    channel: string | null;
    horizon: string;
    horizon_ms: number;
    fills: number;
    avg_bps: number;
  }>(
    `SELECT f.channel, m.horizon, m.horizon_ms::int4 AS horizon_ms, count(*)::int4 AS fills,
            avg(m.markout_bps)::float8 AS avg_bps
       FROM markouts m JOIN fills f ON f.tx_signature = m.tx_signature
      WHERE f.settled_at_ms >= $1 AND f.settled_at_ms < $2
      GROUP BY GROUPING SETS ((f.channel, m.horizon, m.horizon_ms), (m.horizon, m.horizon_ms))`,
    [r.fromMs, r.toMs],
  );
  return rows
    .map((x) => ({
      channel: channelOf(x.channel),
      horizon: x.horizon,
      ms: x.horizon_ms,
      fills: x.fills,
      avgBps: x.avg_bps,
    }))
    .sort((a, b) => channelOrder(a.channel) - channelOrder(b.channel) || a.ms - b.ms)
    .map(({ ms: _ms, ...m }) => m);
}

/**
 * Takers whose mean markout at the flag horizon (60 s) over their fills in the range, at least
 * `minFills` of them, is below `flagBelowBps`: those the toxic-flow flagger would flag on this
 * channel's flow alone, and on both together ("all"). Worst first.
 */
export async function toxicTakersByChannel(
  db: SqlQueries,
  r: ReportRange,
  line: ToxicLine,
): Promise<ToxicTaker[]> {
  const rows = await db.query<{ channel: string | null; taker: string; fills: number; avg_bps: number }>(
    `SELECT f.channel, m.taker, count(*)::int4 AS fills, avg(m.markout_bps)::float8 AS avg_bps
       FROM markouts m JOIN fills f ON f.tx_signature = m.tx_signature
      WHERE f.settled_at_ms >= $1 AND f.settled_at_ms < $2 AND m.horizon = $3 AND m.taker IS NOT NULL
      GROUP BY GROUPING SETS ((f.channel, m.taker), (m.taker))
     HAVING count(*) >= $4 AND avg(m.markout_bps) < $5`,
    [r.fromMs, r.toMs, FLAG_HORIZON, line.minFills, line.flagBelowBps],
  );
  return rows
    .map((x) => ({ channel: channelOf(x.channel), taker: x.taker, fills: x.fills, avgBps: x.avg_bps }))
    .sort(
      (a, b) =>
        channelOrder(a.channel) - channelOrder(b.channel) ||
        a.avgBps - b.avgBps ||
        a.taker.localeCompare(b.taker),
    );
}

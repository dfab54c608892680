/**
 * What `npm run bench:shed` (bench/shed.ts) concludes from its measurements: the CPU a request costs
 * the server in each of four ways of answering it, and what those costs allow past capacity.
 *
 * The model (README, _Past capacity_): a core that fully prices `1/c` quotes a second, sent `o` times
 * that rate (`o` = 1.2 in issue 19's target), prices a share `p` and sheds the rest at `r·c` each. The
 * core is saturated, so `o·(p + (1 − p)·r) = 1`, that is
 *
 *   p = (1 − o·r) / (o·(1 − r))            and, for a wanted p,   r ≤ (1/o − p) / (1 − p)
 *
 * (p = 75% at o = 1.2 needs r ≤ 1/3). `r` is a shed request's CPU over a priced one's, both measured
 * at the same rate in the same round, so that the machine's drift cancels in the ratio.
 */

/** The four ways of answering a quote request that the bench measures, one server each. */
export const SHED_TARGETS = ["floor", "http", "shed", "priced"] as const;
export type ShedTarget = (typeof SHED_TARGETS)[number];

export const SHED_TARGET_NAMES: Record<ShedTarget, string> = {
  floor: "node:http, a fixed 404, body unread (Node's own floor)",
  http: "bare node:http (the sweep's baseline)",
  shed: "webhook, every quote shed (404 OVERLOADED)",
  priced: "webhook, every quote priced and stored (200)",
};

/** The share of quotes a saturated core still prices at `overload` times its capacity, given `r`. */
export function pricedShareAt(overload: number, r: number): number {
  if (!(overload > 0) || !(r >= 0)) throw new Error(`pricedShareAt: overload ${overload}, r ${r}`);
  if (overload <= 1) return 1;
  if (r >= 1) return 0;
  return Math.min(1, Math.max(0, (1 - overload * r) / (overload * (1 - r))));
}

/** The largest `r` at which a saturated core still prices `share` of quotes at `overload` x capacity. */
export function maxShedRatio(overload: number, share: number): number {
  if (!(overload > 1) || !(share > 0 && share < 1))
    throw new Error(`maxShedRatio: overload ${overload} must be > 1, share ${share} in (0, 1)`);
  return Math.max(0, (1 / overload - share) / (1 - share));
}

function median(xs: number[]): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** One round: CPU µs per request of each target's server process, measured at the same rate. */
export type ShedRound = Record<ShedTarget, number>;

export interface ShedSummary {
  rounds: number;
  /** Median over rounds of each target's CPU µs per request (for scale only: it drifts). */
  cpuUs: Record<ShedTarget, number>;
  /** Median over rounds of each target's CPU over bare node:http's in the same round. */
  perBare: Record<ShedTarget, number>;
  /** r: the webhook's shed request over its priced one (median of the per-round ratios). */
  r: number;
  /** The least r any shedding inside Node can reach: Node's floor over a priced quote. */
  rFloor: number;
  /** Priced share at 1.2x capacity, by the model, at `r` and at `rFloor`. */
  pricedAt12: number;
  pricedAt12Floor: number;
  /** The largest r that keeps 75% priced at 1.2x (1/3). */
  rFor75: number;
  /** Bare node:http's CPU over a priced quote's: the rate ratio (webhook / bare) the CPU alone allows. */
  rateRatioCpu: number;
}

export function summarizeShedRounds(rounds: ShedRound[]): ShedSummary {
  if (!rounds.length) throw new Error("summarizeShedRounds: no rounds");
  for (const [i, round] of rounds.entries())
    for (const t of SHED_TARGETS)
      if (!(round[t] > 0)) throw new Error(`round ${i + 1}: no CPU figure for ${t} (${round[t]})`);
  const of = (f: (r: ShedRound) => number) => median(rounds.map(f));
  const cpuUs = {} as Record<ShedTarget, number>;
  const perBare = {} as Record<ShedTarget, number>;
  for (const t of SHED_TARGETS) {
    cpuUs[t] = of((x) => x[t]);
    perBare[t] = of((x) => x[t] / x.http);
  }
  const r = of((x) => x.shed / x.priced);
  const rFloor = of((x) => x.floor / x.priced);
  return {
    rounds: rounds.length,
    cpuUs,
    perBare,
    r,
    rFloor,
    pricedAt12: pricedShareAt(1.2, r),
    pricedAt12Floor: pricedShareAt(1.2, rFloor),
    rFor75: maxShedRatio(1.2, 0.75),
    rateRatioCpu: of((x) => x.http / x.priced),
  };
}

export function shedSummaryText(s: ShedSummary, rate: number): string[] {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `CPU per request of the server's process, at ${rate}/s, median of ${s.rounds} rounds (paired ratios per round):`,
  ];
  for (const t of SHED_TARGETS)
    lines.push(
      `  ${SHED_TARGET_NAMES[t].padEnd(54)} ${s.cpuUs[t].toFixed(1).padStart(7)} µs   ${s.perBare[t].toFixed(2)}x bare`,
    );
  lines.push(
    `r (shed / priced): ${s.r.toFixed(2)}  ->  at 1.2x capacity the model prices ${pct(s.pricedAt12)} of quotes (75% needs r <= ${s.rFor75.toFixed(2)})`,
    `Node's floor / priced: ${s.rFloor.toFixed(2)}  ->  no shedding inside Node can price more than ${pct(s.pricedAt12Floor)} at 1.2x`,
    `bare node:http / priced: ${s.rateRatioCpu.toFixed(2)}  (the webhook / bare rate ratio its CPU per quote allows; the 0.6x target needs >= 0.60)`,
  );
  return lines;
}

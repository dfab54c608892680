/** Percentiles and per-interval series for the load test report. */

/** Nearest-rank percentile of an ascending array (p in 0..100); NaN when empty. */
export function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  // The epsilon keeps float noise (0.999 * 1000 = 999.0000000000001) from skipping a rank.
  const rank = Math.ceil((p * sorted.length) / 100 - 1e-9);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

export function summarize(values: Float64Array): LatencySummary {
  const v = Float64Array.from(values.filter((x) => Number.isFinite(x))).sort();
  let sum = 0;
  for (const x of v) sum += x;
  return {
    count: v.length,
    p50: percentile(v, 50),
    p90: percentile(v, 90),
    p99: percentile(v, 99),
    p999: percentile(v, 99.9),
    max: v.length ? (v[v.length - 1] as number) : Number.NaN,
    mean: v.length ? sum / v.length : Number.NaN,
  };
}

export interface SeriesPoint {
  /** Bucket start, s since the measured run began. */
  t: number;
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Latency per time bucket (by scheduled send time). */
export function series(scheduledMs: Float64Array, latencyMs: Float64Array, bucketMs: number): SeriesPoint[] {
  const buckets = new Map<number, number[]>();
  let t0 = Number.POSITIVE_INFINITY;
  for (const s of scheduledMs) t0 = Math.min(t0, s);
  for (let i = 0; i < scheduledMs.length; i++) {
    const l = latencyMs[i] as number;
    if (!Number.isFinite(l)) continue;
    const b = Math.floor(((scheduledMs[i] as number) - t0) / bucketMs);
    const arr = buckets.get(b);
    if (arr) arr.push(l);
    else buckets.set(b, [l]);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([b, arr]) => {
      const s = Float64Array.from(arr).sort();
      return {
        t: (b * bucketMs) / 1000,
        count: s.length,
        p50: percentile(s, 50),
        p99: percentile(s, 99),
        max: s[s.length - 1] as number,
      };
    });
}

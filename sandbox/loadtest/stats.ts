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
  /**
   * The generator's own worst delay in sending, over the bucket's requests (when given their send
   * lags). Latency counts from the scheduled send, so a bucket whose max is mostly this was held up in
   * the generator's process, not on the server's side of the socket.
   */
  sendLagMax?: number;
}

/** Latency per time bucket (by scheduled send time); with `sendLagMs`, each bucket's worst send lag. */
export function series(
  scheduledMs: Float64Array,
  latencyMs: Float64Array,
  bucketMs: number,
  sendLagMs?: Float64Array,
): SeriesPoint[] {
  const buckets = new Map<number, { lat: number[]; lag: number }>();
  let t0 = Number.POSITIVE_INFINITY;
  for (const s of scheduledMs) t0 = Math.min(t0, s);
  for (let i = 0; i < scheduledMs.length; i++) {
    const l = latencyMs[i] as number;
    if (!Number.isFinite(l)) continue;
    const b = Math.floor(((scheduledMs[i] as number) - t0) / bucketMs);
    let e = buckets.get(b);
    if (!e) {
      e = { lat: [], lag: Number.NEGATIVE_INFINITY };
      buckets.set(b, e);
    }
    e.lat.push(l);
    if (sendLagMs) e.lag = Math.max(e.lag, sendLagMs[i] as number);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([b, e]) => {
      const s = Float64Array.from(e.lat).sort();
      return {
        t: (b * bucketMs) / 1000,
        count: s.length,
        p50: percentile(s, 50),
        p99: percentile(s, 99),
        max: s[s.length - 1] as number,
        ...(sendLagMs ? { sendLagMax: e.lag } : {}),
      };
    });
}

/**
 * The `n` buckets with the highest max latency, slowest first, each saying whose side held it up:
 * "generator" when the generator's own send lag makes up at least half of the bucket's max, else
 * "server" (the webhook, Redis, or the machine's scheduling of them). Buckets without a send lag are
 * "unknown".
 */
export function slowestBuckets(
  points: SeriesPoint[],
  n: number,
): (SeriesPoint & { heldUpBy: "generator" | "server" | "unknown" })[] {
  return [...points]
    .sort((a, b) => b.max - a.max || a.t - b.t)
    .slice(0, n)
    .map((p) => ({
      ...p,
      heldUpBy: p.sendLagMax === undefined ? "unknown" : p.sendLagMax * 2 >= p.max ? "generator" : "server",
    }));
}

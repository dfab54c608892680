/**
 * The fill rate as the operator judges it (docs/contract.md, "Time limits and penalties"): over a rolling
 * hour, swaps that were accepted AND landed, over swap requests. Below 95% the operator switches the
 * maker off, so this is exported on `rfq_fill_rate_1h` and a warning is logged when it drops below.
 *
 * What counts (our reading of the operator's rules):
 * - every swap request we decide counts once (a duplicate answered from the claim does not count again);
 * - honest rejections (`rejectedWithReason`: the taker cannot pay, bad signature, bot) are left out: the
 *   operator re-checks them and penalises only dishonest ones;
 * - an accepted swap whose fill is still in flight is left out of both sides until it settles, so the
 *   ratio does not dip while confirmations are pending.
 * The operator's "held by the user more than 20 s" exclusion is not modelled.
 *
 * Per instance: with N instances each sees its own share. The fleet-wide ratio is
 * sum(rfq_fills_total{outcome="landed"}) / (sum(rfq_swaps_total) - sum(rfq_swaps_total{state="rejectedWithReason"}))
 * in PromQL over one hour.
 */
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";

/** How a swap request was decided, for the fill rate. */
export type SwapDecisionKind = "accepted" | "rejected" | "honestRejection";

interface Bucket {
  startMs: number;
  /** Requests that count (honest rejections excluded). */
  counted: number;
  landed: number;
  /** Accepted, not yet settled. */
  pending: number;
}

/** Handle of an accepted request, to settle once the chain decides. */
export interface FillRateToken {
  bucketStartMs: number;
}

export interface FillRateSnapshot {
  /** landed / decided, or undefined when nothing has been decided in the window. */
  ratio: number | undefined;
  counted: number;
  landed: number;
  pending: number;
  /** counted - pending: the denominator. */
  decided: number;
}

export interface FillRateOptions {
  metrics: Metrics;
  log: Logger;
  windowMs?: number;
  bucketMs?: number;
  /** The operator's line. */
  threshold?: number;
  /** No warning below this many decided requests: one failure out of three is noise, not a trend. */
  minSample?: number;
  /** At most one warning per this interval. */
  warnEveryMs?: number;
  now?: () => number;
}

export class FillRate {
  private readonly buckets: Bucket[] = [];
  private readonly windowMs: number;
  private readonly bucketMs: number;
  readonly threshold: number;
  private readonly minSample: number;
  private readonly warnEveryMs: number;
  private readonly now: () => number;
  private lastWarnMs = Number.NEGATIVE_INFINITY;
  private reportTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: FillRateOptions) {
    this.windowMs = opts.windowMs ?? 60 * 60_000;
    this.bucketMs = opts.bucketMs ?? 60_000;
    this.threshold = opts.threshold ?? 0.95;
    this.minSample = opts.minSample ?? 20;
    this.warnEveryMs = opts.warnEveryMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    // No data is neither a 0% nor a 100% fill rate: no sample (an absent series) and 0 decided.
    opts.metrics.fillRate.setOptional(undefined);
    opts.metrics.fillRateDecided.set(0);
  }

  /** Counts one decided swap request. Returns a token for an accepted one, to settle later. */
  recordDecision(kind: SwapDecisionKind): FillRateToken | undefined {
    if (kind === "honestRejection") return undefined;
    const bucket = this.current();
    bucket.counted++;
    if (kind === "accepted") {
      bucket.pending++;
      this.evaluate();
      return { bucketStartMs: bucket.startMs };
    }
    this.evaluate();
    return undefined;
  }

  /** The accepted swap's fill landed (true) or did not (false). */
  settle(token: FillRateToken, landed: boolean): void {
    // A request older than the window has already left the ratio; nothing to adjust.
    const bucket = this.buckets.find((b) => b.startMs === token.bucketStartMs);
    if (bucket) {
      bucket.pending = Math.max(0, bucket.pending - 1);
      if (landed) bucket.landed++;
    }
    this.evaluate();
  }

  snapshot(): FillRateSnapshot {
    this.drop();
    let counted = 0;
    let landed = 0;
    let pending = 0;
    for (const b of this.buckets) {
      counted += b.counted;
      landed += b.landed;
      pending += b.pending;
    }
    const decided = counted - pending;
    return { ratio: decided > 0 ? landed / decided : undefined, counted, landed, pending, decided };
  }

  /** Logs the rate every `everyMs` (unref'd: never keeps the process alive). */
  start(everyMs = 60_000): void {
    this.stop();
    this.reportTimer = setInterval(() => this.report(), everyMs);
    this.reportTimer.unref();
  }

  stop(): void {
    if (this.reportTimer) clearInterval(this.reportTimer);
    this.reportTimer = undefined;
  }

  /** One info line with the current window (and a warning if below the line). */
  report(): FillRateSnapshot {
    const s = this.evaluate();
    this.opts.log.info({ fillRate: s.ratio, ...s, threshold: this.threshold }, "fill rate (rolling 1 h)");
    return s;
  }

  private evaluate(): FillRateSnapshot {
    const s = this.snapshot();
    this.opts.metrics.fillRate.setOptional(s.ratio);
    this.opts.metrics.fillRateDecided.set(s.decided);
    const now = this.now();
    if (
      s.ratio !== undefined &&
      s.ratio < this.threshold &&
      s.decided >= this.minSample &&
      now - this.lastWarnMs >= this.warnEveryMs
    ) {
      this.lastWarnMs = now;
      this.opts.log.warn(
        { fillRate: s.ratio, ...s, threshold: this.threshold },
        "fill rate below the operator's 95% line: the maker risks suspension",
      );
    }
    return s;
  }

  private current(): Bucket {
    this.drop();
    const startMs = Math.floor(this.now() / this.bucketMs) * this.bucketMs;
    const last = this.buckets[this.buckets.length - 1];
    if (last && last.startMs === startMs) return last;
    const bucket: Bucket = { startMs, counted: 0, landed: 0, pending: 0 };
    this.buckets.push(bucket);
    return bucket;
  }

  private drop(): void {
    const oldest = this.now() - this.windowMs;
    while (this.buckets.length > 0 && (this.buckets[0] as Bucket).startMs + this.bucketMs <= oldest) {
      this.buckets.shift();
    }
  }
}

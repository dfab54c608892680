/**
 * The operator's fill-rate policing of makers (docs/contract.md, "Time limits and penalties"): over a
 * sliding hour, a maker whose swaps land less than 95% of the time is suspended, for 5, 10, 20 and
 * then 30 minutes on each further suspension. Each confirmed fill lowers the weight of the failures
 * before it by 20%; swaps the user held more than 20 s before executing are not counted, and neither
 * are honest rejections (a taker that could not pay).
 *
 * The clock is injected so tests step through hours without waiting.
 */

export interface FillRateOptions {
  now?: () => number;
  windowMs?: number;
  /** Fill rate below this suspends; the operator's is 0.95. */
  threshold?: number;
  /** No verdict on fewer counted swaps than this (one failure in one swap is not a 0% maker). */
  minSamples?: number;
  /** Suspension lengths in order; the last repeats. */
  suspensionStepsMs?: readonly number[];
  /** Swaps held by the user longer than this are not counted. */
  maxHoldMs?: number;
  /** Factor applied to earlier failures' weight by each confirmed fill. */
  failureDecayPerFill?: number;
}

export type CountedOutcome =
  /** Landed on chain. */
  | "filled"
  /** Rejected dishonestly, timed out, 5xx, or failed/expired on chain. */
  | "failed"
  /** Rejected for a reason the operator verified (taker cannot pay): not counted. */
  | "honestRejection";

export interface FillRateStatus {
  fills: number;
  failures: number;
  /** Decayed failure weight used for the rate. */
  failureWeight: number;
  /** fills / (fills + failureWeight); 1 with no samples. */
  rate: number;
  suspended: boolean;
  suspendedUntilMs?: number;
  /** Suspensions so far on the current ladder (0 = next suspension is the first step). */
  suspensions: number;
}

interface Sample {
  atMs: number;
  filled: boolean;
  /** For failures: the count of fills recorded before it (its weight decays with later fills). */
  fillsBefore: number;
}

interface MakerState {
  samples: Sample[];
  fillsRecorded: number;
  suspendedUntilMs?: number;
  suspensions: number;
  lastSuspensionEndMs?: number;
}

const MINUTE = 60_000;

/** Fill-rate bookkeeping and suspensions for every maker, keyed by webhook name. */
export class FillRateTracker {
  readonly #now: () => number;
  readonly #windowMs: number;
  readonly #threshold: number;
  readonly #minSamples: number;
  readonly #steps: readonly number[];
  readonly #maxHoldMs: number;
  readonly #decay: number;
  readonly #makers = new Map<string, MakerState>();

  constructor(opts: FillRateOptions = {}) {
    this.#now = opts.now ?? Date.now;
    this.#windowMs = opts.windowMs ?? 60 * MINUTE;
    this.#threshold = opts.threshold ?? 0.95;
    this.#minSamples = opts.minSamples ?? 10;
    this.#steps = opts.suspensionStepsMs ?? [5 * MINUTE, 10 * MINUTE, 20 * MINUTE, 30 * MINUTE];
    this.#maxHoldMs = opts.maxHoldMs ?? 20_000;
    this.#decay = opts.failureDecayPerFill ?? 0.8;
  }

  #state(name: string): MakerState {
    let s = this.#makers.get(name);
    if (!s) {
      s = { samples: [], fillsRecorded: 0, suspensions: 0 };
      this.#makers.set(name, s);
    }
    return s;
  }

  #prune(s: MakerState, now: number): void {
    const from = now - this.#windowMs;
    let i = 0;
    while (i < s.samples.length && (s.samples[i] as Sample).atMs < from) i++;
    if (i) s.samples.splice(0, i);
    // A suspension ends; a full window later without another, the ladder starts again at 5 minutes.
    if (s.suspendedUntilMs !== undefined && now >= s.suspendedUntilMs) {
      s.lastSuspensionEndMs = s.suspendedUntilMs;
      s.suspendedUntilMs = undefined;
    }
    if (
      s.suspendedUntilMs === undefined &&
      s.lastSuspensionEndMs !== undefined &&
      now - s.lastSuspensionEndMs >= this.#windowMs
    ) {
      s.suspensions = 0;
      s.lastSuspensionEndMs = undefined;
    }
  }

  #tally(s: MakerState): { fills: number; failures: number; failureWeight: number } {
    let fills = 0;
    let failures = 0;
    let failureWeight = 0;
    for (const x of s.samples) {
      if (x.filled) fills++;
      else {
        failures++;
        failureWeight += this.#decay ** (s.fillsRecorded - x.fillsBefore);
      }
    }
    return { fills, failures, failureWeight };
  }

  /**
   * Records one swap's outcome. `heldMs` is how long the user held the order before executing; past
   * the limit the outcome is not counted. Returns the maker's status after the record.
   */
  record(name: string, outcome: CountedOutcome, heldMs = 0): FillRateStatus {
    const now = this.#now();
    const s = this.#state(name);
    this.#prune(s, now);
    if (outcome !== "honestRejection" && heldMs <= this.#maxHoldMs) {
      const filled = outcome === "filled";
      s.samples.push({ atMs: now, filled, fillsBefore: s.fillsRecorded });
      if (filled) s.fillsRecorded++;
      const t = this.#tally(s);
      const counted = t.fills + t.failures;
      const rate = counted ? t.fills / (t.fills + t.failureWeight) : 1;
      if (s.suspendedUntilMs === undefined && counted >= this.#minSamples && rate < this.#threshold) {
        const step = this.#steps[Math.min(s.suspensions, this.#steps.length - 1)] as number;
        s.suspendedUntilMs = now + step;
        s.suspensions++;
        // Back from a suspension, a maker starts with a clean window rather than being re-suspended
        // by the very failures it has served time for.
        s.samples = [];
      }
    }
    return this.status(name);
  }

  /** True while the maker is suspended: it gets no quote requests. */
  isSuspended(name: string): boolean {
    return this.status(name).suspended;
  }

  status(name: string): FillRateStatus {
    const s = this.#state(name);
    this.#prune(s, this.#now());
    const t = this.#tally(s);
    const counted = t.fills + t.failures;
    return {
      ...t,
      rate: counted ? t.fills / (t.fills + t.failureWeight) : 1,
      suspended: s.suspendedUntilMs !== undefined,
      ...(s.suspendedUntilMs !== undefined ? { suspendedUntilMs: s.suspendedUntilMs } : {}),
      suspensions: s.suspensions,
    };
  }
}

/**
 * Time bounds for the swap path. The operator waits at most 25 s for a /swap answer; every port call
 * on the way (store, chain, inventory) is raced against what is left of the swap's budget, so a port
 * that never answers turns into a rejection with a reason instead of a hung request.
 */

/** The outcome of a bounded call: the value, the port's own failure, or our deadline passing first. */
export type Bounded<T> = { ok: true; value: T } | { ok: false; timedOut: boolean; error: string };

/** The outcome of a call given no time at all (its work is not waited for). */
const NO_TIME_LEFT: Bounded<never> = Object.freeze({
  ok: false,
  timedOut: true,
  error: "no time left in the swap budget",
});

/** The outcome of a call that did not settle within `ms`. */
const timedOut = (ms: number): Bounded<never> => ({
  ok: false,
  timedOut: true,
  error: `no answer within ${ms} ms`,
});

/**
 * Runs `work` and resolves with its value, its error (as text), or a timeout after `ms`, whichever
 * comes first (`boundedCall` on the call it starts; with no time left, `work` is not started).
 */
export function bounded<T>(work: () => Promise<T>, ms: number): Promise<Bounded<T>> {
  if (ms <= 0) return Promise.resolve(NO_TIME_LEFT);
  let running: Promise<T>;
  try {
    running = work();
  } catch (err) {
    return Promise.resolve({ ok: false, timedOut: false, error: errorText(err) });
  }
  return boundedCall(running, ms);
}

/**
 * A call already running, bounded by `ms`: resolves with its value, its error (as text), or a timeout,
 * whichever comes first (with `ms` <= 0, at once with no time left). The timer is cleared either way;
 * a late settle is ignored (and its rejection swallowed so it never surfaces as an unhandled
 * rejection). `outcome`, when given, is told the call's own result whenever it arrives, late or not,
 * before the caller's promise settles (the store's circuit counts it: src/redis/circuit.ts).
 */
export function boundedCall<T>(
  running: Promise<T>,
  ms: number,
  outcome?: (error: string | undefined) => void,
): Promise<Bounded<T>> {
  return new Promise<Bounded<T>>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: Bounded<T>) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      resolve(result);
    };
    if (ms <= 0) settle(NO_TIME_LEFT);
    else timer = setTimeout(() => settle(timedOut(ms)), ms);
    running.then(
      (value) => {
        outcome?.(undefined);
        settle({ ok: true, value });
      },
      (err: unknown) => {
        const error = errorText(err);
        outcome?.(error);
        settle({ ok: false, timedOut: false, error });
      },
    );
  });
}

/** The longest pause between two attempts of `retried`, ms. */
const MAX_RETRY_PAUSE_MS = 1_000;

/**
 * `bounded`, asked again while it fails: for reads only, where a second request changes nothing. A
 * request sent into a stalled server stays unanswered after the server is back; only a new one is
 * answered. Each attempt is bounded by `attemptMs` (cut to what is left of `ms`); after a failure a
 * fresh attempt follows a pause (`pauseMs`, doubling to 1 s) while `ms` lasts. The first value, or
 * the last failure saying how often it was asked.
 */
export async function retried<T>(
  work: () => Promise<T>,
  ms: number,
  attemptMs: number,
  pauseMs = 250,
): Promise<Bounded<T>> {
  const deadline = Date.now() + ms;
  let last = await bounded(work, Math.min(attemptMs, ms));
  let attempts = 1;
  for (let pause = pauseMs; !last.ok; pause = Math.min(2 * pause, MAX_RETRY_PAUSE_MS)) {
    if (deadline - Date.now() <= pause) break;
    await sleep(pause);
    // A late timer must not turn the last real failure into "no time left".
    const left = deadline - Date.now();
    if (left <= 0) break;
    last = await bounded(work, Math.min(attemptMs, left));
    attempts++;
  }
  if (last.ok || attempts === 1) return last;
  return { ...last, error: `${last.error} (asked ${attempts} times in ${ms} ms)` };
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A swap's budget: an absolute deadline, and per-step caps so one slow step cannot eat all of it. */
export class Budget {
  constructor(
    private readonly deadlineMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds left, never negative. */
  left(): number {
    return Math.max(0, this.deadlineMs - this.now());
  }

  /** The time a step may take: its own cap, or what is left of the budget less `reserveMs`. */
  forStep(capMs: number, reserveMs = 0): number {
    return Math.max(0, Math.min(capMs, this.left() - reserveMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The operator's quote budget. It sends `x-request-start` (ms epoch) and `x-request-timeout` (ms,
 * currently 250) and discards answers that arrive after start + timeout. A missing or absurd header
 * (unparseable, far in the future, or so old that clocks must disagree) falls back to our arrival time
 * and 250 ms, so a skewed operator clock cannot make us refuse everything.
 */

const DEFAULT_QUOTE_TIMEOUT_MS = 250;
/** Beyond these, the header says more about clock skew than about the request. */
const MAX_FUTURE_SKEW_MS = 2_000;
const MAX_PAST_AGE_MS = 10_000;
const MAX_TIMEOUT_MS = 10_000;

export interface Deadline {
  /** ms epoch at which the operator stops listening. */
  atMs: number;
  /** ms epoch the budget counts from: the header's start, or the arrival. */
  startMs: number;
  /** Where the start came from, for logs. */
  source: "header" | "arrival";
}

export function quoteDeadline(
  startHeader: string | undefined,
  timeoutHeader: string | undefined,
  arrivalMs: number,
): Deadline {
  const timeout = Number(timeoutHeader);
  const timeoutMs =
    timeoutHeader !== undefined && Number.isFinite(timeout) && timeout > 0 && timeout <= MAX_TIMEOUT_MS
      ? timeout
      : DEFAULT_QUOTE_TIMEOUT_MS;
  const start = Number(startHeader);
  const startOk =
    startHeader !== undefined &&
    Number.isFinite(start) &&
    start <= arrivalMs + MAX_FUTURE_SKEW_MS &&
    start >= arrivalMs - MAX_PAST_AGE_MS;
  return startOk
    ? { atMs: start + timeoutMs, startMs: start, source: "header" }
    : { atMs: arrivalMs + timeoutMs, startMs: arrivalMs, source: "arrival" };
}

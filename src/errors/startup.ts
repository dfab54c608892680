/**
 * A dependency the service cannot start without (Redis, the chain RPC, the maker key file) is not
 * there. Its message is the one line a person reads: the setting, the address and the cause, e.g.
 *   REDIS_URL: redis://10.0.0.5:6379: not reachable within 5000 ms: ECONNREFUSED (connect ECONNREFUSED ...)
 * `runMain` prints it without a stack trace and exits 69 (EX_UNAVAILABLE).
 */
export class StartupError extends Error {
  constructor(
    readonly setting: string,
    readonly address: string,
    readonly reason: string,
  ) {
    // A reason that already names the setting (a message from the adapter itself) is kept as it is.
    super(reason.startsWith(`${setting}: `) ? reason : `${setting}: ${address}: ${reason}`);
    this.name = "StartupError";
  }
}

/** The cause of a failure in one line: codes and messages along the `cause` chain, de-duplicated. */
export function describeCause(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 5; depth++) {
    const err = cur as { code?: unknown; message?: unknown; cause?: unknown };
    const text = [
      typeof err.code === "string" ? err.code : "",
      typeof err.message === "string" ? err.message : "",
    ]
      .filter(Boolean)
      .join(" ");
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
    cur = err.cause;
  }
  return (parts.join(": ") || String(e)).replace(/\s+/g, " ");
}

/**
 * A circuit breaker for a dependency on a deadline (the quote store on the quote path). Closed, every
 * call goes through, bounded by the caller's time. After `failures` failed calls in a row it opens: calls
 * fail at once (no waiting on a dependency known to be down) for `openMs`; then one call is let
 * through as a probe (half-open) while the others keep failing fast. The probe succeeding closes the
 * circuit; failing, it opens again for another `openMs`.
 *
 * State is exported as `rfq_circuit_open{dependency}` (1 open or probing, 0 closed) and every change
 * is logged once.
 */

import { type Bounded, boundedCall } from "../lib/bounded.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";

export type CircuitState = "closed" | "open" | "half-open";

export interface CircuitOptions {
  /** Dependency name in logs, metrics and refusals ("quoteStore"). */
  name: string;
  /** Failures in a row that open the circuit (default 3). */
  failures?: number;
  /** How long it stays open before a probe, ms (default 250). */
  openMs?: number;
  log?: Logger;
  metrics?: Metrics;
  now?: () => number;
}

export class Circuit {
  readonly name: string;
  private readonly threshold: number;
  private readonly openMs: number;
  private readonly now: () => number;
  private current: CircuitState = "closed";
  private failuresInRow = 0;
  private openedAtMs = 0;
  private probing = false;
  private lastError = "";

  constructor(private readonly opts: CircuitOptions) {
    this.name = opts.name;
    this.threshold = opts.failures ?? 3;
    this.openMs = opts.openMs ?? 250;
    this.now = opts.now ?? Date.now;
    opts.metrics?.circuitOpen.set({ dependency: this.name }, 0);
  }

  get state(): CircuitState {
    return this.current;
  }

  /**
   * Runs `work` bounded by `timeoutMs`, or refuses at once while the circuit is open. The caller gets
   * whatever comes first; the circuit counts the call's own outcome whenever it arrives. A call that
   * merely outlived the caller's deadline is not a failure of the dependency (on a loaded machine a
   * timer can fire before an answer already in the socket is read; counting those would turn
   * overload into an outage); it counts once the call itself fails (the Redis client's command
   * timeout ends a call to a server that stopped answering) or succeeds.
   *
   * Every quote's store write runs through here: `boundedCall` counts the call's outcome in the same
   * reaction that settles the caller, with no async wrapper and no second pair of reactions around it.
   */
  run<T>(work: () => Promise<T>, timeoutMs: number): Promise<Bounded<T>> {
    if (this.current === "open") {
      if (this.now() - this.openedAtMs < this.openMs || this.probing) return Promise.resolve(this.refusal());
      this.moveTo("half-open");
    } else if (this.current === "half-open" && this.probing) {
      return Promise.resolve(this.refusal());
    }
    const probe = this.current === "half-open";
    if (probe) this.probing = true;
    let call: Promise<T>;
    try {
      call = work();
    } catch (err) {
      call = Promise.reject(err);
    }
    return boundedCall(call, timeoutMs, (error) => this.record(error === undefined, error ?? "", probe));
  }

  private refusal<T>(): Bounded<T> {
    return { ok: false, timedOut: false, error: `${this.name} unavailable (${this.lastError})` };
  }

  private record(ok: boolean, error: string, probe: boolean): void {
    if (probe) this.probing = false;
    if (ok) {
      this.failuresInRow = 0;
      if (this.current !== "closed") this.moveTo("closed");
      return;
    }
    this.failuresInRow++;
    this.lastError = error;
    if (this.current === "half-open" || this.failuresInRow >= this.threshold) {
      this.openedAtMs = this.now();
      if (this.current !== "open") this.moveTo("open");
    }
  }

  private moveTo(next: CircuitState): void {
    const was = this.current;
    this.current = next;
    this.opts.metrics?.circuitOpen.set({ dependency: this.name }, next === "closed" ? 0 : 1);
    if (next === "open" && was === "closed") {
      this.opts.log?.warn(
        { dependency: this.name, failures: this.failuresInRow, error: this.lastError },
        "circuit open: failing fast",
      );
    } else if (next === "closed") {
      this.opts.log?.info({ dependency: this.name }, "circuit closed: dependency answering again");
    }
  }
}

/**
 * The operator-facing switches every instance obeys: a global pause (kill switch) and per-pair enable
 * overrides, read synchronously on the quote path. Adapters: memory.ts (one process) and redis.ts
 * (every instance through Redis); switches.ts is the state both share.
 */

export interface ControlState {
  paused: boolean;
  pauseReason?: string;
  pausedAtMs?: number;
  /** Runtime overrides of the pairs' configured `enabled`, by "BASE/QUOTE". */
  pairs: Record<string, boolean>;
  /** False when the shared switches could not be read lately; the instance then refuses to quote. */
  known: boolean;
}

export interface Controls {
  /** No quote may be given: paused, or (shared controls) the switches are unknown. Synchronous. */
  isPaused(): boolean;
  /**
   * Why the switches are unknown (shared controls whose store cannot be read), or undefined. An outage
   * refuses quotes like a pause does, but is reported as what it is (`CONTROLS_UNAVAILABLE`).
   */
  outage(): string | undefined;
  /** The runtime override for a pair, or undefined to use its configured `enabled`. Synchronous. */
  pairOverride(pairKey: string): boolean | undefined;
  state(): ControlState;
  pause(reason: string): Promise<void>;
  resume(): Promise<void>;
  /** Enables or disables a pair at runtime; null removes the override. */
  setPair(pairKey: string, enabled: boolean | null): Promise<void>;
  /** Called whenever this instance learns of a change to the switches; returns unsubscribe. */
  onChange(listener: (state: ControlState) => void): () => void;
  start(): Promise<void>;
  close(): Promise<void>;
}

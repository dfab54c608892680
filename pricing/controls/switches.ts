/** The switches' in-memory state and listeners, shared by both Controls adapters. */
import type { ControlState } from "./interface.ts";

/**
 * The switches as this instance knows them, and who to tell when they change: the part both adapters
 * share. Subclasses decide how the state is written (memory, or Redis then read back).
 */
export abstract class KnownSwitches {
  protected paused = false;
  protected reason: string | undefined;
  protected atMs: number | undefined;
  protected pairs = new Map<string, boolean>();
  private readonly listeners = new Set<(state: ControlState) => void>();

  /** Whether this instance's view of the switches is current (shared controls can lose track). */
  protected known(): boolean {
    return true;
  }

  isPaused(): boolean {
    return this.paused || !this.known();
  }

  outage(): string | undefined {
    return this.known() ? undefined : this.outageDetail();
  }

  protected outageDetail(): string {
    return "the shared switches cannot be read";
  }

  pairOverride(pairKey: string): boolean | undefined {
    return this.pairs.get(pairKey);
  }

  state(): ControlState {
    return {
      paused: this.paused,
      ...(this.reason !== undefined ? { pauseReason: this.reason } : {}),
      ...(this.atMs !== undefined ? { pausedAtMs: this.atMs } : {}),
      pairs: Object.fromEntries(this.pairs),
      known: this.known(),
    };
  }

  onChange(listener: (state: ControlState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  protected changed(): void {
    const state = this.state();
    for (const l of this.listeners) l(state);
  }
}

/**
 * The level sets the stream sent and that a v2 fill may still take: per pair, each set with its lot,
 * its levels per side and when it stops being valid (the quote's timestamp plus its expiry). A withdrawn
 * pair (pause, pair switch, stale price) forgets its sets at once, so a swap built on them is refused
 * even while the operator still shows them.
 */
import type { LotLevel } from "./levels.ts";

export interface StreamedSet {
  pairKey: string;
  sequence: bigint;
  lotSizeBase: bigint;
  bids: readonly LotLevel[];
  asks: readonly LotLevel[];
  /** Unix ms: the quote's timestamp, and the end of its validity (timestamp + quote_expiry_time). */
  sentAtMs: number;
  validUntilMs: number;
}

export class StreamedLevels {
  private readonly byPair = new Map<string, StreamedSet[]>();

  constructor(private readonly now: () => number = Date.now) {}

  add(set: StreamedSet): void {
    const kept = this.valid(set.pairKey);
    kept.push(set);
    this.byPair.set(set.pairKey, kept);
  }

  /** The pair's sets still valid at `now`, oldest first. */
  valid(pairKey: string, now: number = this.now()): StreamedSet[] {
    return (this.byPair.get(pairKey) ?? []).filter((s) => s.validUntilMs > now);
  }

  withdraw(pairKey: string): void {
    this.byPair.delete(pairKey);
  }

  pairs(): string[] {
    return [...this.byPair.keys()];
  }
}

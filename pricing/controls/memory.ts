/** MemoryControls: the switches of one process (the embedded default). */
import type { Controls } from "./interface.ts";
import { KnownSwitches } from "./switches.ts";

/** One process: the embedded default. */
export class MemoryControls extends KnownSwitches implements Controls {
  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async pause(reason: string): Promise<void> {
    this.paused = true;
    this.reason = reason;
    this.atMs = this.now();
    this.changed();
  }
  async resume(): Promise<void> {
    this.paused = false;
    this.reason = undefined;
    this.atMs = undefined;
    this.changed();
  }
  async setPair(pairKey: string, enabled: boolean | null): Promise<void> {
    if (enabled === null) this.pairs.delete(pairKey);
    else this.pairs.set(pairKey, enabled);
    this.changed();
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

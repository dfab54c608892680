/** MemoryTakerStanding: the taker lists of one process (the paper setup, one instance). */
import type { TakerEntry, TakerList, TakerStanding } from "./interface.ts";
import { TakerView } from "./view.ts";

export class MemoryTakerStanding extends TakerView implements TakerStanding {
  constructor(
    config: ConstructorParameters<typeof TakerView>[0],
    private readonly now: () => number = Date.now,
  ) {
    super(config);
  }

  async put(list: TakerList, entry: TakerEntry): Promise<void> {
    // Lapsed entries go when the list is next written, so it never grows past the live ones.
    const nowMs = this.now();
    for (const [k, e] of this.lists[list])
      if (e.untilMs !== undefined && e.untilMs <= nowMs) this.lists[list].delete(k);
    this.lists[list].set(entry.taker, entry);
  }
  async remove(list: TakerList, taker: string): Promise<boolean> {
    return this.lists[list].delete(taker);
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

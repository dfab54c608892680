/** Static prices from configuration: the embedded default. Never stale. */
import { parseDecimal } from "../amounts/decimal.ts";
import type { PricePoint, PriceSource } from "./interface.ts";

export class StaticPriceSource implements PriceSource {
  readonly maxAgeMs = Number.POSITIVE_INFINITY;
  private readonly prices = new Map<string, PricePoint>();

  constructor(
    readonly name: string,
    prices: Record<string, string>,
  ) {
    for (const [pair, value] of Object.entries(prices)) {
      this.prices.set(pair, { mid: parseDecimal(value), updatedAtMs: Date.now() });
    }
  }

  price(pairKey: string): PricePoint | undefined {
    return this.prices.get(pairKey);
  }

  async start(): Promise<void> {}
  async close(): Promise<void> {}
}

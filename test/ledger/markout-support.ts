/**
 * The markout tracker as the markout tests drive it: one "static" price source the test moves, an
 * outbox that keeps the markout records it is given, a silent log.
 */
import type { PricePoint, PriceSource } from "../../pricing/interface.ts";
import type { FillJournal } from "../../src/journal/interface.ts";
import { type MarkoutHorizon, MarkoutTracker } from "../../src/ledger/markouts.ts";
import type { LedgerRecord, MarkoutRecord } from "../../src/ledger/records.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { testConfig } from "../support/config.ts";

/** A tracker at `horizons` over `source` (the shipped configuration's "static"); `records`: what it appended. */
export function markoutTracker(horizons: readonly MarkoutHorizon[], source: PriceSource, sampleMs: number) {
  const records: MarkoutRecord[] = [];
  const journal = {
    appendLedger: async (r: LedgerRecord) => {
      if (r.kind === "markout") records.push(r);
    },
  } as unknown as FillJournal;
  const t = new MarkoutTracker({
    config: testConfig(),
    priceSources: new Map([["static", source]]),
    journal,
    metrics: new Metrics(),
    log: createLogger("silent"),
    horizons,
    sampleMs,
  });
  return { t, records };
}

/** The maker sold 1 SOL for 100.5 USDC. */
export const SOLD = {
  pair: "SOL/USDC",
  side: "sell",
  baseAmount: "1000000000",
  quoteAmount: "100500000",
} as const;

/** The "static" source of the shipped configuration, its SOL/USDC mid `first` until the test sets one. */
export function settableSource(first?: PricePoint): { source: PriceSource; set(mid: bigint): void } {
  let point = first;
  return {
    source: {
      name: "static",
      maxAgeMs: Number.POSITIVE_INFINITY,
      price: (pair) => (pair === "SOL/USDC" ? point : undefined),
      start: async () => {},
      close: async () => {},
    },
    set(mid) {
      point = { mid: { num: mid, den: 1n }, updatedAtMs: Date.now() };
    },
  };
}

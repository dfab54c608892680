/**
 * The markout flagger: after a taker's 60 s markout is journaled (src/ledger/markouts.ts), averages it
 * with the taker's previous 60 s markouts from the ledger, its last `minFills` fills in all, and flags
 * the taker for `flagTtlMs` when the average is below `flagBelowBps`. An allowed taker is never judged;
 * a denied or already flagged one has nothing to gain from it. A previous fill whose markout is still
 * in the outbox (the ledger writer drains it every 500 ms) is not counted yet.
 */
import type { ToxicityConfig } from "../../config/schema.ts";
import type { Ledger } from "../ledger/ledger.ts";
import {
  FLAG_HORIZON,
  type MarkoutJudge,
  type MarkoutSample,
  recentTakerMarkouts,
} from "../ledger/markouts.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { TakerStanding } from "./interface.ts";

export interface ToxicFlaggerOptions {
  config: ToxicityConfig;
  takers: TakerStanding;
  ledger: Promise<Ledger>;
  metrics: Metrics;
  log: Logger;
  now?: () => number;
}

export class ToxicFlagger implements MarkoutJudge {
  private readonly now: () => number;

  constructor(private readonly opts: ToxicFlaggerOptions) {
    this.now = opts.now ?? Date.now;
  }

  async judge(sample: MarkoutSample): Promise<void> {
    if (sample.horizon !== FLAG_HORIZON) return;
    const { config, takers } = this.opts;
    const { taker } = sample;
    if (takers.standing(taker, this.now()).kind !== "none") return;
    const ledger = await this.opts.ledger;
    const earlier = await recentTakerMarkouts(
      ledger.db,
      taker,
      FLAG_HORIZON,
      config.minFills - 1,
      sample.txSignature,
    );
    const all = [sample.markoutBps, ...earlier];
    if (all.length < config.minFills) return;
    const avgBps = all.reduce((a, b) => a + b, 0) / all.length;
    if (!(avgBps < config.flagBelowBps)) return;
    const atMs = this.now();
    const untilMs = atMs + config.flagTtlMs;
    await takers.put("flags", {
      taker,
      reason: `average ${FLAG_HORIZON} markout ${avgBps.toFixed(2)} bps over its last ${all.length} fills is below ${config.flagBelowBps} bps`,
      source: "markouts",
      atMs,
      untilMs,
      avgBps,
      fills: all.length,
    });
    this.opts.metrics.toxicFlags.inc({ source: "markouts" });
    this.opts.log.warn(
      {
        taker,
        quoteId: sample.quoteId,
        txSignature: sample.txSignature,
        avgBps,
        fills: all.length,
        untilMs,
      },
      "toxicity: taker flagged on its markouts",
    );
  }
}

/**
 * The markout flagger's rule, against the real ledger (PGlite and the test PostgreSQL): a taker is
 * flagged when the average 60 s markout of its last `minFills` fills (the one being judged included,
 * even before the ledger writer has written it) is below `flagBelowBps`; older fills, other horizons
 * and other takers do not count; an allowed taker is never flagged.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toxicitySchema } from "../../config/schema.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import type { MarkoutRecord } from "../../src/ledger/records.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { ToxicFlagger } from "../../src/toxicity/flagger.ts";
import { MemoryTakerStanding } from "../../src/toxicity/memory.ts";
import { BACKENDS, freshLedger } from "../ledger/support.ts";

let n = 0;
const markout = (taker: string, bps: number, atMs: number, horizon = "60s"): MarkoutRecord => ({
  kind: "markout",
  txSignature: `sig-${process.pid}-${n++}`,
  quoteId: `q-${n}`,
  horizon,
  horizonMs: 60_000,
  pair: "JUP/USDC",
  side: "buy",
  taker,
  price: 0.8,
  mid: 0.8,
  markoutBps: bps,
  atMs,
});

for (const backend of BACKENDS) {
  describe(`the markout flagger (${backend})`, () => {
    // One ledger for the file (a new PGlite takes seconds); every test has takers of its own.
    let shared: Ledger;
    beforeAll(async () => {
      shared = await freshLedger(backend);
    }, 60_000);
    afterAll(() => shared?.db.close());
    const setup = async (over: Record<string, unknown> = {}) => {
      const ledger = shared;
      const config = toxicitySchema.parse({ enabled: true, minFills: 3, flagBelowBps: -10, ...over });
      const takers = new MemoryTakerStanding(config);
      const metrics = new Metrics();
      const flagger = new ToxicFlagger({
        config,
        takers,
        ledger: Promise.resolve(ledger),
        metrics,
        log: createLogger("silent"),
      });
      const judge = (r: MarkoutRecord) =>
        flagger.judge({
          txSignature: r.txSignature,
          quoteId: r.quoteId,
          taker: r.taker as string,
          pair: r.pair,
          horizon: r.horizon,
          markoutBps: r.markoutBps,
        });
      return { ledger, takers, metrics, judge };
    };

    it("flags on the average of the last minFills fills only, counting the one being judged", async () => {
      const { ledger, takers, judge } = await setup();
      const t = Keypair.generate().publicKey.toBase58();
      const other = Keypair.generate().publicKey.toBase58();
      await ledger.write([
        markout(t, 100, 1_000), // old and good: outside the last 3
        markout(t, -20, 2_000),
        markout(t, -500, 2_500, "5s"), // another horizon
        markout(other, -500, 2_600), // another taker
      ]);
      // Two fills (-20, -5): fewer than 3.
      await judge(markout(t, -5, 3_000));
      expect(takers.standing(t, Date.now()).kind).toBe("none");
      await ledger.write([markout(t, -5, 3_000)]);
      // Last three: -20, -5, -4 -> -9.67: not below -10.
      await judge(markout(t, -4, 4_000));
      expect(takers.standing(t, Date.now()).kind).toBe("none");
      await ledger.write([markout(t, -4, 4_000)]);
      // Last three: -5, -4, -30 -> -13: flagged, for flagTtlMs.
      const before = Date.now();
      await judge(markout(t, -30, 5_000));
      const s = takers.standing(t, Date.now());
      expect(s).toMatchObject({ kind: "flagged", entry: { source: "markouts", fills: 3 } });
      if (s.kind !== "flagged") return;
      expect(s.entry.avgBps).toBeCloseTo(-13, 9);
      expect(s.entry.untilMs).toBeGreaterThanOrEqual(before + 86_400_000);
    });

    it("never flags an allowed taker, whatever its markouts", async () => {
      const t = Keypair.generate().publicKey.toBase58();
      const { takers, metrics, judge } = await setup({ minFills: 1, allow: [t] });
      await judge(markout(t, -1_000, 1_000));
      expect(takers.standing(t, Date.now()).kind).toBe("allowed");
      expect(takers.list(Date.now()).flags).toEqual([]);
      expect(await metrics.registry.metrics()).not.toMatch(/rfq_toxic_flags_total\{/);
    });
  });
}

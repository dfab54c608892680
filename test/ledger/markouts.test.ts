/**
 * Markouts through the real path: prices from the maker's engine through Redis (a real Redis price
 * feed), an honest fill that lands, then a scripted price move: the markouts at fill time and at the
 * later horizons (shortened here) come out with the sign and size the move gives, on
 * `rfq_markout_bps` and in the ledger, where they aggregate per taker and per pair.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, describe, expect, it } from "vitest";
import { publishPrice } from "../../pricing/redis.ts";
import { fundTaker } from "../../src/chain/local/seed.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { markoutBps } from "../../src/ledger/markouts.ts";
import { markoutsByPair, markoutsByTaker } from "../../src/ledger/report.ts";
import { MINT } from "../support/config.ts";
import { askQuote, createHarness, type Harness, listen, operatorFill, postSwap } from "../support/harness.ts";
import { fileRedis } from "../support/redis.ts";
import { freshLedger } from "./support.ts";

const { redis, prefix } = fileRedis();
const names = { keyPrefix: `${prefix}price:`, channel: `${prefix}prices` };

describe("markouts of a landed fill after a scripted price move", () => {
  let ledger: Ledger;
  let h: Harness;
  afterAll(async () => {
    await h?.close();
    await ledger?.db.close();
  });

  it("come out with the right sign and size, in the metric and in the ledger per taker and pair", {
    timeout: 120_000,
  }, async () => {
    await publishPrice(redis, "JUP/USDC", { ts: Date.now(), mid: "0.80" }, names);
    ledger = await freshLedger("postgres");
    h = await createHarness({
      redis: { redis, prefix: `${prefix}svc:` },
      ledger,
      ledgerWriter: { intervalMs: 50 },
      markoutHorizons: [
        { label: "0s", ms: 0 },
        { label: "5s", ms: 400 },
        { label: "60s", ms: 800 },
      ],
      vary: (f) => ({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "JUP" && p.quote === "USDC" ? { ...p, priceSource: "engine" } : p,
        ),
        priceSources: {
          ...f.priceSources,
          engine: { kind: "redis", ...names, maxAgeMs: 600_000, pollMs: 100 },
        },
      }),
    });
    const server = await listen(h.app);
    try {
      const taker = Keypair.generate();
      fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
      // The taker sells 1 JUP: the maker buys base.
      const { response, stored } = await askQuote(h, server.fetch, {
        tokenIn: MINT.JUP,
        tokenOut: MINT.USDC,
        amount: 1_000_000_000n,
        taker: taker.publicKey,
      });
      const tx = await operatorFill(h, stored, taker.publicKey);
      tx.sign([taker]);
      const swap = await postSwap(server.fetch, {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      expect(swap.body.state).toBe("accepted");
      expect(await h.confirmations.settled(response.quoteId)).toBe("landed");
      // The script: right after the fill the price drops 2% (the taker sold before a fall).
      await publishPrice(redis, "JUP/USDC", { ts: Date.now(), mid: "0.784" }, names);
      const markouts = h.service.markouts;
      const until = Date.now() + 20_000;
      while ((markouts?.scheduled ?? 0) > 0 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 50));
      expect(markouts?.scheduled).toBe(0);
      await h.service.ledgerWriter?.drain();

      // The maker's trade: the quoted amountIn of JUP for the quoted amountOut of USDC (the operator's
      // fee is part of what it gives).
      const dec = (mint: string) => 10 ** (h.config.tokensByMint.get(mint)?.decimals ?? 0);
      const price =
        Number(stored.response.amountOut) /
        dec(MINT.USDC) /
        (Number(stored.response.amountIn) / dec(MINT.JUP));
      const at0 = ((0.8 - price) / 0.8) * 10_000;
      const later = ((0.784 - price) / 0.784) * 10_000;
      expect(markoutBps("buy", price, 0.8)).toBeCloseTo(at0, 9);
      expect(at0).toBeGreaterThan(0); // the spread kept at fill time
      expect(later).toBeLessThan(0); // the 2% fall outweighs it
      expect(at0 - later).toBeGreaterThan(150); // about 2% of the price

      const rows = await ledger.db.query<{ horizon: string; markout_bps: number; mid: number }>(
        "SELECT horizon, markout_bps, mid FROM markouts ORDER BY horizon_ms",
      );
      expect(rows.map((r) => r.horizon)).toEqual(["0s", "5s", "60s"]);
      expect(rows[0]?.markout_bps).toBeCloseTo(at0, 6);
      expect(rows[1]?.markout_bps).toBeCloseTo(later, 6);
      expect(rows[2]?.markout_bps).toBeCloseTo(later, 6);

      const metrics = await h.metrics.registry.metrics();
      expect(metrics).toMatch(/rfq_markout_bps_count\{horizon="60s",pair="JUP\/USDC"\} 1/);
      expect(metrics).not.toMatch(/rfq_markout_bps[^\n]*taker/);

      const range = { fromMs: 0, toMs: Date.now() + 60_000 };
      const byTaker = await markoutsByTaker(ledger.db, range);
      expect(byTaker).toContainEqual(
        expect.objectContaining({ taker: taker.publicKey.toBase58(), horizon: "60s", fills: 1 }),
      );
      expect(byTaker.find((t) => t.horizon === "60s")?.avgBps).toBeCloseTo(later, 6);
      const byPair = await markoutsByPair(ledger.db, range);
      expect(byPair.find((p) => p.pair === "JUP/USDC" && p.horizon === "5s")?.avgBps).toBeCloseTo(later, 6);
    } finally {
      await server.close();
    }
  });
});

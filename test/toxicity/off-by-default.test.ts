/**
 * Off by default changes nothing: with the shipped `toxicity` settings (enabled: false) a taker on the
 * configured deny list, with a flag left in Redis, after a fill the price then moved against the maker
 * by 2%, is quoted exactly as any other taker, fills an indicative quote, is never flagged, and the
 * admin routes say the controls are off. Real Redis, the real ledger (PGlite), the local chain, the
 * webhook on a real socket.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, describe, expect, it } from "vitest";
import { publishPrice } from "../../pricing/redis.ts";
import { fundTaker } from "../../src/chain/local/seed.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { ADMIN_KEY_HEADER } from "../../src/routes/admin.ts";
import { takerKeys } from "../../src/toxicity/redis.ts";
import { freshLedger } from "../ledger/support.ts";
import { defaultFileConfig, MINT } from "../support/config.ts";
import { askQuote, createHarness, type Harness, listen, operatorFill, postSwap } from "../support/harness.ts";
import { fileRedis } from "../support/redis.ts";

const { redis, prefix } = fileRedis();
const names = { keyPrefix: `${prefix}price:`, channel: `${prefix}prices` };
const ADMIN_KEY = "admin-key-for-the-off-test";

describe("toxic-flow controls off (the default)", () => {
  let h: Harness | undefined;
  let ledger: Ledger | undefined;
  afterAll(async () => {
    await h?.close();
    await ledger?.db.close();
  });

  it("ships off, and then a denied, flagged, toxic taker is quoted and filled like any other, and never flagged", {
    timeout: 120_000,
  }, async () => {
    expect(defaultFileConfig().toxicity).toMatchObject({ enabled: false, deny: [], allow: [] });
    const taker = Keypair.generate();
    const who = taker.publicKey.toBase58();
    await redis.hset(
      takerKeys(`${prefix}svc:tox:`).flags,
      who,
      JSON.stringify({ reason: "left over", atMs: Date.now(), untilMs: Date.now() + 600_000 }),
    );
    await publishPrice(redis, "JUP/USDC", { ts: Date.now(), mid: "0.80" }, names);
    ledger = await freshLedger("pglite");
    h = await createHarness({
      env: { ADMIN_API_KEY: ADMIN_KEY },
      redis: { redis, prefix: `${prefix}svc:` },
      ledger,
      ledgerWriter: { intervalMs: 50 },
      markoutHorizons: [
        { label: "0s", ms: 0 },
        { label: "60s", ms: 300 },
      ],
      vary: (f) => ({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "JUP" && p.quote === "USDC" ? { ...p, priceSource: "engine" } : p,
        ),
        priceSources: {
          ...f.priceSources,
          engine: { kind: "redis", ...names, maxAgeMs: 600_000, pollMs: 50 },
        },
        // Only the lists set: `enabled` stays at its default.
        toxicity: { ...f.toxicity, deny: [who], minFills: 1, flagBelowBps: 0 },
      }),
    });
    const server = await listen(h.app);
    const admin = await listen(h.service.opsApp);
    try {
      fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 50_000_000_000n } });
      const ask = { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_007n };
      const named = await askQuote(h, server.fetch, { ...ask, taker: taker.publicKey });
      const blind = await askQuote(h, server.fetch, ask);
      expect(named.response.amountOut).toBe(blind.response.amountOut);

      // An indicative quote, filled by the taker: accepted and landed; then the price falls 2%.
      const tx = await operatorFill(h, blind.stored, taker.publicKey);
      tx.sign([taker]);
      const swap = await postSwap(server.fetch, { ...blind.response, transaction: tx });
      expect(swap.body.state).toBe("accepted");
      expect(await h.confirmations.settled(blind.response.quoteId)).toBe("landed");
      await publishPrice(redis, "JUP/USDC", { ts: Date.now(), mid: "0.784" }, names);
      const m = h.service.markouts;
      const until = Date.now() + 20_000;
      while ((m?.scheduled ?? 0) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
      await m?.idle();
      await h.service.ledgerWriter?.drain();
      const rows = await ledger.db.query<{ markout_bps: number }>(
        "SELECT markout_bps FROM markouts WHERE horizon = '60s'",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.markout_bps).toBeLessThan(0);

      expect(h.service.takers).toBeUndefined();
      const again = await askQuote(h, server.fetch, { ...ask, taker: taker.publicKey });
      const again2 = await askQuote(h, server.fetch, ask);
      expect(again.response.amountOut).toBe(again2.response.amountOut);

      const list = await admin.fetch("/admin/takers", { headers: { [ADMIN_KEY_HEADER]: ADMIN_KEY } });
      expect(list.status).toBe(404);
      expect(((await list.json()) as { message: string }).message).toContain("toxicity.enabled");
      const metrics = await h.metrics.registry.metrics();
      expect(metrics).not.toMatch(/rfq_toxic_\w+\{/);
      // Present from the start at 0 (a counter's closed label set), and still 0.
      expect(metrics).toMatch(
        /\nrfq_swaps_total\{state="rejectedWithReason",reason="botActivityDetected"\} 0\n/,
      );
    } finally {
      await server.close();
      await admin.close();
    }
  });
});

/**
 * Stale prices answer 404 at the HTTP edge: POST /quote over a real socket, prices from the maker's
 * engine through a real Redis.
 */
import { describe, expect, it } from "vitest";
import { MemoryInventory } from "../../inventory/memory.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import { publishPrice, type RedisPriceSource } from "../../pricing/redis.ts";
import { closePriceSources, startPriceSources } from "../../pricing/sources.ts";
import { makeWorld } from "../inventory/support.ts";
import { postQuote, startWebhook } from "../ops/webhook.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { fileRedis } from "../support/redis.ts";

const { redis, prefix } = fileRedis();
const names = { keyPrefix: `${prefix}price:`, channel: `${prefix}prices` };
const cleanups = cleanupsAfterEach();

function nextUpdate(s: RedisPriceSource, ts: number): Promise<void> {
  return new Promise((resolve) => {
    const off = s.onUpdate((_p, point) => {
      if (point.updatedAtMs === ts) {
        off();
        resolve();
      }
    });
  });
}

describe("POST /quote with prices from Redis", () => {
  it("answers 404 while the pair's price is older than maxAgeMs, and 200 once a fresh one arrives", async () => {
    const w = makeWorld(
      (f) => ({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "SOL" && p.quote === "USDC" ? { ...p, priceSource: "engine" } : p,
        ),
        priceSources: {
          ...f.priceSources,
          // An age limit no loaded machine can blur: the stale price is an hour old, the fresh one new.
          engine: { kind: "redis", ...names, maxAgeMs: 60_000, pollMs: 500 },
        },
      }),
      {},
      { redis },
    );
    const sources = w.sources;
    await startPriceSources(sources);
    cleanups.push(() => closePriceSources(sources));
    const engine = sources.get("engine") as RedisPriceSource;
    // The inventory's clock is the test's; prices are judged on the wall clock.
    w.clock.t = Date.now();
    const inventory = new MemoryInventory(w.options());
    await inventory.start();
    cleanups.push(() => inventory.close());
    const hook = await startWebhook({
      config: w.config,
      chain: w.chain,
      sources,
      controls: new MemoryControls(),
      inventory,
      maker: w.maker,
    });
    cleanups.push(() => hook.close());
    const sell = { tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: 1_000_000_000n };

    const old = Date.now() - 3_600_000;
    let seen = nextUpdate(engine, old);
    await publishPrice(redis, "SOL/USDC", { ts: old, mid: "180.25" }, names);
    await seen;
    const stale = await postQuote(hook.url, sell);
    expect(stale.status).toBe(404);
    expect(stale.body.message).toMatch(/^no quote: SOL\/USDC price is \d+ ms old$/);
    // Other pairs, on other sources, are unaffected.
    expect((await postQuote(hook.url, { ...sell, tokenOut: MINT.USDT })).status).toBe(200);

    const fresh = Date.now();
    seen = nextUpdate(engine, fresh);
    await publishPrice(redis, "SOL/USDC", { ts: fresh, mid: "180.25" }, names);
    await seen;
    const ok = await postQuote(hook.url, sell);
    expect(ok.status).toBe(200);
    expect(ok.body.amountOut).toBe(
      // Whole USDC atoms per lot (100,000 lamports), floored, times the 10,000 lots in 1 SOL.
      (((100_000n * 18025n * 1_000_000n * 9_995n) / (100n * 10n ** 9n * 10_000n)) * 10_000n).toString(),
    );
  });
});

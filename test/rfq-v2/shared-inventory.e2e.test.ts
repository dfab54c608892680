/**
 * One inventory for both channels, through the composition `npm start` uses (the webhook and its RFQ
 * v2 stream built together over one inventory): a reservation of a webhook fill shrinks the streamed
 * levels of that token at once, and a v2 swap's reservation shrinks what /quote offers.
 */
import { Keypair } from "@solana/web3.js";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryInventory } from "../../inventory/memory.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import { RfqV2StandIn } from "../../sandbox/rfq-v2/server.ts";
import { creditSol } from "../../src/chain/local/seed.ts";
import { makeWorld } from "../inventory/support.ts";
import { postQuote, startWebhook } from "../ops/webhook.ts";
import { MINT } from "../support/config.ts";
import { solUsdcBid } from "../support/rfq-v2.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});
const SOL = 1_000_000_000n;

async function until<T>(get: () => T | undefined, what: string, ms = 3_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the webhook and the RFQ v2 stream share one inventory", () => {
  it("a webhook fill's reservation shrinks the streamed asks, and a v2 swap's reservation shrinks what /quote offers", async () => {
    // 300 SOL on hand: below the pair's 500 SOL maximum, so the inventory is what bounds the asks.
    const w = makeWorld((f) => ({ ...f, rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"] } }), {
      inventory: { SOL: 300n * SOL },
    });
    const payer = Keypair.generate();
    creditSol(w.chain, payer.publicKey, SOL);
    // Its swaps load accounts from lookup tables on the world's chain, resolved by the composed stream.
    const standIn = new RfqV2StandIn({
      makers: [{ makerId: "mm", token: "jwt-shared-inventory" }],
      tables: { chain: w.chain, payer },
    });
    const url = await standIn.listen();
    closers.push(() => standIn.close());
    const inventory = new MemoryInventory({ ...w.options(), now: Date.now });
    await inventory.start();
    closers.push(() => inventory.close());
    const env = {
      ...w.config.env,
      RFQ_V2_URL: url,
      RFQ_V2_MAKER_ID: "mm",
      RFQ_V2_AUTH_TOKEN: "jwt-shared-inventory",
    };
    const hook = await startWebhook({
      config: { ...w.config, env },
      chain: w.chain,
      sources: w.sources,
      controls: new MemoryControls(),
      inventory,
      maker: w.maker,
    });
    closers.push(() => hook.close());
    const asks = () => {
      const live = standIn.liveSet("mm", MINT.SOL, MINT.USDC);
      return live?.quote.ask_levels.reduce((s, l) => s + BigInt(l.volume), 0n);
    };
    const full = await until(asks, "the first level set");
    expect(full).toBeLessThanOrEqual(300n * SOL);
    expect(full).toBeGreaterThan(299n * SOL);

    // A webhook fill claims 100 SOL (what the swap executor reserves for a claimed quote).
    await inventory.reserve({
      quoteId: "webhook-fill-1",
      mint: MINT.SOL,
      amount: 100n * SOL,
      expiresAtMs: Date.now() + 60_000,
    });
    const shrunk = await until(() => {
      const a = asks();
      return a !== undefined && a <= full - 100n * SOL ? a : undefined;
    }, "asks 100 SOL smaller");
    expect(shrunk).toBeGreaterThan(full - 101n * SOL);
    await inventory.release("webhook-fill-1");
    await until(() => (asks() === full ? true : undefined), "the asks back");

    // /quote offers 150 SOL now; a v2 swap taking about 200 SOL leaves it unable to.
    const ask150 = {
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      amount: 150n * SOL,
      quoteType: "exactOut" as const,
    };
    expect((await postQuote(hook.url, ask150)).status).toBe(200);
    const swap = await standIn.offerSwap(
      // 36,200 USDC: about 200 SOL at 180.25
      solUsdcBid({ makerId: "mm", taker: Keypair.generate(), inAmount: 36_200_000_000n }),
    );
    expect(swap).toMatchObject({ ok: true });
    expect(swap.offered.message.addressTableLookups.length).toBeGreaterThan(0);
    const declined = await postQuote(hook.url, ask150);
    expect(declined.status).toBe(404);
    expect(String(declined.body.message)).toMatch(/^no quote: 150000000000 SOL asked, \d+ available/);
  });
});

/**
 * The RFQ v2 channel remembers every swap_uuid it answered (a redelivered SWAP_AVAILABLE is refused
 * V2_DUPLICATE_SWAP), and forgets it once the swap can no longer land: no later than the levels'
 * validity (rfqV2.quoteExpirySeconds) and the reservation's grace (30 s) after it first came, so the
 * set stays bounded however long the channel runs. Driven through onSwap on a clock moved by hand.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { MemoryInventory } from "../../inventory/memory.ts";
import { QuotingBook } from "../../pricing/book.ts";
import { MemoryControls } from "../../pricing/controls/memory.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { MemoryQuoteStore } from "../../src/quote-store/memory.ts";
import { rfqV2Metrics } from "../../src/rfq-v2/metrics.ts";
import { RfqV2Service } from "../../src/rfq-v2/service.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";
import { makeWorld } from "../inventory/support.ts";

const EXPIRY_S = 30;
const GRACE_MS = 30_000;

function service() {
  const w = makeWorld((f) => ({
    ...f,
    rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"], quoteExpirySeconds: EXPIRY_S },
  }));
  const clock = { t: Date.parse("2031-05-01T00:00:00Z") };
  const registry = new Registry();
  const s = new RfqV2Service({
    config: w.config,
    chain: w.chain,
    settings: { url: "http://127.0.0.1:9", makerId: "m", authToken: "t".repeat(32) },
    book: new QuotingBook(w.config, w.sources, { controls: new MemoryControls() }),
    inventory: new MemoryInventory(w.options()),
    signer: new KeypairSigner(w.maker),
    log: createLogger("silent"),
    metrics: rfqV2Metrics(registry),
    messages: new MemoryQuoteStore(),
    now: () => clock.t,
  });
  const outcomes = async () =>
    Object.fromEntries(
      (await registry.getSingleMetric("rfq_v2_swaps_total")!.get()).values.map((v) => [
        v.labels.outcome,
        v.value,
      ]),
    );
  return { s, clock, outcomes };
}

describe("the seen-swaps set is bounded by expiry", () => {
  it("refuses a swap id again while it may still land (V2_DUPLICATE_SWAP), forgets it after the levels' validity plus the grace, and so holds only the recent ones", async () => {
    const { s, clock, outcomes } = service();
    for (let i = 0; i < 50; i++) await s.onSwap(`old-${i}`, "not a transaction");
    expect(s.seenSwaps()).toBe(50);
    // Just before the horizon: still remembered, a redelivery refused as a duplicate.
    clock.t += EXPIRY_S * 1000 + GRACE_MS - 1;
    await s.onSwap("old-0", "not a transaction");
    expect(await outcomes()).toMatchObject({ MALFORMED_TRANSACTION: 50, V2_DUPLICATE_SWAP: 1 });
    expect(s.seenSwaps()).toBe(50);
    // Past it: the old ids are dropped on the next swap; only the new one is held.
    clock.t += 1_001;
    await s.onSwap("new-0", "not a transaction");
    expect(s.seenSwaps()).toBe(1);
    // A forgotten id is judged again on its bytes, not answered as a duplicate.
    await s.onSwap("old-1", "not a transaction");
    expect(await outcomes()).toMatchObject({ MALFORMED_TRANSACTION: 52, V2_DUPLICATE_SWAP: 1 });
    expect(s.seenSwaps()).toBe(2);
    s.close();
  });
});

/**
 * Raised priority fees end to end, over a real socket on the local chain: a fill whose wallet raised
 * the compute-unit price by one micro-lamport above the quoted prioritizationFeeToUse is accepted and
 * lands, the maker paying exactly the raised fee; one raised 100,000-fold is refused with
 * RAISED_FEE_CAP_EXCEEDED, nothing signed or sent, no balance moved; both are counted in
 * rfq_priority_fee_raises_total.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker, lamports } from "../../src/chain/local/seed.ts";
import { makerFeeLamports } from "../../src/fill/rules/compute-budget.ts";
import { MINT } from "../support/config.ts";
import { askQuote, operatorFill, postSwap } from "../support/harness.ts";
import { type SwapBed, swapBed } from "../support/swap-bed.ts";

let bed: SwapBed;
beforeAll(async () => {
  bed = await swapBed();
});
afterAll(() => bed.close());

async function raisedFill(by: (quoted: bigint) => bigint) {
  const taker = Keypair.generate();
  fundTaker(bed.h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 10_000_000_000n } });
  const { response, stored } = await askQuote(bed.h, bed.http, {
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount: 1_000_000_000n,
    taker: taker.publicKey,
  });
  const quoted = BigInt(response.prioritizationFeeToUse!);
  const price = by(quoted);
  const tx = await operatorFill(bed.h, stored, taker.publicKey, { computeUnitPrice: price });
  tx.sign([taker]);
  return { response, tx, price };
}

const raises = async (outcome: string) => {
  const text = await bed.h.metrics.registry.metrics();
  const m = new RegExp(`rfq_priority_fee_raises_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text);
  return Number(m?.[1] ?? 0);
};

describe("a raised compute-unit price", () => {
  it("accepts a price raised by one micro-lamport, lands it, the maker paying the raised fee", async () => {
    const { response, tx, price } = await raisedFill((q) => q + 1n);
    const before = lamports(bed.h.chain, bed.h.maker.publicKey);
    const counted = await raises("accepted");
    const res = await postSwap(bed.http, { ...response, transaction: tx });
    expect(res.body.rejectionReason ?? res.body.state).toBe("accepted");
    expect(await bed.h.confirmations.settled(response.quoteId)).toBe("landed");
    const paid = before - lamports(bed.h.chain, bed.h.maker.publicKey);
    expect(paid).toBe(makerFeeLamports(60_000, price, 2));
    expect(await raises("accepted")).toBe(counted + 1);
  });

  it("refuses a price raised 100,000-fold with RAISED_FEE_CAP_EXCEEDED, signing and sending nothing", async () => {
    const { response, tx } = await raisedFill((q) => q * 100_000n);
    const signs = bed.signer.count;
    const sends = bed.chain.sends;
    const before = bed.balances();
    const counted = await raises("refused");
    const res = await postSwap(bed.http, { ...response, transaction: tx });
    expect(res.body.state).toBe("rejected");
    expect(res.body.rejectionReason).toMatch(/^RAISED_FEE_CAP_EXCEEDED: /);
    expect(bed.signer.count).toBe(signs);
    expect(bed.chain.sends).toBe(sends);
    expect(bed.balances()).toEqual(before);
    expect(await raises("refused")).toBe(counted + 1);
  });

  it("counts neither a fill at the quoted price nor a fill refused by another rule", async () => {
    const at = await raisedFill((q) => q);
    const accepted = await raises("accepted");
    const refused = await raises("refused");
    expect((await postSwap(bed.http, { ...at.response, transaction: at.tx })).body.state).toBe("accepted");
    // A fill of another quote for a taker it was not quoted for: refused by validation (INVALID_TAKER).
    const other = await raisedFill((q) => q);
    const stored = await bed.h.store.get(other.response.quoteId);
    if (!stored) throw new Error("the quote was not stored");
    const forAnother = await operatorFill(bed.h, stored, Keypair.generate().publicKey);
    const res = await postSwap(bed.http, { ...other.response, transaction: forAnother });
    expect(res.body.rejectionReason).toMatch(/^INVALID_TAKER/);
    expect(await raises("accepted")).toBe(accepted);
    expect(await raises("refused")).toBe(refused);
  });
});

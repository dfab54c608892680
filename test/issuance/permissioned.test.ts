/**
 * Permissioned tokens the maker issues, through the real path (HTTP /quote and /swap, the composed
 * service, the local chain): a taker buys TBILL the maker holds none of, and the mint lands with the
 * fill in one bundle; it sells it back, and the burn lands with the fill. Supply moves by exactly what
 * the taker receives or gives; a bundle whose fill fails changes nothing; the taker checks come before
 * anything is sent. The bundle engine is the project's local one (src/chain/local/bundle-engine.ts), observed
 * (test/support/local-bundles.ts).
 */
import { type Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { utcDay } from "../../inventory/issuance/interface.ts";
import { fundTaker, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { ObservedBundles } from "../support/local-bundles.ts";
import { drainUsdc, permissionedSetup, supplyOf, TBILL_LIMITS } from "../support/permissioned.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";

const USDC = new PublicKey(MINT.USDC);
const setup = permissionedSetup();
const TBILL = setup.mint;
let h: Harness;
let engine: ObservedBundles;

/** How far the swap's clock runs ahead of the wall (a test moves it to spend the swap's budget). */
let clockAheadMs = 0;

beforeAll(async () => {
  h = await createHarness({
    vary: setup.vary,
    issuer: setup.issuer,
    swap: { now: () => Date.now() + clockAheadMs },
    bundles: (chain) => {
      engine = new ObservedBundles(chain);
      return engine;
    },
  });
});
afterAll(async () => {
  await h?.close();
});

const http = () => inProcess(h.app);

function makerBalances() {
  const m = h.maker.publicKey;
  return {
    lamports: lamports(h.chain, m),
    usdc: tokenBalance(h.chain, m, USDC),
    tbill: tokenBalance(h.chain, m, TBILL),
    issuerLamports: lamports(h.chain, setup.issuer.publicKey),
  };
}

async function buy(taker: Keypair, usdcIn: bigint) {
  const { response, stored } = await askQuote(h, http(), {
    tokenIn: MINT.USDC,
    tokenOut: TBILL.toBase58(),
    amount: usdcIn,
    feeBps: 0,
    taker: taker.publicKey,
  });
  const tx = await operatorFill(h, stored, taker.publicKey, { computeUnitLimit: 200_000 });
  tx.sign([taker]);
  return { response, tx };
}

describe("a taker buys a permissioned token the maker holds none of, then sells it back", () => {
  const taker = setup.holders[0] as Keypair;
  let bought = 0n;

  it("mints in the same bundle as the fill: the taker receives exactly the quoted amount, supply rises by it", async () => {
    fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 1_000_000_000n } });
    expect(tokenBalance(h.chain, h.maker.publicKey, TBILL)).toBe(0n);
    const supply = supplyOf(h.chain, TBILL);
    const { response, tx } = await buy(taker, 105_000_000n);
    const swap = await postSwap(http(), {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toBe("accepted");
    const outcome = await h.confirmations.settled(response.quoteId);
    expect(outcome, (await engine.lastStatus())?.state).toBe("landed");

    bought = BigInt(response.amountOut);
    expect(bought).toBeGreaterThan(0n);
    expect(tokenBalance(h.chain, taker.publicKey, TBILL)).toBe(bought);
    expect(supplyOf(h.chain, TBILL) - supply).toBe(bought);
    expect(tokenBalance(h.chain, h.maker.publicKey, TBILL)).toBe(0n);
    // One bundle: the issuer's mint first, then the fill (its message unchanged, as the taker signed it).
    const last = engine.sent.at(-1);
    expect((await engine.lastStatus())?.state).toBe("landed");
    expect(last?.txs).toHaveLength(2);
    expect(Buffer.from(last!.txs[1]!.message.serialize())).toEqual(Buffer.from(tx.message.serialize()));
    expect(h.service.issuance?.usage.used(TBILL.toBase58(), "mint", utcDay(Date.now()))).toBe(bought);
  });

  it("burns in the same bundle as the fill when the taker sells it back: supply falls by exactly that", async () => {
    const supply = supplyOf(h.chain, TBILL);
    const usdcBefore = tokenBalance(h.chain, taker.publicKey, USDC);
    const { response, stored } = await askQuote(h, http(), {
      tokenIn: TBILL.toBase58(),
      tokenOut: MINT.USDC,
      amount: bought,
      feeBps: 0,
      taker: taker.publicKey,
    });
    const tx = await operatorFill(h, stored, taker.publicKey, { computeUnitLimit: 200_000 });
    tx.sign([taker]);
    const swap = await postSwap(http(), {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toBe("accepted");
    expect(await h.confirmations.settled(response.quoteId)).toBe("landed");
    expect(supplyOf(h.chain, TBILL)).toBe(supply - bought);
    expect(tokenBalance(h.chain, taker.publicKey, TBILL)).toBe(0n);
    expect(tokenBalance(h.chain, h.maker.publicKey, TBILL)).toBe(0n);
    expect(tokenBalance(h.chain, taker.publicKey, USDC) - usdcBefore).toBe(BigInt(response.amountOut));
    const last = engine.sent.at(-1);
    expect(Buffer.from(last!.txs[0]!.message.serialize())).toEqual(Buffer.from(tx.message.serialize()));
  });
});

describe("a bundle whose fill fails on chain", () => {
  it("leaves supply and every maker balance unchanged, and gives the issuance back", async () => {
    const taker = setup.holders[1] as Keypair;
    fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 500_000_000n } });
    const { response, tx } = await buy(taker, 105_000_000n);
    const supply = supplyOf(h.chain, TBILL);
    const day = utcDay(Date.now());
    const usedBefore = h.service.issuance?.usage.used(TBILL.toBase58(), "mint", day);
    const maker = makerBalances();
    // Between the maker's checks and the bundle running, the taker spends its USDC elsewhere.
    engine.beforeSend = () => drainUsdc(h.chain, taker.publicKey);
    try {
      const swap = await postSwap(http(), {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      expect(swap.body.state).toBe("accepted");
      expect(await h.confirmations.settled(response.quoteId)).toBe("failed");
    } finally {
      engine.beforeSend = undefined;
    }
    expect((await engine.lastStatus())?.state).toBe("failed");
    expect(supplyOf(h.chain, TBILL)).toBe(supply);
    expect(makerBalances()).toEqual(maker);
    expect(tokenBalance(h.chain, taker.publicKey, TBILL)).toBe(0n);
    expect(h.service.issuance?.usage.used(TBILL.toBase58(), "mint", day)).toBe(usedBefore);
  });
});

describe("the maker's own taker checks, before anything is sent", () => {
  it("answers insufficientBalance to a taker that cannot pay, and sends nothing", async () => {
    const taker = setup.holders[2] as Keypair;
    fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 1_000_000n } });
    const { response, tx } = await buy(taker, 105_000_000n);
    const sent = engine.sent.length;
    const supply = supplyOf(h.chain, TBILL);
    const swap = await postSwap(http(), {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toEqual({ rejectedWithReason: "insufficientBalance" });
    expect(engine.sent.length).toBe(sent);
    expect(supplyOf(h.chain, TBILL)).toBe(supply);
  });
});

/** The last holder, funded to buy; the harness's issuance; and the T-bill minted through it today. */
function fundedHolderAndIssuance() {
  const taker = setup.holders.at(-1) as Keypair;
  fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 1_000_000_000n } });
  const iss = h.service.issuance;
  if (!iss) throw new Error("the harness has no issuance");
  const day = utcDay(Date.now());
  return { taker, iss, day, used: iss.usage.used(TBILL.toBase58(), "mint", day) };
}

describe("an issuance that cannot go ahead", () => {
  type Issuance = NonNullable<Harness["service"]["issuance"]>;
  it.each<[what: string, amount: bigint, fail: (iss: Issuance) => unknown, reason: string]>([
    [
      "an issuance store that cannot be reached: refuses the fill naming the store's error",
      104_000_000n,
      (iss) => vi.spyOn(iss.usage, "reserve").mockRejectedValueOnce(new Error("issuance store down")),
      "issuance unavailable: issuance store down",
    ],
    [
      "an issuer that cannot sign the mint: refuses the fill saying so",
      103_000_000n,
      (iss) => vi.spyOn(iss.companions, "make").mockRejectedValueOnce(new Error("issuer key offline")),
      "the mint transaction could not be signed: issuer key offline; not sent",
    ],
  ])(
    "%s, mints and sends nothing, and gives the inventory and the issuance back",
    async (_what, amount, fail, reason) => {
      const { taker, iss, day, used } = fundedHolderAndIssuance();
      const { response, tx } = await buy(taker, amount);
      fail(iss);
      const supply = supplyOf(h.chain, TBILL);
      const sent = engine.sent.length;
      const swap = await postSwap(http(), {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      vi.restoreAllMocks();
      expect(swap.body).toEqual({ quoteId: response.quoteId, state: "rejected", rejectionReason: reason });
      expect(supplyOf(h.chain, TBILL)).toBe(supply);
      expect(engine.sent).toHaveLength(sent);
      expect((await h.inventory.reservations()).map((r) => r.quoteId)).not.toContain(response.quoteId);
      expect(iss.usage.used(TBILL.toBase58(), "mint", day)).toBe(used);
    },
  );
});

describe("an issued fill that has spent its budget by the time the issuance is reserved", () => {
  it("is refused BUDGET_EXCEEDED before signing, minting nothing and giving the issuance back", async () => {
    const { taker, iss, day, used } = fundedHolderAndIssuance();
    const { response, tx } = await buy(taker, 102_000_000n);
    const reserve = iss.usage.reserve.bind(iss.usage);
    vi.spyOn(iss.usage, "reserve").mockImplementationOnce(async (r) => {
      const res = await reserve(r);
      clockAheadMs = 20_000; // the default budget gone
      return res;
    });
    const sent = engine.sent.length;
    try {
      const swap = await postSwap(http(), {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      expect(swap.body).toEqual({
        quoteId: response.quoteId,
        state: "rejected",
        rejectionReason: "the swap ran out of its time budget before signing",
      });
    } finally {
      clockAheadMs = 0;
      vi.restoreAllMocks();
    }
    expect(engine.sent).toHaveLength(sent);
    expect(iss.usage.used(TBILL.toBase58(), "mint", day)).toBe(used);
  });
});

describe("quoting an issued token", () => {
  it("quotes what the caps leave, not held inventory: 404 above the per-fill cap", async () => {
    const res = await http()("/quote", quoteInit(TBILL_LIMITS.maxPerFill + 1n));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toMatch(/per-fill cap/);
    const ok = await http()("/quote", quoteInit(TBILL_LIMITS.maxPerFill));
    expect(ok.status).toBe(200);
  });

  it("answers 404 to the quote that would cross the daily issuance cap", async () => {
    const day = utcDay(Date.now());
    // Fill up to within the per-fill cap of the daily one.
    const taker = setup.holders[2] as Keypair;
    fundTaker(h.chain, taker.publicKey, { tokens: { [MINT.USDC]: 10_000_000_000n } });
    const usedNow = () => h.service.issuance?.usage.used(TBILL.toBase58(), "mint", day) ?? 0n;
    const fillTo = TBILL_LIMITS.maxPerDay - TBILL_LIMITS.maxPerFill + 1_000_000n;
    const { response, tx } = await buy(taker, ((fillTo - usedNow()) * 105n) / 100n);
    const swap = await postSwap(http(), {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toBe("accepted");
    const left = TBILL_LIMITS.maxPerDay - usedNow();
    expect(left).toBeLessThan(TBILL_LIMITS.maxPerFill);
    expect((await http()("/quote", quoteInit(left))).status).toBe(200);
    const crossing = await http()("/quote", quoteInit(left + 1n));
    expect(crossing.status).toBe(404);
    expect(((await crossing.json()) as { message: string }).message).toMatch(/daily cap/);
  });
});

/** An exactOut quote for `amount` TBILL (the maker's output), no taker, as the operator sends it. */
const quoteInit = (amount: bigint): RequestInit =>
  jsonPost(
    quoteBody({
      tokenIn: MINT.USDC,
      tokenOut: TBILL.toBase58(),
      amount: amount.toString(),
      quoteType: "exactOut",
      feeBps: 0,
    }),
    { "x-request-start": String(Date.now()) },
  );

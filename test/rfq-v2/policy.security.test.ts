/**
 * The RFQ v2 swap stream holds the rules every signing path shares (src/policy/), played as a hostile
 * taker and a hostile operator would against the stand-in of the operator's service over a real gRPC
 * socket, swaps landing on the local chain (LiteSVM, route_v2 emulated): a permissioned token (TBILL,
 * test/support/permissioned.ts) streamed against USDC is never sold to, nor bought from, a wallet its
 * holder rules refuse; the issuer's per-fill and daily caps hold; a flagged taker is refused as on an
 * indicative /quote's fill; the same transaction message offered under a second swap_uuid is not
 * signed and reserves nothing (the binding in real Redis, as the service keeps it with Redis). Each
 * refusal carries the webhook's own code for the rule, and leaves the maker's accounts as they were.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../config/schema.ts";
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import { MemoryIssuanceUsage } from "../../inventory/issuance/memory.ts";
import { RedisIssuanceUsage } from "../../inventory/issuance/redis.ts";
import { creditSol, creditToken, tokenBalance } from "../../src/chain/local/seed.ts";
import { IssuancePolicies } from "../../src/issuance/policy.ts";
import type { QuoteStore } from "../../src/quote-store/interface.ts";
import { MemoryQuoteStore } from "../../src/quote-store/memory.ts";
import { RedisQuoteStore } from "../../src/quote-store/redis.ts";
import { MemoryTakerStanding } from "../../src/toxicity/memory.ts";
import { makeWorld } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { permissionedSetup } from "../support/permissioned.ts";
import { fileRedis } from "../support/redis.ts";
import { solUsdcBid, standInOver, startV2Channel, until } from "../support/rfq-v2.ts";

const MAKER_ID = "maker-policy";
const TOKEN = "jwt-for-the-stand-in-0123456789";
const { redis, prefix } = fileRedis();
const closers = cleanupsAfterEach();

/** The maker holds 5 TBILL; TBILL/USDC streamed; `over` changes TBILL's issuance policy. */
async function channel(
  o: {
    over?: Record<string, unknown>;
    messages?: QuoteStore;
    usage?: IssuanceUsage;
    takers?: MemoryTakerStanding;
  } = {},
) {
  const p = permissionedSetup(2, o.over ?? {});
  const w = makeWorld(
    (f) => ({
      ...p.vary(f),
      rfqV2: { ...f.rfqV2, pairs: ["TBILL/USDC", "SOL/USDC"], quoteExpirySeconds: 30, refreshSeconds: 10 },
    }),
    { inventory: { TBILL: 5_000_000n } },
  );
  const standIn = standInOver(w.chain, { makerId: MAKER_ID, token: TOKEN, land: true });
  const url = await standIn.listen("127.0.0.1", 0);
  closers.push(() => standIn.close());
  w.clock.t = Date.now();
  const usage = o.usage ?? new MemoryIssuanceUsage();
  const { inventory, registry, service } = await startV2Channel({
    w,
    url,
    makerId: MAKER_ID,
    token: TOKEN,
    closers,
    ...(o.messages ? { messages: o.messages } : {}),
    deps: {
      ...(o.takers ? { takers: o.takers } : {}),
      issuance: { policies: new IssuancePolicies(w.config), usage },
    },
  });
  const tbill = p.mint.toBase58();
  await until(() => standIn.liveSet(MAKER_ID, tbill, MINT.USDC) !== undefined, "TBILL/USDC levels", 10_000);
  await until(() => standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels", 10_000);
  const usdc = new PublicKey(MINT.USDC);
  /** A wallet with SOL for its accounts, `usdcUnits` USDC and `tbillUnits` TBILL. */
  const wallet = (k: Keypair, usdcUnits: bigint, tbillUnits = 0n) => {
    creditSol(w.chain, k.publicKey, 1_000_000_000n);
    creditToken(w.chain, k.publicKey, usdc, usdcUnits);
    if (tbillUnits > 0n) creditToken(w.chain, k.publicKey, p.mint, tbillUnits);
    return k;
  };
  const balances = (k: PublicKey) => ({
    tbill: tokenBalance(w.chain, k, p.mint),
    usdc: tokenBalance(w.chain, k, usdc),
    sol: tokenBalance(w.chain, k, new PublicKey(MINT.SOL)),
  });
  const tbillOffer = (taker: Keypair, takerSide: "bid" | "ask", inAmount: bigint) =>
    standIn.offerSwap({
      makerId: MAKER_ID,
      taker,
      baseMint: tbill,
      quoteMint: MINT.USDC,
      baseTokenProgram: TOKEN_2022_PROGRAM,
      quoteTokenProgram: TOKEN_PROGRAM,
      baseDecimals: 6,
      takerSide,
      inAmount,
      timeoutMs: 2_000,
    });
  const solOffer = (taker: Keypair, inAmount: bigint) =>
    standIn.offerSwap(solUsdcBid({ makerId: MAKER_ID, taker, inAmount, timeoutMs: 2_000 }));
  const outcomes = async () =>
    Object.fromEntries(
      (await registry.getSingleMetric("rfq_v2_swaps_total")!.get()).values.map((v) => [
        v.labels.outcome,
        v.value,
      ]),
    );
  return { p, w, standIn, inventory, usage, service, wallet, balances, tbillOffer, solOffer, outcomes };
}

describe("the RFQ v2 stream holds the issued token's holder rules, caps and the taker's standing", () => {
  it("refuses a stranger's USDC->TBILL bid (HOLDER_NOT_ALLOWED, as /quote does): nothing signed, reserved or moved", async () => {
    const c = await channel();
    const stranger = c.wallet(Keypair.generate(), 100_000_000n);
    const maker = c.balances(c.w.maker.publicKey);
    const taker = c.balances(stranger.publicKey);
    const r = await c.tbillOffer(stranger, "bid", 3_000_000n);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await c.outcomes()).toEqual({ signed: 0, HOLDER_NOT_ALLOWED: 1 });
    expect(await c.inventory.reservations()).toEqual([]);
    expect(c.balances(c.w.maker.publicKey)).toEqual(maker);
    expect(c.balances(stranger.publicKey)).toEqual(taker);
  });

  it("refuses a stranger selling TBILL into the streamed bids (HOLDER_NOT_ALLOWED): the maker buys no permissioned token from a wallet its rules refuse", async () => {
    const c = await channel();
    const stranger = c.wallet(Keypair.generate(), 0n, 3_000_000n);
    const maker = c.balances(c.w.maker.publicKey);
    const r = await c.tbillOffer(stranger, "ask", 2_000_000n);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await c.outcomes()).toEqual({ signed: 0, HOLDER_NOT_ALLOWED: 1 });
    expect(await c.inventory.reservations()).toEqual([]);
    expect(c.balances(c.w.maker.publicKey)).toEqual(maker);
    expect(c.balances(stranger.publicKey).tbill).toBe(3_000_000n);
  });

  it("signs and lands an allowed holder's bid, counting the TBILL it moves against the issuer's daily cap (committed on confirmation)", async () => {
    const c = await channel();
    const holder = c.wallet(c.p.holders[0]!, 100_000_000n);
    const before = c.balances(c.w.maker.publicKey);
    const r = await c.tbillOffer(holder, "bid", 2_100_000n);
    expect(r).toMatchObject({ ok: true });
    const after = c.balances(c.w.maker.publicKey);
    const moved = before.tbill - after.tbill;
    expect(moved).toBeGreaterThan(0n);
    expect(c.balances(holder.publicKey).tbill).toBe(moved);
    const day = new Date().toISOString().slice(0, 10);
    expect(c.usage.used(c.p.mint.toBase58(), "mint", day)).toBe(moved);
  });

  it("refuses a holder's bid above the issuer's per-fill cap (ISSUANCE_CAP_EXCEEDED): nothing signed, reserved or moved", async () => {
    // 1 TBILL per fill; the bid of 3.15 USDC walks to about 3 TBILL.
    const c = await channel({ over: { maxPerFill: "1000000" } });
    const holder = c.wallet(c.p.holders[0]!, 100_000_000n);
    const maker = c.balances(c.w.maker.publicKey);
    const r = await c.tbillOffer(holder, "bid", 3_150_000n);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await c.outcomes()).toEqual({ signed: 0, ISSUANCE_CAP_EXCEEDED: 1 });
    expect(await c.inventory.reservations()).toEqual([]);
    expect(c.balances(c.w.maker.publicKey)).toEqual(maker);
    expect(c.balances(holder.publicKey).tbill).toBe(0n);
  });

  it("refuses the swap that would cross the issuer's daily cap (ISSUANCE_CAP_EXCEEDED), the cap held in Redis: the first lands, the second moves nothing", async () => {
    // 2 TBILL per fill, 3 a day: two bids of about 2 TBILL each.
    const usage = new RedisIssuanceUsage(redis, `${prefix}cap:`, { syncMs: 60_000 });
    await usage.start();
    closers.push(() => usage.close());
    const c = await channel({ over: { maxPerFill: "2000000", maxPerDay: "3000000" }, usage });
    const holder = c.wallet(c.p.holders[0]!, 100_000_000n);
    expect(await c.tbillOffer(holder, "bid", 2_100_000n)).toMatchObject({ ok: true });
    const maker = c.balances(c.w.maker.publicKey);
    const held = c.balances(holder.publicKey);
    const reserved = (await c.inventory.reservations()).map((x) => x.quoteId);
    const day = new Date().toISOString().slice(0, 10);
    const used = c.usage.used(c.p.mint.toBase58(), "mint", day);
    const r = await c.tbillOffer(holder, "bid", 2_100_000n);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await c.outcomes()).toMatchObject({ signed: 1, ISSUANCE_CAP_EXCEEDED: 1 });
    expect(c.balances(c.w.maker.publicKey)).toEqual(maker);
    expect(c.balances(holder.publicKey)).toEqual(held);
    // No reservation taken, the day's count as the first swap left it.
    expect((await c.inventory.reservations()).map((x) => x.quoteId)).toEqual(reserved);
    expect(c.usage.used(c.p.mint.toBase58(), "mint", day)).toBe(used);
  });

  it("refuses a flagged taker's swap on the streamed levels (BOT_ACTIVITY_DETECTED, as /swap refuses one filling an indicative quote)", async () => {
    const takers = new MemoryTakerStanding({ deny: [], allow: [] });
    const c = await channel({ takers });
    const flagged = c.wallet(Keypair.generate(), 100_000_000n);
    await takers.put("flags", {
      taker: flagged.publicKey.toBase58(),
      reason: "test: markouts",
      source: "admin",
      atMs: Date.now(),
      untilMs: Date.now() + 60_000,
    });
    const maker = c.balances(c.w.maker.publicKey);
    const r = await c.solOffer(flagged, 10_000_000n);
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(await c.outcomes()).toEqual({ signed: 0, BOT_ACTIVITY_DETECTED: 1 });
    expect(await c.inventory.reservations()).toEqual([]);
    expect(c.balances(c.w.maker.publicKey)).toEqual(maker);
  });
});

describe("one signature per transaction message, whatever swap_uuid it arrives under", () => {
  for (const store of ["redis", "memory"] as const) {
    it(`refuses a landed swap's message offered again under a new swap_uuid (MESSAGE_BOUND_TO_OTHER_QUOTE; ${store} binding): not signed, nothing reserved`, async () => {
      const messages =
        store === "redis" ? new RedisQuoteStore(redis, `${prefix}msg:`) : new MemoryQuoteStore();
      const c = await channel({ messages });
      const taker = c.wallet(Keypair.generate(), 100_000_000n);
      const first = await c.solOffer(taker, 10_000_000n);
      expect(first).toMatchObject({ ok: true });
      const maker = c.balances(c.w.maker.publicKey);
      const reserved = (await c.inventory.reservations()).map((x) => x.quoteId);
      expect(reserved).toEqual([`v2:${first.swapUuid}`]);
      const again = await c.standIn.offerTransaction({
        makerId: MAKER_ID,
        tx: first.offered,
        timeoutMs: 2_000,
      });
      expect(again.swapUuid).not.toBe(first.swapUuid);
      expect(again).toMatchObject({ ok: false, reason: "timeout" });
      expect(await c.outcomes()).toEqual({ signed: 1, MESSAGE_BOUND_TO_OTHER_QUOTE: 1 });
      // The second took no reservation: the first swap's (committed on its confirmation) is all there is.
      expect((await c.inventory.reservations()).map((x) => x.quoteId)).toEqual(reserved);
      expect(c.balances(c.w.maker.publicKey)).toEqual(maker);
    });
  }
});

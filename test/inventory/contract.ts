/**
 * The Inventory contract: every adapter (memory, Redis) must pass these. `instance()` builds another
 * instance over the same shared state (the same MemoryReservations, or the same Redis keys): what a second
 * webhook process, or the same one after a restart, would see.
 */
import { describe, expect, it } from "vitest";
import type { Inventory, Reservation } from "../../inventory/interface.ts";
import type { Reservations, ReserveRequest } from "../../inventory/reservations/interface.ts";
import { QuotingBook } from "../../pricing/book.ts";
import type { QuoteRequest } from "../../src/contract/quote.ts";
import { QuoteService } from "../../src/quote/service.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { makeWorld, removeAta, transferOut, type World, withToken } from "./support.ts";

export interface Harness {
  /** A world plus a factory of inventory instances sharing one state. */
  setup(world: World): { instance(): Inventory; store(): Reservations; cleanup(): Promise<void> };
}

const USDC_SEEDED = 10_000_000n * 1_000_000n;

/** Whether the inventory would let the maker promise `amount` of `mint` (the quote path's check). */
const covers = (inv: Inventory, mint: string, amount: bigint) =>
  inv.check({ outMint: mint, outAmount: amount }).ok;
const SOL_SEEDED = 10_000n * 1_000_000_000n;

export function inventoryContract(name: string, harness: Harness): void {
  describe(`Inventory contract: ${name}`, () => {
    const cleanups = cleanupsAfterEach();

    async function start(world: World, count = 1): Promise<Inventory[]> {
      const h = harness.setup(world);
      cleanups.push(h.cleanup);
      const list: Inventory[] = [];
      for (let i = 0; i < count; i++) {
        const inv = h.instance();
        cleanups.push(() => inv.close());
        await inv.start();
        list.push(inv);
      }
      return list;
    }

    const res = (
      w: World,
      quoteId: string,
      mint: string,
      amount: bigint,
      extra: Partial<Reservation> = {},
    ) => ({
      quoteId,
      mint,
      amount,
      expiresAtMs: w.clock.t + 60_000,
      ...extra,
    });

    it("reads the maker's balances, ATAs and SOL from the chain at start", async () => {
      const w = makeWorld();
      const [inv] = await start(w);
      const snap = inv!.snapshot();
      expect(snap.maker).toBe(w.maker.publicKey.toBase58());
      expect(snap.lamports).toBe(100_000_000_000n);
      const usdc = snap.holdings.find((h) => h.symbol === "USDC")!;
      expect(usdc).toMatchObject({ ataExists: true, balance: USDC_SEEDED, reserved: 0n });
      expect(snap.holdings.find((h) => h.symbol === "SOL")).toMatchObject({
        ataExists: true,
        balance: SOL_SEEDED,
      });
    });

    it("covers exactly balance minus reserved minus the safety buffer, and not one unit more", async () => {
      const w = makeWorld(withToken("USDC", { safetyBuffer: "5000000" }));
      const [inv] = await start(w);
      const free = USDC_SEEDED - 5_000_000n;
      expect(covers(inv!, MINT.USDC, free)).toBe(true);
      expect(covers(inv!, MINT.USDC, free + 1n)).toBe(false);
      expect(await inv!.reserve(res(w, "q1", MINT.USDC, 1_000_000n))).toEqual({ ok: true });
      expect(covers(inv!, MINT.USDC, free - 1_000_000n)).toBe(true);
      expect(covers(inv!, MINT.USDC, free - 1_000_000n + 1n)).toBe(false);
    });

    it("makes the quote service refuse a quote once reservations leave too little to cover it", async () => {
      const w = makeWorld();
      const [inv] = await start(w);
      const book = new QuotingBook(w.config, w.sources, {
        now: () => w.clock.t,
        position: (mint) => inv!.position(mint),
      });
      const service = new QuoteService({ config: w.config, book, inventory: inv!, maker: MINT.USDC });
      const request: QuoteRequest = {
        requestId: "r",
        quoteId: "q",
        tokenIn: MINT.SOL,
        tokenOut: MINT.USDC,
        amount: "1000000000",
        quoteType: "exactIn",
        protocol: "v1",
        feeBps: 0,
      };
      const ask = () => service.decide(request, w.clock.t);
      const before = ask();
      expect(before.ok).toBe(true);
      const out = before.ok ? BigInt(before.stored.response.amountOut) : 0n;
      // Reserve all but one unit less than the quote needs.
      expect(await inv!.reserve(res(w, "big", MINT.USDC, USDC_SEEDED - out + 1n))).toEqual({ ok: true });
      expect(ask()).toMatchObject({ ok: false, code: "INVENTORY_INSUFFICIENT" });
      await inv!.release("big");
      expect(ask()).toMatchObject({ ok: true, stored: { response: { amountOut: out.toString() } } });
    });

    it("reserves once per quoteId: a retry changes nothing", async () => {
      const w = makeWorld();
      const [inv] = await start(w);
      expect(await inv!.reserve(res(w, "q", MINT.USDC, 3_000_000n))).toEqual({ ok: true });
      expect(await inv!.reserve(res(w, "q", MINT.USDC, 3_000_000n))).toEqual({ ok: true });
      expect(inv!.snapshot().holdings.find((h) => h.symbol === "USDC")!.reserved).toBe(3_000_000n);
    });

    it("lets exactly one of two instances racing for the same last units win", async () => {
      const w = makeWorld(undefined, { inventory: { USDC: 7_000_000n } });
      const [a, b] = await start(w, 2);
      // Ten claims of 1 USDC from each instance at once, for 7 USDC: exactly seven succeed.
      const claims = Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a! : b!).reserve(res(w, `race-${i}`, MINT.USDC, 1_000_000n)),
      );
      const results = await Promise.all(claims);
      expect(results.filter((r) => r.ok)).toHaveLength(7);
      expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.code === "INVENTORY_INSUFFICIENT")).toBe(
        true,
      );
      // And the very last unit: two instances, one claim each.
      const last = await Promise.all([
        a!.reserve(res(w, "last-a", MINT.SOL, SOL_SEEDED)),
        b!.reserve(res(w, "last-b", MINT.SOL, SOL_SEEDED)),
      ]);
      expect(last.filter((r) => r.ok)).toHaveLength(1);
    });

    it("makes released units available again", async () => {
      const w = makeWorld();
      const [inv] = await start(w);
      await inv!.reserve(res(w, "q", MINT.USDC, USDC_SEEDED));
      expect(covers(inv!, MINT.USDC, 1n)).toBe(false);
      await inv!.release("q");
      expect(covers(inv!, MINT.USDC, USDC_SEEDED)).toBe(true);
      await inv!.release("q"); // a second release is harmless
      expect(await inv!.reservations()).toEqual([]);
    });

    it("lets an unsettled reservation lapse at its expiry", async () => {
      const w = makeWorld();
      const [a, b] = await start(w, 2);
      await a!.reserve(res(w, "q", MINT.USDC, USDC_SEEDED, { expiresAtMs: w.clock.t + 1_000 }));
      expect(await b!.reserve(res(w, "other", MINT.USDC, 1n))).toMatchObject({ ok: false });
      w.clock.t += 1_000;
      expect(await b!.reserve(res(w, "other", MINT.USDC, USDC_SEEDED))).toEqual({ ok: true });
    });

    it("keeps a committed fill reserved until a balance read after the settle margin shows it", async () => {
      const w = makeWorld((f) => ({ ...f, inventory: { ...f.inventory, settleMarginMs: 2_000 } }));
      const [inv] = await start(w);
      const amount = 4_000_000n;
      await inv!.reserve(res(w, "fill", MINT.USDC, amount));
      await transferOut(w, MINT.USDC, amount); // the fill lands on chain
      await inv!.commit("fill");
      // A read inside the margin may or may not show the fill: the units stay reserved (counted twice
      // at worst, never promised twice).
      w.clock.t += 1_000;
      await inv!.refresh();
      let usdc = inv!.snapshot().holdings.find((h) => h.symbol === "USDC")!;
      expect(usdc).toMatchObject({ balance: USDC_SEEDED - amount, reserved: amount });
      // A read started after the margin settles it.
      w.clock.t += 1_500;
      await inv!.refresh();
      usdc = inv!.snapshot().holdings.find((h) => h.symbol === "USDC")!;
      expect(usdc).toMatchObject({ balance: USDC_SEEDED - amount, reserved: 0n });
      expect(covers(inv!, MINT.USDC, USDC_SEEDED - amount)).toBe(true);
      expect(covers(inv!, MINT.USDC, USDC_SEEDED - amount + 1n)).toBe(false);
    });

    it("recovers open reservations after a restart", async () => {
      const w = makeWorld();
      const h = harness.setup(w);
      cleanups.push(h.cleanup);
      const first = h.instance();
      await first.start();
      await first.reserve(
        res(w, "open", MINT.USDC, 2_000_000n, { inputMint: MINT.SOL, inputAmount: 11_000_000n }),
      );
      await first.reserve(res(w, "done", MINT.USDC, 3_000_000n));
      await first.commit("done");
      await first.close();
      const again = h.instance();
      cleanups.push(() => again.close());
      await again.start();
      const usdc = again.snapshot().holdings.find((x) => x.symbol === "USDC")!;
      expect(usdc.reserved).toBe(5_000_000n);
      expect(again.snapshot().holdings.find((x) => x.symbol === "SOL")!.incoming).toBe(11_000_000n);
      const list = (await again.reservations()).map((r) => ({ quoteId: r.quoteId, amount: r.amount }));
      expect(list.sort((x, y) => x.quoteId.localeCompare(y.quoteId))).toEqual([
        { quoteId: "done", amount: 3_000_000n },
        { quoteId: "open", amount: 2_000_000n },
      ]);
      expect(covers(again!, MINT.USDC, USDC_SEEDED - 5_000_000n + 1n)).toBe(false);
    });

    describe("the reservation state's answers", () => {
      // The shared state itself (what the Lua scripts or the memory twin answer), read at a fixed time.
      const T = 1_700_000_000_000;
      const request = (quoteId: string, outAmount: bigint, extra: Partial<ReserveRequest> = {}) => ({
        quoteId,
        outMint: MINT.USDC,
        outAmount,
        expiresAtMs: T + 60_000,
        nowMs: T,
        bufferOut: 0n,
        ...extra,
      });
      const totals = (reserved: [string, bigint][], incoming: [string, bigint][] = []) => ({
        reserved: new Map(reserved),
        incoming: new Map(incoming),
      });
      async function seeded(): Promise<Reservations> {
        const h = harness.setup(makeWorld());
        cleanups.push(h.cleanup);
        const s = h.store();
        await s.setBalances(
          T,
          1_000n,
          new Map([
            [MINT.USDC, 10_000_000n],
            [MINT.SOL, 5_000_000_000n],
          ]),
        );
        return s;
      }

      it("answers a reservation and a release with the exact totals of both legs after it", async () => {
        const s = await seeded();
        expect(await s.reserve(request("a", 3_000_000n, { inMint: MINT.SOL, inAmount: 7_000n }))).toEqual({
          kind: "reserved",
          totals: totals([[MINT.USDC, 3_000_000n]], [[MINT.SOL, 7_000n]]),
        });
        expect(await s.reserve(request("b", 1n))).toEqual({
          kind: "reserved",
          totals: totals([[MINT.USDC, 3_000_001n]]),
        });
        expect(await s.release("a")).toEqual(totals([[MINT.USDC, 1n]], [[MINT.SOL, 0n]]));
        expect(await s.release("b")).toEqual(totals([[MINT.USDC, 0n]]));
        expect(await s.release("b")).toBeUndefined();
        // Nothing left is listed as a zero total.
        expect(await s.state(T)).toMatchObject({ reserved: new Map(), incoming: new Map() });
      });

      it("refuses a reservation that would dip into the buffer, saying how much is available, never below zero", async () => {
        const s = await seeded();
        const buffer = { bufferOut: 1_000_000n };
        expect(await s.reserve(request("a", 9_000_001n, buffer))).toEqual({
          kind: "insufficient",
          available: 9_000_000n,
        });
        expect(await s.reserve(request("a", 9_000_000n, buffer))).toMatchObject({ kind: "reserved" });
        expect(await s.reserve(request("b", 1n, buffer))).toEqual({ kind: "insufficient", available: 0n });
        // A buffer above what is left: nothing available, not a negative amount.
        expect(await s.reserve(request("b", 1n, { bufferOut: 2_000_000n }))).toEqual({
          kind: "insufficient",
          available: 0n,
        });
      });

      it("reserves down to the out leg's floor exactly, and refuses one unit past it", async () => {
        const s = await seeded();
        const floor = { floorOut: 4_000_000n };
        expect(await s.reserve(request("a", 6_000_001n, floor))).toEqual({ kind: "exposure", leg: "out" });
        expect(await s.reserve(request("a", 6_000_000n, floor))).toMatchObject({ kind: "reserved" });
      });

      it("reserves up to the in leg's ceiling exactly, counting what is already incoming", async () => {
        const s = await seeded();
        const leg = { inMint: MINT.SOL, ceilingIn: 5_000_001_000n };
        expect(await s.reserve(request("a", 1n, { ...leg, inAmount: 1_000n }))).toMatchObject({
          kind: "reserved",
        });
        expect(await s.reserve(request("b", 1n, { ...leg, inAmount: 1n }))).toEqual({
          kind: "exposure",
          leg: "in",
        });
        expect(await s.reserve(request("b", 1n, { ...leg, inAmount: 0n }))).toMatchObject({
          kind: "reserved",
        });
      });

      it("answers a retry of a held quoteId with exists and changes nothing", async () => {
        const s = await seeded();
        await s.reserve(request("a", 2n));
        expect(await s.reserve(request("a", 5n))).toEqual({ kind: "exists" });
        expect((await s.state(T)).reserved).toEqual(new Map([[MINT.USDC, 2n]]));
      });

      it("lists each open and committed reservation with exactly its legs", async () => {
        const s = await seeded();
        await s.reserve(request("a", 2n, { inMint: MINT.SOL, inAmount: 3n }));
        await s.reserve(request("b", 4n, { expiresAtMs: T + 5 }));
        expect(await s.commit("b", T + 10)).toBe("committed");
        const list = (await s.list()).sort((x, y) => x.quoteId.localeCompare(y.quoteId));
        expect(list).toEqual([
          {
            quoteId: "a",
            mint: MINT.USDC,
            amount: 2n,
            expiresAtMs: T + 60_000,
            inputMint: MINT.SOL,
            inputAmount: 3n,
            state: "open",
          },
          { quoteId: "b", mint: MINT.USDC, amount: 4n, expiresAtMs: T + 5, state: "committed" },
        ]);
        expect(Object.keys(list[1]!).sort()).toEqual(["amount", "expiresAtMs", "mint", "quoteId", "state"]);
      });

      it("commits once: a repeated commit answers already and keeps the first settle time", async () => {
        const s = await seeded();
        await s.reserve(request("a", 2n));
        expect(await s.commit("a", T + 100)).toBe("committed");
        expect(await s.commit("a", T + 500)).toBe("already");
        expect(await s.commit("unknown", T + 100)).toBe("missing");
        expect(await s.setBalances(T + 100, 1_000n, new Map())).toBe(true);
        expect(await s.list()).toEqual([]);
      });

      it("settles a committed reservation with a read started at its settle time, not one before", async () => {
        const s = await seeded();
        await s.reserve(request("a", 2n));
        await s.commit("a", T + 100);
        expect(await s.setBalances(T + 99, 1_000n, new Map())).toBe(true);
        expect((await s.state(T + 99)).reserved).toEqual(new Map([[MINT.USDC, 2n]]));
        expect(await s.setBalances(T + 100, 1_000n, new Map())).toBe(true);
        expect((await s.state(T + 100)).reserved).toEqual(new Map());
      });

      it("ignores a balance read older than the stored one, and says so; one started at the same time replaces it", async () => {
        const s = await seeded();
        expect(await s.setBalances(T, 2_000n, new Map([[MINT.USDC, 9_000_000n]]))).toBe(true);
        expect(await s.setBalances(T - 1, 7n, new Map([[MINT.USDC, 1n]]))).toBe(false);
        expect(await s.state(T)).toMatchObject({
          balancesAtMs: T,
          lamports: 2_000n,
          balances: new Map([
            [MINT.USDC, 9_000_000n],
            [MINT.SOL, 5_000_000_000n],
          ]),
        });
      });

      it("keeps a committed reservation past its expiry, and releases only open ones", async () => {
        const s = await seeded();
        await s.reserve(request("a", 2n, { expiresAtMs: T + 10 }));
        await s.commit("a", T + 1_000);
        expect(await s.release("a")).toBeUndefined();
        expect((await s.state(T + 500)).reserved).toEqual(new Map([[MINT.USDC, 2n]]));
      });
    });

    describe("exposure limits (net position in USD)", () => {
      // SOL target = holding, at most 1,000 USD off target: 1000 / 180.25 = 5.547... SOL.
      const limited = (f: Parameters<ReturnType<typeof withToken>>[0]) =>
        withToken("USDC", { targetInventory: USDC_SEEDED.toString(), maxExposureUsd: "1000" })(
          withToken("SOL", { targetInventory: SOL_SEEDED.toString(), maxExposureUsd: "1000" })(f),
        );

      it("declines a quote that would leave a token more than the limit below target", async () => {
        const w = makeWorld(limited);
        const [inv] = await start(w);
        expect(inv!.check({ outMint: MINT.SOL, outAmount: 5_500_000_000n })).toEqual({ ok: true });
        expect(inv!.check({ outMint: MINT.SOL, outAmount: 5_600_000_000n })).toMatchObject({
          ok: false,
          code: "EXPOSURE_LIMIT_EXCEEDED",
        });
      });

      it("declines a quote that would leave a token more than the limit above target", async () => {
        const w = makeWorld(limited);
        const [inv] = await start(w);
        const trade = { outMint: MINT.SOL, outAmount: 1_000_000n, inMint: MINT.USDC };
        expect(inv!.check({ ...trade, inAmount: 1_000_000_000n })).toEqual({ ok: true });
        expect(inv!.check({ ...trade, inAmount: 1_000_000_001n })).toMatchObject({
          ok: false,
          code: "EXPOSURE_LIMIT_EXCEEDED",
        });
      });

      it("holds the limit across reservations, atomically", async () => {
        const w = makeWorld(limited);
        const [a, b] = await start(w, 2);
        const r = await Promise.all([
          a!.reserve(res(w, "x", MINT.SOL, 3_000_000_000n)),
          b!.reserve(res(w, "y", MINT.SOL, 3_000_000_000n)),
        ]);
        expect(r.filter((x) => x.ok)).toHaveLength(1);
        expect(r.find((x) => !x.ok)).toMatchObject({ code: "EXPOSURE_LIMIT_EXCEEDED" });
        // Pending inflows count too.
        const i1 = await a!.reserve(
          res(w, "in1", MINT.SOL, 1n, { inputMint: MINT.USDC, inputAmount: 600_000_000n }),
        );
        const i2 = await b!.reserve(
          res(w, "in2", MINT.SOL, 1n, { inputMint: MINT.USDC, inputAmount: 600_000_000n }),
        );
        expect([i1.ok, i2.ok]).toEqual([true, false]);
      });
    });

    it("stops quoting when the maker's SOL for fees is below the minimum", async () => {
      const w = makeWorld((f) => ({ ...f, inventory: { ...f.inventory, minSolLamports: "200000000000" } }));
      const [inv] = await start(w);
      expect(inv!.check({ outMint: MINT.USDC, outAmount: 1n })).toMatchObject({
        ok: false,
        code: "SOL_FOR_FEES_LOW",
      });
    });

    it("stops quoting when balances have not been read for longer than maxBalanceAgeMs", async () => {
      const w = makeWorld();
      const [inv] = await start(w);
      expect(covers(inv!, MINT.USDC, 1n)).toBe(true);
      w.clock.t += w.config.file.inventory.maxBalanceAgeMs + 1;
      expect(inv!.check({ outMint: MINT.USDC, outAmount: 1n })).toMatchObject({
        ok: false,
        code: "INVENTORY_STALE",
      });
      await inv!.refresh();
      expect(covers(inv!, MINT.USDC, 1n)).toBe(true);
    });

    it("reports a token without an ATA as holding nothing", async () => {
      const w = makeWorld();
      removeAta(w, MINT.JUP);
      const [inv] = await start(w);
      expect(inv!.snapshot().holdings.find((h) => h.symbol === "JUP")).toMatchObject({
        ataExists: false,
        balance: 0n,
      });
      expect(covers(inv!, MINT.JUP, 1n)).toBe(false);
    });
  });
}

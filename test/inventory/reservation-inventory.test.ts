/**
 * The Inventory over its reservation state (inventory/reservations/inventory.ts), on the memory store:
 * what the quote path's check and the swap path's reserve say (exact edges and details), the position
 * and snapshot it shows, and what it does by itself: the settle read after a commit, the periodic
 * chain and shared-state reads, an unreadable or emptied shared state, and the change listeners.
 * What the two stores must agree on is in contract.ts.
 */
import { Keypair, type PublicKey } from "@solana/web3.js";
import { describe, expect, it, vi } from "vitest";
import { parseDecimal } from "../../amounts/decimal.ts";
import type { UsdValues } from "../../amounts/usd.ts";
import type { FileConfig } from "../../config/schema.ts";
import type { Inventory } from "../../inventory/interface.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import type { Reservations } from "../../inventory/reservations/interface.ts";
import { type InventoryOptions, ReservationInventory } from "../../inventory/reservations/inventory.ts";
import { MemoryReservations } from "../../inventory/reservations/memory.ts";
import { creditSol } from "../../src/chain/local/seed.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { logCapture, makeWorld, transferOut, type World, withToken } from "./support.ts";

const cleanups = cleanupsAfterEach();

/** A started inventory on `w` (options overridden by `opts`) over `state` (a fresh memory store by default). */
async function started(
  w: World,
  opts: Partial<InventoryOptions> = {},
  state: Reservations = new MemoryReservations(),
): Promise<ReservationInventory> {
  const inv = new ReservationInventory(state, { ...w.options(), ...opts });
  cleanups.push(() => inv.close());
  await inv.start();
  return inv;
}

/** The world's chain, counting the reads the inventory makes; `fail` makes them throw. */
function countedChain(w: World) {
  const c = {
    reads: 0,
    fail: false,
    getAccounts: (keys: PublicKey[]) => {
      c.reads++;
      return c.fail ? Promise.reject(new Error("rpc down")) : w.chain.getAccounts(keys);
    },
  };
  return c;
}

/** A memory store that can be made unreachable, or replaced by an empty one (Redis restarted without its data). */
class FlakyReservations implements Reservations {
  inner = new MemoryReservations();
  down = false;
  reserve: Reservations["reserve"] = (r) => this.inner.reserve(r);
  release: Reservations["release"] = (id) => this.inner.release(id);
  commit: Reservations["commit"] = (id, at) => this.inner.commit(id, at);
  refusesWrites = false;
  setBalances: Reservations["setBalances"] = (at, l, b) =>
    this.refusesWrites ? Promise.reject(new Error("READONLY")) : this.inner.setBalances(at, l, b);
  list: Reservations["list"] = () => this.inner.list();
  state: Reservations["state"] = (now) =>
    this.down ? Promise.reject(new Error("connection refused")) : this.inner.state(now);
}

const holding = (inv: Inventory, symbol: string) => inv.snapshot().holdings.find((h) => h.symbol === symbol)!;
const withInventory = (change: Partial<FileConfig["inventory"]>) => (f: FileConfig) => ({
  ...f,
  inventory: { ...f.inventory, ...change },
});
const UNKNOWN = Keypair.generate().publicKey.toBase58();

describe("the quote path's check and the swap path's reserve", () => {
  it("refuses a mint it does not trade, naming it", async () => {
    const w = makeWorld();
    const inv = await started(w);
    const refusal = { ok: false, code: "INVENTORY_INSUFFICIENT", context: `${UNKNOWN} is not held` };
    expect(inv.check({ outMint: UNKNOWN, outAmount: 1n })).toEqual(refusal);
    expect(
      await inv.reserve({ quoteId: "q", mint: UNKNOWN, amount: 1n, expiresAtMs: w.clock.t + 1_000 }),
    ).toEqual(refusal);
  });

  it("says exactly how much is available above the buffer when asked for more", async () => {
    const w = makeWorld(withToken("USDC", { safetyBuffer: "5000000" }));
    const inv = await started(w);
    const balance = holding(inv, "USDC").balance;
    const context = `${balance} USDC asked, ${balance - 5_000_000n} available`;
    expect(inv.check({ outMint: MINT.USDC, outAmount: balance })).toEqual({
      ok: false,
      code: "INVENTORY_INSUFFICIENT",
      context,
    });
    expect(
      await inv.reserve({ quoteId: "q", mint: MINT.USDC, amount: balance, expiresAtMs: w.clock.t + 1_000 }),
    ).toEqual({ ok: false, code: "INVENTORY_INSUFFICIENT", context });
  });

  it("says 0 available, not a negative amount, when the buffer is above the balance", async () => {
    const w = makeWorld(withToken("USDC", { safetyBuffer: (10_000_000n * 1_000_000n + 1n).toString() }));
    const inv = await started(w);
    expect(inv.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({
      ok: false,
      code: "INVENTORY_INSUFFICIENT",
      context: "1 USDC asked, 0 available",
    });
  });

  it("keeps quoting at exactly maxBalanceAgeMs since the last read, and stops one millisecond later", async () => {
    const w = makeWorld();
    const inv = await started(w);
    w.clock.t += w.config.file.inventory.maxBalanceAgeMs;
    expect(inv.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({ ok: true });
    w.clock.t += 1;
    expect(inv.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({
      ok: false,
      code: "INVENTORY_STALE",
      context: "maker balances are not known recently",
    });
  });

  it("keeps quoting with exactly the minimum SOL for fees, and says what it has when below it", async () => {
    const exact = await started(makeWorld(withInventory({ minSolLamports: "100000000000" })));
    expect(exact.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({ ok: true });
    const short = await started(makeWorld(withInventory({ minSolLamports: "100000000001" })));
    expect(short.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({
      ok: false,
      code: "SOL_FOR_FEES_LOW",
      context: "maker has 100000000000 lamports, keeps at least 100000000001 for fees",
    });
  });

  describe("exposure limits", () => {
    // Both tokens at target, at most 1,000 USD off it.
    const limited = (f: FileConfig) =>
      withToken("USDC", { targetInventory: (10_000_000n * 1_000_000n).toString(), maxExposureUsd: "1000" })(
        withToken("SOL", { targetInventory: (10_000n * 1_000_000_000n).toString(), maxExposureUsd: "1000" })(
          f,
        ),
      );
    const usdLimit = (w: World, mint: string) => w.usd.unitsFor(mint, parseDecimal("1000"))!;

    it("lets a token go exactly the limit below target, and not one unit more, at quote and at reserve", async () => {
      const w = makeWorld(limited);
      const inv = await started(w);
      const limit = usdLimit(w, MINT.SOL);
      expect(inv.check({ outMint: MINT.SOL, outAmount: limit })).toEqual({ ok: true });
      expect(inv.check({ outMint: MINT.SOL, outAmount: limit + 1n })).toEqual({
        ok: false,
        code: "EXPOSURE_LIMIT_EXCEEDED",
        context: "SOL would be more than 1000.00 USD below target",
      });
      const reserve = (quoteId: string, amount: bigint) =>
        inv.reserve({ quoteId, mint: MINT.SOL, amount, expiresAtMs: w.clock.t + 60_000 });
      expect(await reserve("over", limit + 1n)).toEqual({
        ok: false,
        code: "EXPOSURE_LIMIT_EXCEEDED",
        context: "SOL exposure limit",
      });
      expect(await reserve("at", limit)).toEqual({ ok: true });
    });

    it("counts incoming units toward the limit above target, up to it exactly", async () => {
      const w = makeWorld(limited);
      const inv = await started(w);
      const limit = usdLimit(w, MINT.USDC);
      const incoming = 300_000_000n;
      expect(
        await inv.reserve({
          quoteId: "in",
          mint: MINT.SOL,
          amount: 1n,
          inputMint: MINT.USDC,
          inputAmount: incoming,
          expiresAtMs: w.clock.t + 60_000,
        }),
      ).toEqual({ ok: true });
      const trade = { outMint: MINT.SOL, outAmount: 1n, inMint: MINT.USDC };
      expect(inv.check({ ...trade, inAmount: limit - incoming })).toEqual({ ok: true });
      expect(inv.check({ ...trade, inAmount: limit - incoming + 1n })).toEqual({
        ok: false,
        code: "EXPOSURE_LIMIT_EXCEEDED",
        context: "USDC would be more than 1000.00 USD above target",
      });
      expect(
        await inv.reserve({
          quoteId: "over",
          mint: MINT.SOL,
          amount: 1n,
          inputMint: MINT.USDC,
          inputAmount: limit - incoming + 1n,
          expiresAtMs: w.clock.t + 60_000,
        }),
      ).toEqual({ ok: false, code: "EXPOSURE_LIMIT_EXCEEDED", context: "USDC exposure limit" });
    });

    it("refuses to quote a limited token without a fresh USD price, and reserves it without the bound", async () => {
      const w = makeWorld(
        withToken("SOL", { targetInventory: (10_000n * 1_000_000_000n).toString(), maxExposureUsd: "1000" }),
      );
      const noPrice: UsdValues = {
        hasRoute: () => true,
        price: () => undefined,
        value: () => undefined,
        unitsFor: () => undefined,
      };
      const inv = await started(w, { usd: noPrice });
      const refusal = {
        ok: false,
        code: "EXPOSURE_LIMIT_EXCEEDED",
        context: "no fresh USD price for SOL: exposure cannot be measured",
      };
      expect(inv.check({ outMint: MINT.SOL, outAmount: 1n })).toEqual(refusal);
      expect(inv.check({ outMint: MINT.USDC, outAmount: 1n, inMint: MINT.SOL, inAmount: 1n })).toEqual(
        refusal,
      );
      expect(
        await inv.reserve({
          quoteId: "q",
          mint: MINT.SOL,
          amount: 9_000_000_000_000n,
          expiresAtMs: w.clock.t + 1_000,
        }),
      ).toEqual({ ok: true });
    });

    it("refuses an exposure limit on a token nothing values in USD", () => {
      const w = makeWorld(limited);
      expect(() => new MemoryInventory({ ...w.options(), usd: undefined })).toThrow(
        "tokens.SOL.maxExposureUsd: no pair values SOL in USD (needs a route to a stable token)",
      );
    });
  });
});

describe("what the inventory shows", () => {
  it("positions a mint at its balance less what is reserved plus what is incoming", async () => {
    const w = makeWorld();
    const inv = await started(w);
    const usdc = holding(inv, "USDC").balance;
    const sol = holding(inv, "SOL").balance;
    await inv.reserve({
      quoteId: "q",
      mint: MINT.USDC,
      amount: 2_000_000n,
      inputMint: MINT.SOL,
      inputAmount: 3_000n,
      expiresAtMs: w.clock.t + 60_000,
    });
    expect(inv.position(MINT.USDC)).toBe(usdc - 2_000_000n);
    expect(inv.position(MINT.SOL)).toBe(sol + 3_000n);
    expect(inv.position(UNKNOWN)).toBeUndefined();
  });

  it("asks the shared state for an output leg alone when a reservation has no input leg", async () => {
    const w = makeWorld();
    const state = new FlakyReservations();
    const asked: Parameters<Reservations["reserve"]>[0][] = [];
    state.reserve = (r) => {
      asked.push(r);
      return state.inner.reserve(r);
    };
    const inv = await started(w, {}, state);
    const usdc = holding(inv, "USDC").balance;
    expect(
      await inv.reserve({
        quoteId: "q",
        mint: MINT.USDC,
        amount: 2_000_000n,
        expiresAtMs: w.clock.t + 60_000,
      }),
    ).toEqual({ ok: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]).not.toHaveProperty("inMint");
    expect(asked[0]).not.toHaveProperty("inAmount");
    expect(inv.position(MINT.USDC)).toBe(usdc - 2_000_000n);
  });

  it("shows every configured token with no ATA and nothing held before the first chain read", () => {
    const w = makeWorld();
    const inv = new MemoryInventory(w.options());
    expect(inv.snapshot().holdings.find((h) => h.symbol === "USDC")).toEqual({
      mint: MINT.USDC,
      symbol: "USDC",
      ata: "",
      ataExists: false,
      balance: 0n,
      reserved: 0n,
      incoming: 0n,
    });
  });
});

describe("change listeners", () => {
  it("hears a change of the maker's SOL alone, not a sync that changed nothing, and no more once unsubscribed", async () => {
    const w = makeWorld();
    const inv = await started(w);
    let heard = 0;
    const stop = inv.onChange(() => heard++);
    await inv.sync();
    expect(heard).toBe(0);
    creditSol(w.chain, w.maker.publicKey, 1n);
    await inv.refresh();
    expect(heard).toBe(1);
    stop();
    creditSol(w.chain, w.maker.publicKey, 1n);
    await inv.refresh();
    expect(heard).toBe(1);
  });

  it("tells every listener, even after one of them throws", async () => {
    const w = makeWorld();
    const inv = await started(w);
    let heard = 0;
    inv.onChange(() => {
      throw new Error("listener bug");
    });
    inv.onChange(() => heard++);
    creditSol(w.chain, w.maker.publicKey, 1n);
    await inv.refresh();
    expect(heard).toBe(1);
  });
});

describe("the shared reservation state, unreadable or emptied", () => {
  it("logs an outage once and its end once, and a second outage again", async () => {
    const w = makeWorld();
    const state = new FlakyReservations();
    const { log, lines } = logCapture();
    const inv = await started(w, { log }, state);
    const said = () => lines.map((l) => l.msg);
    expect(said()).toEqual([]);
    state.down = true;
    await inv.sync();
    await inv.sync();
    expect(said()).toEqual(["inventory: cannot read the shared reservation state"]);
    // Meanwhile the last view still answers.
    expect(inv.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({ ok: true });
    state.down = false;
    await inv.sync();
    await inv.sync();
    state.down = true;
    await inv.sync();
    expect(said()).toEqual([
      "inventory: cannot read the shared reservation state",
      "inventory: the shared reservation state answers again",
      "inventory: cannot read the shared reservation state",
    ]);
  });

  it("writes the balances back from the chain when the shared state comes back empty, quoting on meanwhile", async () => {
    const w = makeWorld();
    const state = new FlakyReservations();
    const inv = await started(w, {}, state);
    state.inner = new MemoryReservations();
    await inv.sync();
    expect(inv.check({ outMint: MINT.USDC, outAmount: 1n })).toEqual({ ok: true });
    await vi.waitFor(async () => expect((await state.inner.state(w.clock.t)).balancesAtMs).toBe(w.clock.t));
  });

  it("keeps the last chain read's time when the balances it read cannot be recorded", async () => {
    const w = makeWorld();
    const state = new FlakyReservations();
    const inv = await started(w, {}, state);
    const readAt = inv.snapshot().chainReadAtMs;
    expect(readAt).toBe(w.clock.t);
    state.refusesWrites = true;
    w.clock.t += 1_000;
    await inv.refresh();
    expect(inv.snapshot().chainReadAtMs).toBe(readAt);
  });

  it("leaves an empty shared state to the next chain read before any balances are known", async () => {
    const w = makeWorld();
    const chain = countedChain(w);
    chain.fail = true;
    const inv = await started(w, { chain });
    expect(chain.reads).toBe(1);
    await inv.sync();
    expect(chain.reads).toBe(1);
    expect(inv.check({ outMint: MINT.USDC, outAmount: 1n })).toMatchObject({ code: "INVENTORY_STALE" });
  });
});

describe("what runs by itself", () => {
  it("settles a committed fill by itself once the settle margin has passed", async () => {
    const w = makeWorld(withInventory({ settleMarginMs: 100 }));
    // Real time here: the settle read is scheduled by a timer, and must start at or after the margin.
    const inv = await started(w, { now: Date.now });
    await inv.reserve({
      quoteId: "fill",
      mint: MINT.USDC,
      amount: 4_000_000n,
      expiresAtMs: Date.now() + 60_000,
    });
    await transferOut(w, MINT.USDC, 4_000_000n);
    await inv.commit("fill");
    expect(holding(inv, "USDC").reserved).toBe(4_000_000n);
    await vi.waitFor(() => expect(holding(inv, "USDC").reserved).toBe(0n), { timeout: 3_000 });
  });

  it("re-reads the chain at once when a fill is committed after its reservation lapsed", async () => {
    const w = makeWorld(withInventory({ settleMarginMs: 60_000 }));
    const inv = await started(w);
    const before = holding(inv, "USDC").balance;
    await inv.reserve({
      quoteId: "fill",
      mint: MINT.USDC,
      amount: 4_000_000n,
      expiresAtMs: w.clock.t + 1_000,
    });
    w.clock.t += 1_000;
    await inv.sync(); // the shared state sweeps the lapsed reservation
    await transferOut(w, MINT.USDC, 4_000_000n);
    await inv.commit("fill");
    await vi.waitFor(() => expect(holding(inv, "USDC").balance).toBe(before - 4_000_000n), {
      timeout: 3_000,
    });
  });

  it("picks up another instance's reservation from the shared state every syncMs, between chain reads", async () => {
    const w = makeWorld(withInventory({ refreshMs: 60_000, syncMs: 50 }));
    const shared = new MemoryReservations();
    const a = await started(w, {}, shared);
    const b = await started(w, {}, shared);
    await b.reserve({ quoteId: "b", mint: MINT.USDC, amount: 5n, expiresAtMs: w.clock.t + 60_000 });
    await vi.waitFor(() => expect(holding(a, "USDC").reserved).toBe(5n), { timeout: 3_000 });
  });

  it("keeps reading the chain and the shared state while running, and stops once closed", async () => {
    const w = makeWorld(withInventory({ refreshMs: 1_000, syncMs: 50 }));
    const chain = countedChain(w);
    const shared = new MemoryReservations();
    const a = await started(w, { chain }, shared);
    const b = await started(w, {}, shared);
    await b.reserve({ quoteId: "b", mint: MINT.USDC, amount: 5n, expiresAtMs: w.clock.t + 60_000 });
    await vi.waitFor(() => expect(holding(a, "USDC").reserved).toBe(5n), { timeout: 3_000 });
    const before = holding(a, "USDC").balance;
    await transferOut(w, MINT.USDC, 1n);
    await vi.waitFor(() => expect(holding(a, "USDC").balance).toBe(before - 1n), { timeout: 3_000 });
    await a.close();
    const reads = chain.reads;
    await new Promise((r) => setTimeout(r, 1_300));
    expect(chain.reads).toBe(reads);
  });

  it("waits on close for a chain read in flight to finish", async () => {
    const w = makeWorld();
    const chain = countedChain(w);
    const inv = await started(w, { chain });
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const getAccounts = chain.getAccounts;
    chain.getAccounts = async (keys) => {
      await gate;
      return getAccounts(keys);
    };
    creditSol(w.chain, w.maker.publicKey, 1n);
    void inv.refresh();
    let closed = false;
    const closing = inv.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    open();
    await closing;
    expect(inv.snapshot().lamports).toBe(100_000_000_001n);
  });

  it("schedules no settle read for a commit after close", async () => {
    const w = makeWorld(withInventory({ settleMarginMs: 0 }));
    const chain = countedChain(w);
    const inv = await started(w, { chain });
    await inv.reserve({ quoteId: "a", mint: MINT.USDC, amount: 1n, expiresAtMs: w.clock.t + 60_000 });
    await inv.close();
    await inv.commit("a");
    const reads = chain.reads;
    await new Promise((r) => setTimeout(r, 300));
    expect(chain.reads).toBe(reads);
  });

  it("schedules no chain read once closed, and drops a pending settle read", async () => {
    const w = makeWorld(withInventory({ settleMarginMs: 0 }));
    const chain = countedChain(w);
    const inv = await started(w, { chain });
    await inv.reserve({ quoteId: "a", mint: MINT.USDC, amount: 1n, expiresAtMs: w.clock.t + 60_000 });
    await inv.reserve({ quoteId: "b", mint: MINT.USDC, amount: 1n, expiresAtMs: w.clock.t + 60_000 });
    await inv.commit("a");
    await inv.close();
    await inv.commit("b");
    const reads = chain.reads;
    await new Promise((r) => setTimeout(r, 300));
    expect(chain.reads).toBe(reads);
  });
});

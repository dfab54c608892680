/**
 * The reserve step (src/swap/steps/reserve.ts) through POST /swap: what it reserves while the fill is
 * in flight (the quoted amountOut of the output token, the fill's input as the inflow, until the
 * reservation's TTL on the swap's clock), and its refusals: the inventory unreachable or short, and a
 * budget with too little left to sign. Each refusal leaves nothing reserved. The first request is held
 * at the maker's signer by a DELIBERATE gate (setup.ts) to look at what it holds; the swap's clock is
 * the test's, so the budget left after reserving is exact.
 */
import { PublicKey } from "@solana/web3.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { creditToken, tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import { type Harness, inProcess, postSwap } from "../support/harness.ts";
import { answerAfterLook, clockedHarness, type GatedSigner, SwapClock, signedJupFill } from "./setup.ts";

const BUDGET_MS = 5_000;
const TTL_MS = 60_000;
const clock = new SwapClock();
let h: Harness;
let signer: GatedSigner;

beforeAll(async () => {
  ({ h, signer } = await clockedHarness(clock, { budgetMs: BUDGET_MS, reservationTtlMs: TTL_MS }));
});
afterAll(() => h.close());
afterEach(() => {
  clock.reset();
  vi.restoreAllMocks();
});

const openReservation = async (quoteId: string) =>
  (await h.inventory.reservations()).find((r) => r.quoteId === quoteId);

describe("what a fill in flight holds", () => {
  it("reserves the quoted amountOut of the output token and the fill's input as the inflow, until the TTL on the swap's clock", async () => {
    const http = inProcess(h.app);
    const { body, response, stored } = await signedJupFill(h, http, 5_000_000_000n);
    clock.base = Date.now();
    const base = clock.base;
    const answer = await answerAfterLook(
      signer,
      () => postSwap(http, body),
      async () => {
        expect(await openReservation(response.quoteId)).toMatchObject({
          quoteId: response.quoteId,
          mint: MINT.USDC,
          amount: BigInt(stored.response.amountOut),
          inputMint: MINT.JUP,
          inputAmount: 1_000_000_000n,
          expiresAtMs: base + TTL_MS,
          state: "open",
        });
      },
    );
    expect(answer.state).toBe("accepted");
  });
});

describe("the reserve step's refusals", () => {
  it("refuses (INVENTORY_UNAVAILABLE) with the inventory's error when it cannot be reached, and releases what it may have reserved", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    vi.spyOn(h.inventory, "reserve").mockRejectedValueOnce(new Error("inventory store down"));
    const released = vi.spyOn(h.inventory, "release");
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "inventory unavailable: inventory store down",
    });
    expect(released).toHaveBeenCalledWith(response.quoteId);
  });

  it("refuses with the inventory's own code and detail when the maker no longer holds amountOut", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    const usdc = new PublicKey(MINT.USDC);
    const held = tokenBalance(h.chain, h.maker.publicKey, usdc);
    creditToken(h.chain, h.maker.publicKey, usdc, -held);
    try {
      await h.inventory.refresh();
      const res = (await postSwap(http, body)).body;
      expect(res.state).toBe("rejected");
      expect(res.rejectionReason).toMatch(/^INVENTORY_INSUFFICIENT: \S/);
      expect(await openReservation(response.quoteId)).toBeUndefined();
    } finally {
      creditToken(h.chain, h.maker.publicKey, usdc, held);
      await h.inventory.refresh();
    }
  });

  it("signs with exactly 250 ms of the budget left after reserving", async () => {
    const http = inProcess(h.app);
    const { body } = await signedJupFill(h, http, 5_000_000_000n);
    clock.base = Date.now();
    const reserve = h.inventory.reserve.bind(h.inventory);
    vi.spyOn(h.inventory, "reserve").mockImplementationOnce(async (r) => {
      const res = await reserve(r);
      clock.offset = BUDGET_MS - 250;
      return res;
    });
    expect((await postSwap(http, body)).body.state).toBe("accepted");
  });

  it("refuses (BUDGET_EXCEEDED) with under 250 ms left after reserving, and releases the reservation", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    clock.base = Date.now();
    const reserve = h.inventory.reserve.bind(h.inventory);
    vi.spyOn(h.inventory, "reserve").mockImplementationOnce(async (r) => {
      const res = await reserve(r);
      clock.offset = BUDGET_MS - 249;
      return res;
    });
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "the swap ran out of its time budget before signing",
    });
    expect(await openReservation(response.quoteId)).toBeUndefined();
  });
});

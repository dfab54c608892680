/**
 * The executor itself (src/swap/executor.ts): its defaults, as a service composed without swap
 * tunables runs them (the budget, the reservation's TTL, the tracking window, expire_at's safety
 * margin and grace), and its answer to a step that fails unexpectedly. The swap's clock is the
 * test's (`now`), and the chain's clock is pinned (faults.ts `clockAt`), so each boundary is exact.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { PendingFill } from "../../src/journal/interface.ts";
import { type Harness, inProcess, operatorFill, postSwap } from "../support/harness.ts";
import type { FaultyChain } from "./faults.ts";
import { answerAfterLook, clockedHarness, type GatedSigner, SwapClock, signedJupFill } from "./setup.ts";

const clock = new SwapClock();
let h: Harness;
let signer: GatedSigner;
let chain: FaultyChain;

beforeAll(async () => {
  // No tunables but the clock: the executor's defaults.
  ({ h, signer, chain } = await clockedHarness(clock));
});
afterAll(() => h.close());
afterEach(() => {
  clock.reset();
  chain.disarm();
  vi.restoreAllMocks();
});

describe("the executor's defaults", () => {
  it("reserves for 180 s and tracks a sent fill for 180 s", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    clock.base = Date.now();
    const added = vi.spyOn(h.journal, "addPending");
    const base = clock.base;
    const answer = await answerAfterLook(
      signer,
      () => postSwap(http, body),
      async () => {
        const open = (await h.inventory.reservations()).find((r) => r.quoteId === response.quoteId);
        expect(open?.expiresAtMs).toBe(base + 180_000);
      },
    );
    expect(answer.state).toBe("accepted");
    const pending = added.mock.calls.map(([f]) => f).find((f) => f.quoteId === response.quoteId);
    expect((pending as PendingFill).trackUntilMs).toBe(base + 180_000);
  });

  it("gives a swap 20 s: it signs with 250 ms of them left after reserving, and refuses below", async () => {
    const http = inProcess(h.app);
    for (const [left, state] of [
      [250, "accepted"],
      [249, "rejected"],
    ] as const) {
      const { body } = await signedJupFill(h, http, 5_000_000_000n);
      clock.base = Date.now();
      clock.offset = 0;
      const reserve = h.inventory.reserve.bind(h.inventory);
      vi.spyOn(h.inventory, "reserve").mockImplementationOnce(async (r) => {
        const res = await reserve(r);
        clock.offset = 20_000 - left;
        return res;
      });
      expect((await postSwap(http, body)).body.state).toBe(state);
    }
  });

  it("keeps 1 s of expire_at ahead of chain time for landing", async () => {
    const http = inProcess(h.app);
    const { body, stored } = await signedJupFill(h, http, 5_000_000_000n);
    const expireAt = BigInt(Math.floor(stored.expiresAtMs / 1000));
    chain.clockAt = expireAt;
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: stored.quoteId,
      state: "rejected",
      rejectionReason: `QUOTE_EXPIRED: the fill expires at ${expireAt}, chain time is ${expireAt} (1 s are kept for landing)`,
    });
    const next = await signedJupFill(h, http, 5_000_000_000n);
    chain.clockAt = BigInt(Math.floor(next.stored.expiresAtMs / 1000)) - 1n;
    expect((await postSwap(http, next.body)).body.state).toBe("accepted");
  });

  it("lets expire_at run 5 s past the quote's expiry, not 6", async () => {
    const http = inProcess(h.app);
    for (const [grace, accepted] of [
      [5n, true],
      [6n, false],
    ] as const) {
      const { stored, taker, response } = await signedJupFill(h, http, 5_000_000_000n);
      const ceil = BigInt(Math.ceil(stored.expiresAtMs / 1000));
      chain.clockAt = ceil - 2n;
      const tx = await operatorFill(h, stored, taker.publicKey, { expireAt: ceil + grace });
      tx.sign([taker]);
      const res = await postSwap(http, {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      if (accepted) expect(res.body.state).toBe("accepted");
      else expect(res.body.rejectionReason).toMatch(/^INVALID_EXPIRY: /);
    }
  });
});

describe("the send step's time", () => {
  it("bounds the journal write by what is left less 1 s, and gives the chain port the send's time less 250 ms", async () => {
    const http = inProcess(h.app);
    const { body } = await signedJupFill(h, http, 5_000_000_000n);
    clock.base = Date.now();
    const reserve = h.inventory.reserve.bind(h.inventory);
    vi.spyOn(h.inventory, "reserve").mockImplementationOnce(async (r) => {
      const res = await reserve(r);
      clock.offset = 20_000 - 2_500; // 2.5 s of the budget left from here on
      return res;
    });
    const record = vi.spyOn(h.confirmations, "record");
    const send = vi.spyOn(chain, "send");
    expect((await postSwap(http, body)).body.state).toBe("accepted");
    expect(record.mock.calls.at(-1)?.[1]).toBe(1_500);
    expect(send.mock.calls.at(-1)?.[1]).toEqual({ timeoutMs: 2_250 });
  });
});

describe("a duplicate on the default poll", () => {
  it("waits for the first request's answer, polling the claim, and answers it", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    const claims = vi.spyOn(h.store, "claim");
    const count = () => claims.mock.calls.filter(([q]) => q === response.quoteId).length;
    const release = signer.hold();
    try {
      const first = postSwap(http, body);
      await vi.waitFor(() => expect(signer.waiting).toBe(true));
      const duplicate = postSwap(http, body);
      // The first's claim, the duplicate's, and at least one poll of it.
      await vi.waitFor(() => expect(count()).toBeGreaterThanOrEqual(3));
      release("sign");
      const a = (await first).body;
      expect(a.state).toBe("accepted");
      expect((await duplicate).body).toEqual(a);
    } finally {
      release("sign");
    }
  });
});

describe("a step that fails unexpectedly", () => {
  it("answers rejected with an internal error, not a 500, and counts it in the fill rate", async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    vi.spyOn(h.confirmations, "record").mockRejectedValueOnce(new TypeError("a bug"));
    const counted = h.fillRate.snapshot().counted;
    const res = await postSwap(http, body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "internal error while processing the swap",
    });
    expect(h.fillRate.snapshot().counted).toBe(counted + 1);
  });
});

/**
 * The claim step (src/swap/steps/claim.ts) when the first request for a quote has not answered yet:
 * a duplicate of it waits for the first answer, and answers from what it can see when that answer
 * does not come (the first gave the quote back, the fill settled on chain, the budget ran out). And
 * the quote store's failures, each answered in the words the operator reads. The first request is
 * held by a DELIBERATE gate on the maker's signer or on the quote store's recordOutcome (a spy that
 * forwards once opened), never faked; the chain is the fault injector of faults.ts.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { creditToken } from "../../src/chain/local/seed.ts";
import type { SwapResponse } from "../../src/contract/swap.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { MINT } from "../support/config.ts";
import { createHarness, type Harness, inProcess, postSwap } from "../support/harness.ts";
import type { FaultyChain } from "./faults.ts";
import { type GatedSigner, gatedHarness, ledgerExecutor, signedJupFill } from "./setup.ts";

/** Resolves once the store has been asked to claim `quoteId` `n` times (by any request). */
function claimCalls(h: Harness) {
  const spy = vi.spyOn(h.store, "claim");
  return {
    spy,
    count: (quoteId: string) => spy.mock.calls.filter(([q]) => q === quoteId).length,
  };
}

describe("a duplicate whose first request has not answered", () => {
  let h: Harness;
  let signer: GatedSigner;
  let chain: FaultyChain;
  let release: ((how: "sign" | "fail") => void) | undefined;

  beforeAll(async () => {
    ({ h, signer, chain } = await gatedHarness({
      swap: { budgetMs: 4_000, inFlightPollMs: 20, trackForMs: 1_000 },
    }));
  });
  afterAll(() => h.close());
  beforeEach(() => chain.disarm());
  afterEach(() => {
    release?.("sign");
    release = undefined;
    chain.disarm();
    vi.restoreAllMocks();
  });

  /**
   * A signed JUP fill whose first POST /swap is under way and held at the signer, its claims counted;
   * `letGo` lets the signer sign or fail it.
   */
  async function firstWaitingToSign() {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    const claims = claimCalls(h);
    const held = signer.hold();
    release = held;
    const letGo = (how: "sign" | "fail") => {
      release = undefined;
      held(how);
    };
    return { http, body, response, claims, letGo, first: postSwap(http, body) };
  }

  it("answers `retry` and gives the quote back when the first request released it unsent, so the same bytes fill it afterwards", {
    timeout: 15_000,
  }, async () => {
    const { http, body, response, claims, letGo, first } = await firstWaitingToSign();
    // The first holds the claim (its claim call made) and waits in the signer.
    await vi.waitFor(() => expect(claims.count(response.quoteId)).toBe(1));
    const duplicate = postSwap(http, body);
    // The duplicate found the claim (no answer on it) and polled it once more.
    await vi.waitFor(() => expect(claims.count(response.quoteId)).toBeGreaterThanOrEqual(3));
    letGo("fail");
    expect((await first).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "the maker signature could not be produced: remote signer connection reset",
    });
    expect((await duplicate).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: "the earlier request for this quote was not sent and released it; retry",
    });
    // Neither kept the claim: the same bytes, posted again, fill the quote.
    const again = await postSwap(http, body);
    expect(again.body.state).toBe("accepted");
  });

  it("answers accepted with the fill's signature once the fill it tracks lands, while the first's answer is not yet recorded", {
    timeout: 15_000,
  }, async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    const claims = claimCalls(h);
    const recorded = heldRecordOutcome(h, response.quoteId);
    // The fill's status is held until the duplicate has seen it pending.
    let openStatus!: () => void;
    chain.arm("getSignatureStatus", { kind: "gate", open: new Promise<void>((r) => (openStatus = r)) });
    const first = postSwap(http, body);
    await vi.waitFor(() => expect(recorded.firstCall).toBeDefined());
    const duplicate = postSwap(http, body);
    const before = claims.count(response.quoteId);
    await vi.waitFor(() => expect(claims.count(response.quoteId)).toBeGreaterThanOrEqual(before + 2));
    openStatus();
    const answer = (await duplicate).body;
    const sent = recorded.firstCall as SwapResponse;
    expect(sent.state).toBe("accepted");
    expect(answer).toEqual(sent);
    // The duplicate recorded the answer it gave on the claim.
    expect(recorded.calls.map(([q, r]) => [q, r])).toContainEqual([response.quoteId, sent]);
    recorded.open();
    expect((await first).body).toEqual(sent);
  });

  it("answers that the fill failed on chain when the fill it tracks fails, naming its signature", {
    timeout: 15_000,
  }, async () => {
    const http = inProcess(h.app);
    const { body, response, taker } = await signedJupFill(h, http, 5_000_000_000n);
    const recorded = heldRecordOutcome(h, response.quoteId);
    release = signer.hold();
    const first = postSwap(http, body);
    // Between the checks and the send (the first waits to be signed) the taker's JUP leaves: the
    // fill lands and fails on chain.
    await vi.waitFor(() => expect(signer.waiting).toBe(true));
    creditToken(h.chain, taker.publicKey, new PublicKey(MINT.JUP), -5_000_000_000n);
    release("sign");
    release = undefined;
    await vi.waitFor(() => expect(recorded.firstCall).toBeDefined());
    const sig = (recorded.firstCall as { txSignature: string }).txSignature;
    expect(await h.confirmations.settled(response.quoteId)).toBe("failed");
    const duplicate = await postSwap(http, body);
    expect(duplicate.body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: `the transaction ${sig} failed on chain`,
    });
    recorded.open();
    await first;
  });

  it("answers that the fill expired before it landed when the fill it tracks was never taken by the chain", {
    timeout: 15_000,
  }, async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    const recorded = heldRecordOutcome(h, response.quoteId);
    // The send is never acknowledged; the tracker gives the fill up as expired (trackForMs below).
    chain.arm("send", { kind: "fail", error: "connection reset after the request went out" });
    const first = postSwap(http, body);
    await vi.waitFor(() => expect(recorded.firstCall).toBeDefined());
    const known = h.confirmations.known(response.quoteId);
    expect(known).toBeDefined();
    const sig = known?.fill.signature;
    expect(await h.confirmations.settled(response.quoteId)).toBe("expired");
    const duplicate = await postSwap(http, body);
    expect(duplicate.body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: `the transaction ${sig} expired before it landed`,
    });
    recorded.open();
    await first;
  });

  it("does not answer from a fill this process tracks for another message of the quote, and waits for the first's answer", {
    timeout: 15_000,
  }, async () => {
    const { http, body, response, claims, letGo, first } = await firstWaitingToSign();
    await vi.waitFor(() => expect(signer.waiting).toBe(true));
    // A fill of another message for this quote, tracked here and given up (its window already past).
    h.confirmations.watch({
      quoteId: response.quoteId,
      requestId: response.requestId,
      messageHash: "0".repeat(64),
      signature: bs58.encode(Keypair.generate().secretKey),
      sentAtMs: Date.now() - 10_000,
      trackUntilMs: Date.now() - 1,
      fee: { mint: MINT.USDC, amount: "0", feeBps: 10 },
    });
    await vi.waitFor(() => expect(h.confirmations.known(response.quoteId)?.state).toBe("expired"));
    const before = claims.count(response.quoteId);
    const duplicate = postSwap(http, body);
    await vi.waitFor(() => expect(claims.count(response.quoteId)).toBeGreaterThanOrEqual(before + 2));
    letGo("sign");
    const a = (await first).body;
    expect(a.state).toBe("accepted");
    expect((await duplicate).body).toEqual(a);
  });
});

/**
 * Holds the first recordOutcome of `quoteId` (the first request's answer is not on the claim yet)
 * until `open()`; every other call goes through.
 */
function heldRecordOutcome(h: Harness, quoteId: string) {
  const real = h.store.recordOutcome.bind(h.store);
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const state = {
    firstCall: undefined as SwapResponse | undefined,
    calls: [] as [string, SwapResponse][],
    open: () => open(),
  };
  vi.spyOn(h.store, "recordOutcome").mockImplementation(async (q, outcome) => {
    state.calls.push([q, outcome]);
    if (q === quoteId && state.firstCall === undefined) {
      state.firstCall = outcome;
      await gate;
    }
    return real(q, outcome);
  });
  return state;
}

describe("a duplicate with too little budget left to wait", () => {
  let h: Harness;
  let signer: GatedSigner;
  let frozenAt: number | undefined;

  beforeAll(async () => {
    // A budget of exactly the 1 s the poll keeps back plus one poll, on a clock that does not move:
    // the duplicate may not poll even once.
    ({ h, signer } = await gatedHarness({
      swap: { budgetMs: 1_020, inFlightPollMs: 20, now: () => frozenAt ?? Date.now() },
    }));
  });
  afterAll(() => h.close());

  it("answers at once that the earlier request is still in flight", { timeout: 15_000 }, async () => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    const claims = claimCalls(h);
    const release = signer.hold();
    try {
      frozenAt = Date.now();
      const first = postSwap(http, body);
      await vi.waitFor(() => expect(claims.count(response.quoteId)).toBe(1));
      const duplicate = await postSwap(http, body);
      expect(duplicate.body).toEqual({
        quoteId: response.quoteId,
        state: "rejected",
        rejectionReason: "an earlier request for this quote is still in flight; retry later",
      });
      expect(claims.count(response.quoteId)).toBe(2);
      release("sign");
      frozenAt = undefined;
      await first;
    } finally {
      release("sign");
      frozenAt = undefined;
      vi.restoreAllMocks();
    }
  });
});

describe("a quote store that fails", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ swap: { steps: { store: 300 } } });
  });
  afterAll(() => h.close());
  afterEach(() => vi.restoreAllMocks());

  it.each<[what: string, fail: (store: Harness["store"]) => unknown, reason: string]>([
    [
      "`failing fast while it is down` when the store's circuit is open",
      (store) => vi.spyOn(store, "get").mockRejectedValueOnce(new Error("circuit open: failing fast")),
      "quote store unavailable: failing fast while it is down",
    ],
    [
      "`Redis could not be reached` when binding the message fails, not the client's own text",
      (store) =>
        vi
          .spyOn(store, "bindMessage")
          .mockRejectedValueOnce(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
      "quote store unavailable: Redis could not be reached",
    ],
    [
      "with the step's timeout when the claim does not answer in time",
      (store) => vi.spyOn(store, "claim").mockImplementationOnce(() => new Promise(() => {})),
      "quote store unavailable: no answer within 300 ms",
    ],
  ])("answers %s", async (_what, fail, reason) => {
    const http = inProcess(h.app);
    const { body, response } = await signedJupFill(h, http, 5_000_000_000n);
    fail(h.store);
    expect((await postSwap(http, body)).body).toEqual({
      quoteId: response.quoteId,
      state: "rejected",
      rejectionReason: reason,
    });
  });
});

describe("the ledger's record of a duplicate", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h.close());

  it("journals one decision for a quote answered twice: the duplicate's answer is the first's, not a second decision", async () => {
    // The executor as compose.ts builds it with a ledger: its decisions go to the journal's outbox.
    const executor = ledgerExecutor(h);
    const http = inProcess(h.app);
    const { req, response } = await signedJupFill(h, http, 5_000_000_000n);
    const log = createLogger("silent");
    const first = await executor.execute(req, log);
    expect(first.state).toBe("accepted");
    expect(await executor.execute(req, log)).toEqual(first);
    await vi.waitFor(async () => expect(await h.journal.ledgerBacklog()).toBeGreaterThan(0));
    const entries = await h.journal.takeLedger("claim-test", 100, 0);
    const decisions = entries.filter(
      (e) => e.record.kind === "decision" && e.record.quoteId === response.quoteId,
    );
    expect(decisions).toHaveLength(1);
  });
});

/**
 * A chain that never answers must not hang a swap: the executor answers `rejected` with a reason
 * within its budget (1.5 s here; 20 s by default, inside the operator's 25 s). The chain is wrapped
 * by a DELIBERATE FAULT INJECTOR (faults.ts) whose armed method never resolves. The per-test
 * timeout (10 s) is what fails the test if the answer never comes; nothing here measures speed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CountingSigner, type Harness, inProcess, postSwap } from "../support/harness.ts";
import type { FaultyChain } from "./faults.ts";
import { faultyHarness, signedJupFill } from "./setup.ts";

let h: Harness;
let signer: CountingSigner;
let chain: FaultyChain;

beforeAll(async () => {
  ({ h, signer, chain } = await faultyHarness({
    // A short budget and a short tracking window so the test sees the whole story quickly.
    swap: { budgetMs: 1_500, trackForMs: 300 },
  }));
});
afterAll(() => h.close());
beforeEach(() => chain.disarm());

async function swapWith(arm: () => void) {
  const http = inProcess(h.app);
  const { response, body } = await signedJupFill(h, http, 5_000_000_000n);
  arm();
  const signs = signer.count;
  const res = await postSwap(http, body);
  return { res, signed: signer.count - signs, quoteId: response.quoteId };
}

describe("a chain that never answers", () => {
  it("rejects with a reason, unsigned, when the taker's balances cannot be read", {
    timeout: 10_000,
  }, async () => {
    const { res, signed } = await swapWith(() => chain.arm("getAccounts", { kind: "hang" }));
    expect(res.status).toBe(200);
    expect(res.body.state).toBe("rejected");
    expect(res.body.rejectionReason).toMatch(/could not read the taker's balances: no answer within \d+ ms/);
    expect(signed).toBe(0);
  });

  it("rejects with a reason, unsigned, when the chain clock cannot be read", {
    timeout: 10_000,
  }, async () => {
    const { res, signed } = await swapWith(() => chain.arm("getUnixTimestamp", { kind: "hang" }));
    expect(res.body.state).toBe("rejected");
    expect(res.body.rejectionReason).toMatch(/could not read the chain clock/);
    expect(signed).toBe(0);
  });

  it("rejects when a send is never acknowledged, and releases the reservation once the fill cannot land", {
    timeout: 10_000,
  }, async () => {
    const { res, signed, quoteId } = await swapWith(() => chain.arm("send", { kind: "hang" }));
    expect(res.body.state).toBe("rejected");
    expect(res.body.rejectionReason).toMatch(/did not acknowledge the transaction in time/);
    // Signed before the send: the answer is a rejection but the fill is tracked until it cannot land.
    expect(signed).toBe(1);
    expect(await h.confirmations.settled(quoteId)).toBe("expired");
    const open = await h.inventory.reservations();
    expect(open.map((r) => r.quoteId)).not.toContain(quoteId);
  });
});

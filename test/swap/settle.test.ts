/**
 * The settle step (src/swap/steps/settle.ts), called directly: however little of the swap's budget is
 * left, the quote store gets at least 250 ms to record the answer on the claim or give the quote back,
 * so a duplicate of the request still finds the first answer. The store here is a scripted stand-in
 * that answers at once; the budget is already spent.
 */
import { describe, expect, it, vi } from "vitest";
import { Budget } from "../../src/lib/bounded.ts";
import type { Logger } from "../../src/observability/logger.ts";
import type { QuoteStore } from "../../src/quote-store/interface.ts";
import { settleClaim } from "../../src/swap/steps/settle.ts";
import type { Decision, StepPorts, SwapSettings } from "../../src/swap/steps/step.ts";

function harness() {
  const store = {
    recordOutcome: vi.fn(async () => true),
    releaseClaim: vi.fn(async () => true),
  };
  const ports = { store: store as unknown as QuoteStore } as unknown as StepPorts;
  const settings = { steps: { store: 2_000 } } as unknown as SwapSettings;
  const warn = vi.fn();
  const log = { warn } as unknown as Logger;
  // Spent a second ago: every step's share of it is 0 ms.
  const spent = new Budget(Date.now() - 1_000);
  return { store, ports, settings, warn, log, spent };
}

const answer: Decision = {
  response: { quoteId: "q-1", state: "rejected", rejectionReason: "SEND_FAILED" } as Decision["response"],
  kind: "rejected",
};

describe("settleClaim", () => {
  it("records the answer on the claim even when the swap's budget is spent (the store's 250 ms floor)", async () => {
    const { store, ports, settings, warn, log, spent } = harness();
    await settleClaim(ports, settings, "q-1", "hash-1", answer, spent, log);
    expect(store.recordOutcome).toHaveBeenCalledWith("q-1", answer.response);
    expect(store.releaseClaim).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it("gives the quote back for an unsent fill even when the swap's budget is spent (the store's 250 ms floor)", async () => {
    const { store, ports, settings, warn, log, spent } = harness();
    await settleClaim(ports, settings, "q-1", "hash-1", { ...answer, releaseClaim: true }, spent, log);
    expect(store.releaseClaim).toHaveBeenCalledWith("q-1", "hash-1");
    expect(store.recordOutcome).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });
});

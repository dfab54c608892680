/**
 * What the executor journals for the ledger (its outbox, src/ledger/): one decision per answer, with
 * what the request revealed before it was answered (the message hash, the quote, the fill's terms),
 * and the acceptance journaled with a fill about to be sent. The executor is built as compose.ts
 * builds it with a ledger (`ledgerJournal`), over the harness's ports, on the test's clock, with its
 * own default cache of recent blockhashes and no fill-rate view.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { PendingFill } from "../../src/journal/interface.ts";
import type { DecisionRecord } from "../../src/ledger/records.ts";
import { createLogger } from "../../src/observability/logger.ts";
import type { SwapExecutor } from "../../src/swap/executor.ts";
import { createHarness, type Harness, inProcess } from "../support/harness.ts";
import { ledgerExecutor, signedJupFill } from "./setup.ts";

let h: Harness;
let executor: SwapExecutor;
let nowMs = 0;
const log = createLogger("silent");

beforeAll(async () => {
  h = await createHarness();
  executor = ledgerExecutor(h, () => nowMs);
});
afterAll(() => h.close());

/** A quote and the taker's signed fill for it, as the request the operator posts. */
const request = (jup: bigint) => signedJupFill(h, inProcess(h.app), jup);

async function decisionsFor(quoteId: string): Promise<DecisionRecord[]> {
  await vi.waitFor(async () => expect(await h.journal.ledgerBacklog()).toBeGreaterThan(0));
  const entries = await h.journal.takeLedger(`ledger-decisions-${quoteId}`, 1_000, 0);
  await h.journal.ackLedger(entries.map((e) => e.id));
  return entries
    .map((e) => e.record)
    .filter((r): r is DecisionRecord => r.kind === "decision" && r.quoteId === quoteId);
}

describe("the ledger's decisions", () => {
  it("journals an acceptance with its message hash, quote, filled terms, signature and times, and the same acceptance with the fill", async () => {
    const { req, stored, taker } = await request(5_000_000_000n);
    nowMs = Date.now();
    const received = nowMs;
    // A second passes while the inventory is reserved: received and decided are apart.
    const reserve = h.inventory.reserve.bind(h.inventory);
    vi.spyOn(h.inventory, "reserve").mockImplementationOnce(async (r) => {
      nowMs += 1_000;
      return reserve(r);
    });
    const added = vi.spyOn(h.journal, "addPending");
    const answer = await executor.execute(req, log);
    expect(answer.state).toBe("accepted");
    const [d, ...more] = await decisionsFor(req.quoteId);
    expect(more).toEqual([]);
    expect(d).toMatchObject({
      decision: "accepted",
      quoteId: req.quoteId,
      requestId: req.requestId,
      taker: taker.publicKey.toBase58(),
      txSignature: answer.txSignature,
      quote: { amountIn: stored.response.amountIn, amountOut: stored.response.amountOut },
      filledAmountIn: "1000000000",
      receivedAtMs: received,
      decidedAtMs: received + 1_000,
    });
    expect(d?.messageHash).toMatch(/^[0-9a-f]{64}$/);
    const pending = added.mock.calls.map(([f]) => f).find((f) => f.quoteId === req.quoteId) as PendingFill;
    expect(pending.messageHash).toBe(d?.messageHash);
    expect(pending.decision).toEqual(d);
    vi.restoreAllMocks();
  });

  it("journals a refusal after validation with the quote and the fill's terms it was judged on", async () => {
    const { req, stored } = await request(1n);
    nowMs = Date.now();
    const answer = await executor.execute(req, log);
    expect(answer.state).toEqual({ rejectedWithReason: "insufficientBalance" });
    const [d] = await decisionsFor(req.quoteId);
    expect(d).toMatchObject({
      decision: "rejectedWithReason",
      refusal: { code: "INSUFFICIENT_BALANCE" },
      quote: { amountIn: stored.response.amountIn },
      filledAmountIn: "1000000000",
    });
    expect(d?.messageHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("journals a refusal before the quote was accepted as the request's without it, but with the message hash", async () => {
    const { req } = await request(5_000_000_000n);
    nowMs = Date.now();
    const answer = await executor.execute({ ...req, requestId: "another-request" }, log);
    expect(answer.state).toBe("rejected");
    const [d] = await decisionsFor(req.quoteId);
    expect(d?.refusal?.code).toBe("INVALID_REQUEST_ID");
    expect(d?.quote).toBeUndefined();
    expect(d?.filledAmountIn).toBeUndefined();
    expect(d?.messageHash).toMatch(/^[0-9a-f]{64}$/);
  });
});

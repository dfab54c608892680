/**
 * The pair's mid journaled with a fill about to be sent (`midAtSend`, src/swap/steps/send.ts):
 * the 0 s markout of a fill whose sender dies before it lands (SIGKILLed with the fill at the RPC) is
 * taken from it by the process that settles the fill (src/ledger/markouts.ts). Through POST /swap on
 * the harness, with the markouts' mids given to the swap's ports as the wiring gives them.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import type { PendingFill } from "../../src/journal/interface.ts";
import type { StepPorts } from "../../src/swap/steps/step.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());
afterEach(() => {
  vi.restoreAllMocks();
  delete (h.executor as unknown as { ports: StepPorts }).ports.mids;
});

/** The journal entry of one accepted JUP -> USDC fill (the maker buys 1,000 JUP). */
async function journaled(): Promise<PendingFill> {
  const http = inProcess(h.app);
  const taker = Keypair.generate();
  fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
  const ask = { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n, taker: taker.publicKey };
  const { response, stored } = await askQuote(h, http, ask);
  const tx = await operatorFill(h, stored, taker.publicKey);
  tx.sign([taker]);
  const added = vi.spyOn(h.journal, "addPending");
  const res = await postSwap(http, {
    requestId: response.requestId,
    quoteId: response.quoteId,
    transaction: tx,
  });
  expect(res.body.state).toBe("accepted");
  const pending = added.mock.calls.map(([f]) => f).find((f) => f.quoteId === response.quoteId);
  if (!pending) throw new Error("no journal entry for the fill");
  return pending;
}

describe("the mid journaled with a fill about to be sent", () => {
  it("is the pair's mid the markouts see at the send, asked for the fill's own pair", async () => {
    const asked: string[] = [];
    (h.executor as unknown as { ports: StepPorts }).ports.mids = {
      liveMid: (pair) => {
        asked.push(pair);
        return pair === "JUP/USDC" ? 0.8125 : undefined;
      },
    };
    const pending = await journaled();
    expect(pending.trade).toMatchObject({ pair: "JUP/USDC", side: "buy", midAtSend: 0.8125 });
    expect(asked).toEqual(["JUP/USDC"]);
  });

  it("is left out, not journaled as undefined, when the markouts have no mid for the pair", async () => {
    (h.executor as unknown as { ports: StepPorts }).ports.mids = { liveMid: () => undefined };
    const pending = await journaled();
    expect(pending.trade).toMatchObject({ pair: "JUP/USDC", side: "buy" });
    expect(pending.trade).not.toHaveProperty("midAtSend");
  });

  it("is left out when no markouts are wired (no ledger)", async () => {
    const pending = await journaled();
    expect(pending.trade).toMatchObject({ pair: "JUP/USDC", side: "buy" });
    expect(pending.trade).not.toHaveProperty("midAtSend");
  });
});

/**
 * A chain read lost in a stall is asked again within the swap's budget, so a fill whose quote was
 * priced before the stall is filled once the chain answers, not refused at the first timeout. The
 * retrying has two bounds: it leaves the steps after it `KEPT_AFTER_READS_MS` of the budget, and it
 * stops when the fill could no longer be signed. The chain is wrapped by the DELIBERATE FAULT
 * INJECTOR (faults.ts): a "hang" armed for one call is a request lost in a stall, the next one answers.
 * Through the real process and RPC: test/faults/under-swaps.fault.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KEPT_AFTER_READS_MS } from "../../src/swap/steps/chain-checks.ts";
import { type CountingSigner, type Harness, inProcess, postSwap } from "../support/harness.ts";
import type { FaultyChain } from "./faults.ts";
import { faultyHarness, SwapClock, signedJupFill } from "./setup.ts";

/** Each read attempt's cap (the chainRead step), and the whole swap's budget. */
const ATTEMPT_MS = 400;
const BUDGET_MS = KEPT_AFTER_READS_MS + 4_000;

let h: Harness;
let signer: CountingSigner;
let chain: FaultyChain;
const clock = new SwapClock();

beforeAll(async () => {
  ({ h, signer, chain } = await faultyHarness({
    swap: { budgetMs: BUDGET_MS, steps: { chainRead: ATTEMPT_MS }, now: clock.now },
  }));
});
afterAll(() => h.close());
beforeEach(() => {
  chain.disarm();
  clock.reset();
});

/** Posts an honest fill after `arm`: the answer, maker signatures made and sends made for it. */
async function honestSwap(arm: () => void) {
  const http = inProcess(h.app);
  const { body } = await signedJupFill(h, http, 5_000_000_000n);
  arm();
  const signs = signer.count;
  const sends = chain.sends;
  const res = await postSwap(http, body);
  return { res, signed: signer.count - signs, sent: chain.sends - sends };
}

/** "... (asked N times in M ms)": how often the read was asked, and the time it was given. */
function asked(reason: unknown): { times: number; ms: number } {
  const m = /\(asked (\d+) times in (\d+) ms\)$/.exec(String(reason));
  expect(m, String(reason)).not.toBeNull();
  return { times: Number(m?.[1]), ms: Number(m?.[2]) };
}

describe("a chain read lost in a stall", () => {
  it("asks the chain clock again and fills: signed once, sent once", { timeout: 15_000 }, async () => {
    const { res, signed, sent } = await honestSwap(() =>
      chain.arm("getUnixTimestamp", { kind: "hang", times: 1 }),
    );
    expect(res.body.state).toBe("accepted");
    expect(signed).toBe(1);
    expect(sent).toBe(1);
  });

  it("asks the taker's balances again and fills: signed once, sent once", { timeout: 15_000 }, async () => {
    const { res, signed, sent } = await honestSwap(() =>
      chain.arm("getAccounts", { kind: "hang", times: 1 }),
    );
    expect(res.body.state).toBe("accepted");
    expect(signed).toBe(1);
    expect(sent).toBe(1);
  });

  it("asks again after two failed answers (an RPC answering 503) and fills", {
    timeout: 15_000,
  }, async () => {
    const { res, signed, sent } = await honestSwap(() =>
      chain.arm("getUnixTimestamp", { kind: "fail", error: "rpc 503", times: 2 }),
    );
    expect(res.body.state).toBe("accepted");
    expect(signed).toBe(1);
    expect(sent).toBe(1);
  });
});

describe("a chain that does not answer for longer than the reads may take", () => {
  it("refuses, unsigned, once the budget less what the later steps need is spent, having asked more than once", {
    timeout: 15_000,
  }, async () => {
    const { res, signed, sent } = await honestSwap(() =>
      chain.arm("getUnixTimestamp", { kind: "fail", error: "rpc 503" }),
    );
    expect(res.body.state).toBe("rejected");
    expect(res.body.rejectionReason).toMatch(/^could not read the chain clock: rpc 503 \(asked/);
    const { times, ms } = asked(res.body.rejectionReason);
    expect(times).toBeGreaterThan(1);
    // Longer than one attempt, and never into the time kept for reserving, signing and sending.
    expect(ms).toBeGreaterThan(ATTEMPT_MS);
    expect(ms).toBeLessThanOrEqual(BUDGET_MS - KEPT_AFTER_READS_MS);
    expect(signed).toBe(0);
    expect(sent).toBe(0);
  });

  it("stops asking when the fill could no longer be signed, before the budget is spent", {
    timeout: 15_000,
  }, async () => {
    // The swap's clock 1.8 s short of the quote's expiry: the fill's expire_at (the quote's, rounded
    // down) less the 1 s kept for landing is reached within 1.8 s, well inside the 4 s the budget gives.
    clock.offset = h.config.file.limits.quoteTtlMs - 1_800;
    const { res, signed } = await honestSwap(() =>
      chain.arm("getUnixTimestamp", { kind: "fail", error: "rpc 503" }),
    );
    expect(res.body.state).toBe("rejected");
    const { ms } = asked(res.body.rejectionReason);
    expect(ms).toBeLessThanOrEqual(1_800);
    expect(ms).toBeGreaterThan(ATTEMPT_MS);
    expect(signed).toBe(0);
  });
});

/**
 * Never fill twice: a quote is claimed once, in a real Redis, for one message. The same bytes again
 * get the first answer (even after the world changed: balances, the clock); different bytes are
 * refused; a duplicate arriving while the first is still in flight waits for its answer. The chain is
 * wrapped by a deliberate fault injector (faults.ts) only to slow a send down.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import { type CountingSigner, type Harness, inProcess, operatorFill, postSwap } from "../support/harness.ts";
import { testRedis } from "../support/redis.ts";
import type { FaultyChain } from "./faults.ts";
import { faultyHarness, signedJupFill } from "./setup.ts";

const { redis, prefix } = testRedis();
let h: Harness;
let signer: CountingSigner;
let chain: FaultyChain;
let offsetMs = 0;

beforeAll(async () => {
  ({ h, signer, chain } = await faultyHarness({
    redis: { redis, prefix },
    swap: { now: () => Date.now() + offsetMs, inFlightPollMs: 20 },
  }));
});
afterAll(async () => {
  await h.close();
  await redis.quit();
});
beforeEach(() => {
  offsetMs = 0;
  chain.disarm();
});

async function setUp(funding: { jup: bigint }) {
  const http = inProcess(h.app);
  const { taker, stored, tx, body } = await signedJupFill(h, http, funding.jup);
  return { taker, http, stored, tx, body };
}

describe("a quote is filled at most once", () => {
  it("answers the same bytes twice with the first outcome and signs once", async () => {
    const { http, body } = await setUp({ jup: 5_000_000_000n });
    const signs = signer.count;
    const first = await postSwap(http, body);
    const second = await postSwap(http, body);
    expect(first.body.state).toBe("accepted");
    expect(second.body).toEqual(first.body);
    expect(signer.count).toBe(signs + 1);
  });

  it("refuses different bytes for a quote already claimed, without signing", async () => {
    const { http, body, stored, taker } = await setUp({ jup: 5_000_000_000n });
    expect((await postSwap(http, body)).body.state).toBe("accepted");
    const other = await operatorFill(h, stored, taker.publicKey, { computeUnitLimit: 70_000 });
    other.sign([taker]);
    const signs = signer.count;
    const res = await postSwap(http, { ...body, transaction: other });
    expect(res.body).toMatchObject({
      state: "rejected",
      rejectionReason: "quote already claimed by a different transaction",
    });
    expect(signer.count).toBe(signs);
  });

  it("gives a retried rejection its first answer even after the taker is funded", async () => {
    const { http, body, taker } = await setUp({ jup: 1n });
    const first = await postSwap(http, body);
    expect(first.body.state).toEqual({ rejectedWithReason: "insufficientBalance" });
    fundTaker(h.chain, taker.publicKey, { tokens: { [MINT.JUP]: 5_000_000_000n } });
    const signs = signer.count;
    const retry = await postSwap(http, body);
    expect(retry.body).toEqual(first.body);
    expect(signer.count).toBe(signs);
  });

  it("gives a retried acceptance its first answer after the quote has expired", async () => {
    const { http, body } = await setUp({ jup: 5_000_000_000n });
    const first = await postSwap(http, body);
    expect(first.body.state).toBe("accepted");
    // Both clocks move past the quote's expiry: ours and the chain's, which judges expiry.
    offsetMs = h.config.file.limits.quoteTtlMs + 5_000;
    chain.clockAheadSeconds = BigInt(Math.ceil(offsetMs / 1000));
    const retry = await postSwap(http, body);
    expect(retry.body).toEqual(first.body);
  });

  it("makes a duplicate that arrives while the first is in flight wait for the first's answer", async () => {
    const { http, body } = await setUp({ jup: 5_000_000_000n });
    chain.arm("send", { kind: "delay", ms: 300 });
    const signs = signer.count;
    const [a, b] = await Promise.all([postSwap(http, body), postSwap(http, body)]);
    expect(a.body.state).toBe("accepted");
    expect(b.body).toEqual(a.body);
    expect(signer.count).toBe(signs + 1);
  });
});

/**
 * Exactly once across instances: two composed services (two "instances" of one deployment) share a
 * real Redis (quote claims, inventory reservations, fill journal) and the local chain, each served
 * on its own real socket. 50 concurrent POST /swap calls for one quote, spread over both, mixing the
 * operator's bytes with other valid taker-signed fills for the same quote, produce exactly one maker
 * signature, one send, one fill on chain.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillAmountsFromQuote } from "../../sandbox/fill/builder.ts";
import { fundTaker, tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Harness,
  listen,
  ObservedChain,
  observedHarness,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { testRedis } from "../support/redis.ts";

const { redis, prefix } = testRedis();
const other = testRedis().redis;
const instances: {
  h: Harness;
  signer: CountingSigner;
  chain: ObservedChain;
  server: Awaited<ReturnType<typeof listen>>;
}[] = [];

beforeAll(async () => {
  const maker = Keypair.generate();
  let first: Harness | undefined;
  for (const conn of [redis, other]) {
    const { h, signer, chain } = await observedHarness(
      { maker, ...(first ? { chain: first.chain } : {}), redis: { redis: conn, prefix } },
      (c) => new ObservedChain(c),
    );
    first ??= h;
    instances.push({ h, signer, chain, server: await listen(h.app) });
  }
});
afterAll(async () => {
  for (const i of instances) {
    await i.server.close();
    await i.h.close();
  }
  await redis.quit();
  await other.quit();
});

describe("50 concurrent swaps for one quote across two instances sharing Redis", () => {
  it("produce exactly one maker signature, one send and one fill", async () => {
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const taker = Keypair.generate();
    fundTaker(a.h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 50_000_000_000n } });
    const { response, stored } = await askQuote(a.h, a.server.fetch, {
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 2_000_000_000n,
      taker: taker.publicKey,
    });
    // The operator's transaction, plus 9 other valid fills of the same quote the taker also signed.
    const variants = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const tx = await operatorFill(a.h, stored, taker.publicKey, { computeUnitLimit: 60_000 + i });
        tx.sign([taker]);
        return Buffer.from(tx.serialize()).toString("base64");
      }),
    );
    const jup = new PublicKey(MINT.JUP);
    const before = tokenBalance(a.h.chain, taker.publicKey, jup);

    const calls = Array.from({ length: 50 }, (_, i) => {
      const target = i % 2 === 0 ? a : b;
      const transaction = variants[i % 5 === 0 ? (i / 5) % 10 : 0] as string;
      return postSwap(target.server.fetch, {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction,
      }).then((r) => ({ ...r, transaction }));
    });
    const results = await Promise.all(calls);

    expect(a.signer.count + b.signer.count).toBe(1);
    expect(a.chain.sends + b.chain.sends).toBe(1);
    const accepted = results.filter((r) => r.body.state === "accepted");
    expect(accepted.length).toBeGreaterThan(0);
    // Every acceptance is the same fill; every other answer refuses a different transaction.
    const winner = accepted[0]?.transaction;
    expect(new Set(accepted.map((r) => r.body.txSignature)).size).toBe(1);
    for (const r of results) {
      if (r.transaction === winner) expect(r.body.state).toBe("accepted");
      else expect(r.body.rejectionReason).toBe("quote already claimed by a different transaction");
    }
    const { inputAmount } = fillAmountsFromQuote(stored);
    expect(before - tokenBalance(a.h.chain, taker.publicKey, jup)).toBe(inputAmount);
  });
});

/**
 * Replay of one signed fill under a second quote. The operator re-quotes every 5 s and identical
 * requests get identical terms (same pair, size, taker, fee; a price that has not moved), so a fill
 * the taker signed for one quote is also a valid fill for the next. The maker's signature over it is
 * the same (ed25519 is deterministic), so the chain takes it once; but the maker must not answer it
 * twice: a second acceptance would commit the inventory reservation and write the operator's fee in
 * the ledger a second time when the (one) signature confirms.
 *
 * Real components: the composed service, a real Redis for quote claims and the fill journal, the
 * local chain. The signer is wrapped only to count maker signatures.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  CountingSigner,
  createHarness,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { fileRedis } from "../support/redis.ts";

const { redis, prefix } = fileRedis();
let h: Harness;
let signer: CountingSigner;

beforeAll(async () => {
  h = await createHarness({
    redis: { redis, prefix },
    wrapSigner: (s) => {
      signer = new CountingSigner(s);
      return signer;
    },
  });
});
afterAll(async () => {
  await h.close();
});

/** Two quotes with identical terms for one funded taker, and the taker's signed fill for the first. */
async function twinQuotes() {
  const http = inProcess(h.app);
  const taker = Keypair.generate();
  fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
  const ask = { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n, taker: taker.publicKey };
  const first = await askQuote(h, http, ask);
  const second = await askQuote(h, http, ask);
  expect(second.response.amountIn).toBe(first.response.amountIn);
  expect(second.response.amountOut).toBe(first.response.amountOut);
  const tx = await operatorFill(h, first.stored, taker.publicKey);
  tx.sign([taker]);
  return { http, taker, first, second, tx };
}

describe("a signed fill replayed under another quote", () => {
  it("refuses the fill replayed under a second quote with identical terms, without signing", async () => {
    const { http, first, second, tx } = await twinQuotes();
    const accepted = await postSwap(http, {
      requestId: first.response.requestId,
      quoteId: first.response.quoteId,
      transaction: tx,
    });
    expect(accepted.body.state).toBe("accepted");
    expect(await h.confirmations.settled(first.response.quoteId)).toBe("landed");

    const signs = signer.count;
    const replay = await postSwap(http, {
      requestId: second.response.requestId,
      quoteId: second.response.quoteId,
      transaction: tx,
    });
    expect(replay.body.state).toBe("rejected");
    expect(replay.body.rejectionReason).toMatch(/already submitted for another quote/);
    expect(signer.count).toBe(signs);

    // One landed transaction, one line in the operator's fee ledger.
    const fees = (await h.journal.feesOwed()).filter((f) => f.txSignature === accepted.body.txSignature);
    expect(fees.map((f) => f.quoteId)).toEqual([first.response.quoteId]);
  });

  it("refuses the replay even when it arrives first under the second quote's id, and leaves that quote fillable", async () => {
    const { http, taker, first, second, tx } = await twinQuotes();
    // The taker's fill for quote 1 posted under quote 2 first: it is a valid fill for quote 2, so it
    // takes quote 2; the same bytes under quote 1 afterwards are the replay.
    const under2 = await postSwap(http, {
      requestId: second.response.requestId,
      quoteId: second.response.quoteId,
      transaction: tx,
    });
    expect(under2.body.state).toBe("accepted");
    const signs = signer.count;
    const under1 = await postSwap(http, {
      requestId: first.response.requestId,
      quoteId: first.response.quoteId,
      transaction: tx,
    });
    expect(under1.body.state).toBe("rejected");
    expect(under1.body.rejectionReason).toMatch(/already submitted for another quote/);
    expect(signer.count).toBe(signs);

    // Quote 1 was not burned by the refused replay: its own, different, fill is still accepted.
    const own = await operatorFill(h, first.stored, taker.publicKey, { computeUnitLimit: 61_000 });
    own.sign([taker]);
    const filled = await postSwap(http, {
      requestId: first.response.requestId,
      quoteId: first.response.quoteId,
      transaction: own,
    });
    expect(filled.body.state).toBe("accepted");
  });

  it("still answers a retry of the same bytes under the same quote with the first answer", async () => {
    const { http, first, tx } = await twinQuotes();
    const body = { requestId: first.response.requestId, quoteId: first.response.quoteId, transaction: tx };
    const a = await postSwap(http, body);
    const signs = signer.count;
    const b = await postSwap(http, body);
    expect(a.body.state).toBe("accepted");
    expect(b.body).toEqual(a.body);
    expect(signer.count).toBe(signs);
  });

  it("refuses the replay across re-quotes of one repeated quoteId, and re-quoting a claimed quoteId is a 404", async () => {
    // The operator repeats quoteIds (docs/contract.md): repeats are answered, so the one-message-one-quote
    // binding, not a refusal of the operator, is what stops the replay.
    const { http, taker, first, tx } = await twinQuotes();
    const ask = { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n, taker: taker.publicKey };
    const other = await askQuote(h, http, ask);
    // Quote 1's id answered again, identical terms: the later answer replaces the earlier one.
    const requoted = await askQuote(h, http, {
      ...ask,
      ids: { quoteId: first.response.quoteId, requestId: first.response.requestId },
    });
    expect(requoted.response.amountOut).toBe(first.response.amountOut);
    const accepted = await postSwap(http, {
      requestId: first.response.requestId,
      quoteId: first.response.quoteId,
      transaction: tx,
    });
    expect(accepted.body.state).toBe("accepted");

    const signs = signer.count;
    // The other quote re-quoted under the same ids, identical terms: the signed fill is still bound.
    await askQuote(h, http, {
      ...ask,
      ids: { quoteId: other.response.quoteId, requestId: other.response.requestId },
    });
    const replay = await postSwap(http, {
      requestId: other.response.requestId,
      quoteId: other.response.quoteId,
      transaction: tx,
    });
    expect(replay.body.state).toBe("rejected");
    expect(replay.body.rejectionReason).toMatch(/already submitted for another quote/);
    expect(signer.count).toBe(signs);

    // The claimed quoteId is never re-opened.
    const reopen = await http("/quote", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...first.stored.request, amount: first.stored.request.amount, protocol: "v1" }),
    });
    expect(reopen.status).toBe(404);
    expect(await reopen.text()).toMatch(/already claimed by a swap/);
  });
});

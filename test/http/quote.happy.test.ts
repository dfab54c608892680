import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { MINT } from "../support/config.ts";
import { jsonPost, quoteBody, readJson } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

let svc: Service;
beforeAll(async () => {
  svc = await testService();
});
afterAll(() => svc.close());

describe("POST /quote (happy paths)", () => {
  it("quotes 1 USDC -> SOL exactIn, echoing the request and naming our maker", async () => {
    const body = quoteBody({ taker: "5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9" });
    const res = await svc.app.request("/quote", jsonPost(body));
    expect(res.status).toBe(200);
    const q = await readJson(res);
    expect(q).toMatchObject({
      requestId: body.requestId,
      quoteId: body.quoteId,
      tokenIn: MINT.USDC,
      tokenOut: MINT.SOL,
      quoteType: "exactIn",
      protocol: "v1",
      amountIn: "1000000",
      maker: svc.signer.publicKey.toBase58(),
      taker: body.taker,
    });
    expect(BigInt(q.amountOut)).toBeGreaterThan(0n);
  });

  it("quotes SOL for exactly 1 USDC out (exactOut), echoing the output amount", async () => {
    const res = await svc.app.request(
      "/quote",
      jsonPost(quoteBody({ tokenIn: MINT.SOL, tokenOut: MINT.USDC, quoteType: "exactOut" })),
    );
    expect(res.status).toBe(200);
    const q = await readJson(res);
    expect(q.amountOut).toBe("1000000");
    expect(BigInt(q.amountIn)).toBeGreaterThan(0n);
  });

  it.each(["ExactIn", "exact_in", "EXACT_IN"])(
    "accepts the toolkit's quoteType spelling %s and answers exactIn",
    async (spelling) => {
      const res = await svc.app.request("/quote", jsonPost(quoteBody({ quoteType: spelling })));
      expect(res.status).toBe(200);
      expect((await readJson(res)).quoteType).toBe("exactIn");
    },
  );

  it("remembers the quote under its quoteId with a 55 s expiry, indexed by requestId", async () => {
    const body = quoteBody();
    const res = await svc.app.request("/quote", jsonPost(body));
    const answer = await readJson(res);
    const stored = await svc.store.get(body.quoteId as string);
    expect(stored?.response).toEqual(answer);
    expect(stored!.expiresAtMs - stored!.createdAtMs).toBe(55_000);
    expect(stored!.feeBps).toBe(10);
    expect(stored!.requestId).toBe(body.requestId);
  });

  it("answers a repeated quoteId and requestId as a new quote, the later answer replacing the earlier", async () => {
    // The operator's acceptance suite sends one quoteId/requestId for its exactIn, exactOut and
    // unknown-mint quotes (docs/contract.md, "POST /quote").
    const first = quoteBody();
    const a = await svc.app.request("/quote", jsonPost(first));
    expect(a.status).toBe(200);
    const repeat = { ...first, tokenIn: MINT.SOL, tokenOut: MINT.USDC, quoteType: "exactOut" };
    const b = await svc.app.request("/quote", jsonPost(repeat));
    expect(b.status).toBe(200);
    const answer = await readJson(b);
    expect(answer).toMatchObject({
      quoteId: first.quoteId,
      requestId: first.requestId,
      amountOut: "1000000",
    });
    expect((await svc.store.get(first.quoteId as string))?.response).toEqual(answer);
  });

  it("declines a re-quote of a quoteId a swap has claimed with 404 naming why, keeping the claimed quote", async () => {
    const first = quoteBody();
    const answer = await readJson(await svc.app.request("/quote", jsonPost(first)));
    await svc.store.claim(first.quoteId as string, "some-message-hash", Date.now());
    const again = await svc.app.request("/quote", jsonPost({ ...first, amount: "2000000" }));
    expect(again.status).toBe(404);
    expect((await readJson(again)).message).toMatch(/quoteId .* already claimed by a swap/);
    expect((await svc.store.get(first.quoteId as string))?.response).toEqual(answer);
  });

  it("echoes a receiver that is the taker and takes the operator's suggested priority fee within our cap", async () => {
    const receiver = "FGETo8T8wMcN2wCjav8VK6eh3dLk63evNDPxzLSJra8B";
    const low = await readJson(
      await svc.app.request(
        "/quote",
        jsonPost(quoteBody({ taker: receiver, receiver, suggestedPrioritizationFees: 5_000 })),
      ),
    );
    expect(low.receiver).toBe(receiver);
    expect(low.prioritizationFeeToUse).toBe(5_000);
    const high = await readJson(
      await svc.app.request("/quote", jsonPost(quoteBody({ suggestedPrioritizationFees: 10 ** 12 }))),
    );
    expect(high.prioritizationFeeToUse).toBe(svc.config.file.limits.maxComputeUnitPriceMicroLamports);
  });

  it("accepts null for the optional fields the operator may send as null", async () => {
    const res = await svc.app.request(
      "/quote",
      jsonPost(quoteBody({ taker: null, suggestedPrioritizationFees: null, receiver: null, isWsol: null })),
    );
    expect(res.status).toBe(200);
    expect(await readJson(res)).not.toHaveProperty("taker");
  });

  it("answers with the configured base path prefix, and not without it", async () => {
    const prefixed = await testService({ vary: (f) => ({ ...f, basePath: "/jupiter/rfq" }) });
    try {
      expect((await prefixed.app.request("/jupiter/rfq/quote", jsonPost(quoteBody()))).status).toBe(200);
      expect((await prefixed.app.request("/jupiter/rfq/tokens")).status).toBe(200);
      expect((await prefixed.app.request("/quote", jsonPost(quoteBody()))).status).toBe(404);
      expect((await prefixed.app.request("/health")).status).toBe(200);
    } finally {
      await prefixed.close();
    }
  });
});

describe("GET /tokens", () => {
  it("lists every configured non-permissioned mint, and /permissioned-tokens the permissioned ones", async () => {
    const tokens = await readJson(await svc.app.request("/tokens"));
    expect(tokens.sort()).toEqual([MINT.SOL, MINT.USDC, MINT.USDT, MINT.JUP].sort());
    expect(await readJson(await svc.app.request("/permissioned-tokens"))).toEqual([]);
  });
});

/**
 * The sandbox's permissioned token end to end, as `npm run sandbox` composes it (startStack with
 * `issuedToken`: the chain server, which is also the block engine, the Redis-backed webhook in
 * production shape with ISSUER_KEYPAIR and BUNDLE_URL, the operator simulator): a taker orders TBILL
 * the maker holds none of through the operator, signs and executes; the issuer's mint and the fill land
 * in one bundle, the taker receives exactly the order's amount and the supply rises by exactly that;
 * it sells them back and the burn lands with the fill. A wallet outside the holder rules gets no quote.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { MINT } from "../support/config.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("issued-token");
let stack: Stack;
let client: TakerClient;

beforeAll(async () => {
  stack = await startStack({
    dir,
    takers: [{ name: "holder", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n } }],
    webhookLogLevel: "warn",
    issuedToken: true,
  });
  client = new TakerClient(stack.operatorUrl, stack.chainUrl);
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

describe("sandbox: a permissioned token the maker issues", () => {
  it("is listed on /permissioned-tokens, and the maker holds none of it", async () => {
    const issued = stack.issued!;
    const res = await fetch(`${stack.webhookUrl}/permissioned-tokens`);
    expect(await res.json()).toEqual([issued.mint]);
    const maker = await client.balances(new PublicKey(stack.maker), [issued.mint]);
    expect(maker[issued.mint]).toBe(0n);
    expect(await client.supply(issued.mint)).toBe(0n);
  });

  let bought = 0n;
  it("buys 100 TBILL: the mint and the fill land together, the taker gets exactly the order's amount, supply rises by it", async () => {
    const issued = stack.issued!;
    const taker = stack.takers[0]!.keypair;
    const order = await client.order(
      { inputMint: MINT.USDC, outputMint: issued.mint, amount: 100_000_000n, swapMode: "ExactOut" },
      taker.publicKey,
    );
    expect(order.ok, order.ok ? "" : order.error).toBe(true);
    if (!order.ok) return;
    const before = await client.balances(taker.publicKey, [issued.mint, MINT.USDC]);
    const supply = await client.supply(issued.mint);
    const result = await client.execute(order.body, taker);
    expect(result.ok && result.body.status, result.ok ? result.body.error : result.error).toBe("Success");
    const after = await client.balances(taker.publicKey, [issued.mint, MINT.USDC]);
    bought = BigInt(order.body.outAmount);
    expect(bought).toBe(100_000_000n);
    expect(after[issued.mint]! - before[issued.mint]!).toBe(bought);
    expect(before[MINT.USDC]! - after[MINT.USDC]!).toBe(BigInt(order.body.inAmount));
    expect((await client.supply(issued.mint)) - supply).toBe(bought);
    const maker = await client.balances(new PublicKey(stack.maker), [issued.mint]);
    expect(maker[issued.mint]).toBe(0n);
  });

  it("sells them back: the fill and the burn land together, supply falls by exactly that", async () => {
    const issued = stack.issued!;
    const taker = stack.takers[0]!.keypair;
    const order = await client.order(
      { inputMint: issued.mint, outputMint: MINT.USDC, amount: bought },
      taker.publicKey,
    );
    expect(order.ok, order.ok ? "" : order.error).toBe(true);
    if (!order.ok) return;
    const supply = await client.supply(issued.mint);
    const result = await client.execute(order.body, taker, "/ultra/v1/execute");
    expect(result.ok && result.body.status, result.ok ? result.body.error : result.error).toBe("Success");
    expect(supply - (await client.supply(issued.mint))).toBe(bought);
    const after = await client.balances(taker.publicKey, [issued.mint]);
    expect(after[issued.mint]).toBe(0n);
  });

  it("gives no quote to a wallet outside the holder rules (404 HOLDER_NOT_ALLOWED from the webhook)", async () => {
    const issued = stack.issued!;
    const res = await fetch(`${stack.webhookUrl}/quote`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-request-start": String(Date.now()),
        "x-request-timeout": "5000",
      },
      body: JSON.stringify({
        requestId: "outsider-req",
        quoteId: "outsider-quote",
        tokenIn: MINT.USDC,
        tokenOut: issued.mint,
        amount: "100000000",
        quoteType: "exactIn",
        protocol: "v1",
        feeBps: 0,
        taker: Keypair.generate().publicKey.toBase58(),
      }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toMatch(/not an allowed holder/);
  });
});

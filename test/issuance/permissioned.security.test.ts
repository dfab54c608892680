/**
 * Attacks on the issuance of permissioned tokens, each of which must be refused before anything is
 * minted: a wallet outside the holder rules (at quote time, and at /swap with a quote given without a
 * taker), two fills racing for the last units of the daily cap, and an issued fill with no bundle
 * engine to make the mint atomic with it. Through the real composed service and the local chain; the
 * bundle engine is the project's local one, observed (test/support/local-bundles.ts).
 */
import { Keypair, type PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker, tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { ObservedBundles } from "../support/local-bundles.ts";
import { permissionedSetup, supplyOf, TBILL_LIMITS } from "../support/permissioned.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { fileRedis } from "../support/redis.ts";

const setup = permissionedSetup(2);
const TBILL = setup.mint;
let h: Harness;
let engine: ObservedBundles;

beforeAll(async () => {
  h = await createHarness({
    vary: setup.vary,
    issuer: setup.issuer,
    bundles: (chain) => {
      engine = new ObservedBundles(chain);
      return engine;
    },
  });
});
afterAll(async () => {
  await h?.close();
});

const http = () => inProcess(h.app);

/** POST /quote as the operator sends it: `amount` of `tokenIn` (exactIn), no fee, `taker` when given. */
const quoteBuy = (
  taker: PublicKey | undefined,
  amount: bigint,
  tokenIn: string = MINT.USDC,
  tokenOut = TBILL.toBase58(),
) =>
  jsonPost(
    quoteBody({
      tokenIn,
      tokenOut,
      amount: amount.toString(),
      feeBps: 0,
      ...(taker ? { taker: taker.toBase58() } : {}),
    }),
    { "x-request-start": String(Date.now()) },
  );

describe("a wallet outside the holder rules", () => {
  const outsider = Keypair.generate();

  it("gets a 404 naming HOLDER_NOT_ALLOWED when it asks to buy with its taker given", async () => {
    const res = await http()("/quote", quoteBuy(outsider.publicKey, 105_000_000n));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { message: string }).message).toMatch(/not an allowed holder of TBILL/);
    expect(h.metrics.noQuotes).toBeDefined();
  });

  it("gets a 404 when it asks to sell one it somehow holds", async () => {
    const res = await http()("/quote", quoteBuy(outsider.publicKey, 1_000_000n, TBILL.toBase58(), MINT.USDC));
    expect(res.status).toBe(404);
  });

  it("is refused at /swap with HOLDER_NOT_ALLOWED when it fills a quote given without a taker, and nothing is minted", async () => {
    fundTaker(h.chain, outsider.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 1_000_000_000n } });
    const { response, stored } = await askQuote(h, http(), {
      tokenIn: MINT.USDC,
      tokenOut: TBILL.toBase58(),
      amount: 105_000_000n,
      feeBps: 0,
    });
    const tx = await operatorFill(h, stored, outsider.publicKey, { computeUnitLimit: 200_000 });
    tx.sign([outsider]);
    const sent = engine.sent.length;
    const supply = supplyOf(h.chain, TBILL);
    const swap = await postSwap(http(), {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toBe("rejected");
    expect(swap.body.rejectionReason).toMatch(/^HOLDER_NOT_ALLOWED: /);
    expect(engine.sent.length).toBe(sent);
    expect(supplyOf(h.chain, TBILL)).toBe(supply);
    expect(tokenBalance(h.chain, outsider.publicKey, TBILL)).toBe(0n);
  });
});

describe("two fills racing for the last units of the daily cap", () => {
  it("mints for one, refuses the other with ISSUANCE_CAP_EXCEEDED, and never mints past the cap", async () => {
    const [a, b] = setup.holders as [Keypair, Keypair];
    for (const t of [a, b]) {
      fundTaker(h.chain, t.publicKey, { sol: 1_000_000_000n, tokens: { [MINT.USDC]: 10_000_000_000n } });
    }
    const supply = supplyOf(h.chain, TBILL);
    // Each quote alone fits under the daily cap (3,000 TBILL); the two together do not. Quotes reserve
    // nothing, so both are given; the claim-time reservation decides.
    const usdc = (TBILL_LIMITS.maxPerFill * 95n) / 100n;
    const quotes = await Promise.all(
      [a, b].map((t) =>
        askQuote(h, http(), {
          tokenIn: MINT.USDC,
          tokenOut: TBILL.toBase58(),
          amount: usdc,
          feeBps: 0,
          taker: t.publicKey,
        }),
      ),
    );
    const txs = await Promise.all(
      quotes.map(async (q, i) => {
        const tx = await operatorFill(h, q.stored, [a, b][i]!.publicKey, { computeUnitLimit: 200_000 });
        tx.sign([[a, b][i]!]);
        return tx;
      }),
    );
    const swaps = await Promise.all(
      quotes.map((q, i) =>
        postSwap(http(), {
          requestId: q.response.requestId,
          quoteId: q.response.quoteId,
          transaction: txs[i]!,
        }),
      ),
    );
    const states = swaps.map((s) => s.body.state);
    expect(states.filter((s) => s === "accepted")).toHaveLength(1);
    const refused = swaps.find((s) => s.body.state === "rejected");
    expect(refused?.body.rejectionReason).toMatch(/^ISSUANCE_CAP_EXCEEDED: /);
    for (const q of quotes) await h.confirmations.settled(q.response.quoteId).catch(() => undefined);
    expect(supplyOf(h.chain, TBILL) - supply).toBeLessThanOrEqual(TBILL_LIMITS.maxPerDay);
    const accepted = quotes[states.indexOf("accepted")]!;
    expect(supplyOf(h.chain, TBILL) - supply).toBe(BigInt(accepted.response.amountOut));
  });
});

describe("an issued fill with no bundle engine", () => {
  const shared = fileRedis();

  it("is not quoted (404 ISSUANCE_UNAVAILABLE) by an instance without one", async () => {
    const s = permissionedSetup(1);
    const lone = await createHarness({ vary: s.vary, issuer: s.issuer, bundles: "none" });
    try {
      const res = await inProcess(lone.app)(
        "/quote",
        quoteBuy(s.holders[0]!.publicKey, 105_000_000n, MINT.USDC, s.mint.toBase58()),
      );
      expect(res.status).toBe(404);
      expect(((await res.json()) as { message: string }).message).toMatch(/no bundle engine/);
    } finally {
      await lone.close();
    }
  });

  it("is refused at /swap with ISSUANCE_UNAVAILABLE by an instance without one, before the claim: nothing is minted, and an instance with one fills the quote", async () => {
    // Two instances of one deployment (one Redis, one chain): the quote from the one with a bundle
    // engine, the /swap landing on the one without (a misconfigured instance). The mint must never be
    // sent apart from its fill.
    const s = permissionedSetup(1);
    const redis = { redis: shared.redis, prefix: `${shared.prefix}${Math.random()}:` };
    const withEngine = await createHarness({
      vary: s.vary,
      issuer: s.issuer,
      redis,
      bundles: (chain) => new ObservedBundles(chain),
    });
    const without = await createHarness({
      vary: s.vary,
      issuer: s.issuer,
      redis,
      chain: withEngine.chain,
      maker: withEngine.maker,
      bundles: "none",
    });
    try {
      const taker = s.holders[0] as Keypair;
      fundTaker(withEngine.chain, taker.publicKey, {
        sol: 1_000_000_000n,
        tokens: { [MINT.USDC]: 1_000_000_000n },
      });
      const { response, stored } = await askQuote(withEngine, inProcess(withEngine.app), {
        tokenIn: MINT.USDC,
        tokenOut: s.mint.toBase58(),
        amount: 105_000_000n,
        feeBps: 0,
        taker: taker.publicKey,
      });
      const tx = await operatorFill(withEngine, stored, taker.publicKey, { computeUnitLimit: 200_000 });
      tx.sign([taker]);
      const swap = await postSwap(inProcess(without.app), {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      expect(swap.body.state).toBe("rejected");
      expect(swap.body.rejectionReason).toBe("ISSUANCE_UNAVAILABLE: no bundle engine in this test");
      expect(supplyOf(withEngine.chain, s.mint)).toBe(0n);
      // Refused before the claim: the quote is not burned, and the instance with an engine fills it.
      const filled = await postSwap(inProcess(withEngine.app), {
        requestId: response.requestId,
        quoteId: response.quoteId,
        transaction: tx,
      });
      expect(filled.body.state).toBe("accepted");
    } finally {
      await without.close();
      await withEngine.close();
    }
  });
});

/**
 * POST /swap co-signs only fills that will land (issue 18): fills that pass every rule of the message
 * but that the chain would drop (a blockhash about to expire) or fail (a taker-appended Lighthouse
 * assertion that is false) are refused before anything is sent, and a refused fill leaves every
 * balance byte for byte where it was. Real socket, real local chain; the chain is observed (sends,
 * blockhash checks and simulations counted), never faked.
 */
import { Keypair, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { fundTaker, lamports, seedFromConfig } from "../../src/chain/local/seed.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { CHAIN_STATE_ATTACKS, scenarioFromQuote, signAsTaker, takerLamportsAbove } from "../fill/tamper.ts";
import { MINT, testConfig } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Fetcher,
  type Harness,
  listen,
  ObservedChain,
  observedHarness,
  postSwap,
} from "../support/harness.ts";
import { type SwapBed, swapBed } from "../support/swap-bed.ts";

let h: Harness;
let signer: CountingSigner;
let chain: ObservedChain;
let http: Fetcher;
let bed: SwapBed;
const taker = Keypair.generate();

beforeAll(async () => {
  // Minute-long blocks: heights move when a test advances them, not while a loaded machine runs it.
  const local = LocalChain.create({ slotMs: 60_000 });
  const maker = Keypair.generate();
  seedFromConfig(local, testConfig().file, maker.publicKey);
  bed = await swapBed({ harness: { chain: local, maker }, taker });
  ({ h, signer, chain, http } = bed);
});
afterAll(() => bed.close());

let sizes = 0n;
/** A quote for a size no earlier test used: with one blockhash per (minute-long) block, equal terms
 * would make equal fill messages, which the replay binding refuses. */
async function quoteJupToUsdc(): Promise<StoredQuote> {
  const { stored } = await askQuote(h, http, {
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount: 1_000_000_000n + ++sizes * 1_000n,
    feeBps: 10,
    taker: taker.publicKey,
  });
  return stored;
}

function fillFor(
  quote: StoredQuote,
  params: Parameters<typeof buildFillTransaction>[0] extends infer P ? Partial<P> : never,
) {
  const s = scenarioFromQuote(quote, {
    maker: h.maker.publicKey,
    taker: taker.publicKey,
    tokens: h.config.tokensByMint,
    recentBlockhash: "",
    nowUnix: BigInt(Math.floor(Date.now() / 1000)),
    createTakerOutputAta: false,
  });
  return signAsTaker(buildFillTransaction({ ...s.params, ...params }), taker);
}

async function post(quote: StoredQuote, tx: VersionedTransaction) {
  const res = await postSwap(http, { requestId: quote.requestId, quoteId: quote.quoteId, transaction: tx });
  expect(res.status).toBe(200);
  return res.body;
}

describe("POST /swap refuses fills that cannot land, before sending anything", () => {
  it.each(CHAIN_STATE_ATTACKS.map((a) => [a.name, a] as const))("refuses %s", async (_name, attack) => {
    const quote = await quoteJupToUsdc();
    const params = await attack.arrange({
      chain: h.chain,
      blockhashes: h.swap.blockhashes,
      maker: h.maker.publicKey,
      taker: taker.publicKey,
    });
    const tx = fillFor(quote, params);
    const sendsBefore = chain.sends;
    const before = bed.balances();
    const body = await post(quote, tx);
    expect(body.state).toBe("rejected");
    expect(body.rejectionReason).toMatch(new RegExp(`^${attack.code}: `));
    expect(body.txSignature).toBeUndefined();
    expect(chain.sends).toBe(sendsBefore);
    expect(bed.balances()).toEqual(before);
    expect((await h.inventory.reservations()).some((r) => r.quoteId === quote.quoteId)).toBe(false);
  });
});

describe("the recent-blockhash check (BLOCKHASH_NOT_FOUND, BLOCKHASH_AGE_EXCEEDED)", () => {
  it("judges a blockhash the cache knows without calling the chain, and lands the fill", async () => {
    const quote = await quoteJupToUsdc();
    const { blockhash } = await h.chain.getLatestBlockhash();
    await h.swap.blockhashes.poll();
    const checks = chain.blockhashChecks;
    const body = await post(quote, fillFor(quote, { recentBlockhash: blockhash }));
    expect(body.state).toBe("accepted");
    expect(chain.blockhashChecks).toBe(checks);
  });

  it("asks the chain once about a blockhash issued since its last poll, and lands the fill", async () => {
    const quote = await quoteJupToUsdc();
    await h.swap.blockhashes.poll();
    h.chain.advanceBlocks(2);
    const { blockhash } = await h.chain.getLatestBlockhash();
    const checks = chain.blockhashChecks;
    const body = await post(quote, fillFor(quote, { recentBlockhash: blockhash }));
    expect(body.state).toBe("accepted");
    // One call, unless the background poll learnt the new blockhash before the swap was judged.
    expect(chain.blockhashChecks - checks).toBeLessThanOrEqual(1);
  });

  it("refuses an expired blockhash with BLOCKHASH_NOT_FOUND, signing nothing", async () => {
    const quote = await quoteJupToUsdc();
    // A blockhash no earlier test's fill used: an identical message is bound to its first quote.
    h.chain.advanceBlocks(1);
    const { blockhash } = await h.chain.getLatestBlockhash();
    await h.swap.blockhashes.poll();
    h.chain.advanceBlocks(151);
    await h.swap.blockhashes.poll();
    const signs = signer.count;
    const body = await post(quote, fillFor(quote, { recentBlockhash: blockhash }));
    expect(body.rejectionReason).toMatch(/^BLOCKHASH_NOT_FOUND: /);
    expect(signer.count).toBe(signs);
  });
});

describe("pre-flight simulation (SIMULATION_FAILED)", () => {
  it("never sends a fill that would fail on-chain, leaves the maker's lamports unchanged, and gives the quote back", async () => {
    const quote = await quoteJupToUsdc();
    const recentBlockhash = (await h.chain.getLatestBlockhash()).blockhash;
    const failing = fillFor(quote, {
      recentBlockhash,
      lighthouseInstructions: [takerLamportsAbove(taker.publicKey, 10n ** 18n)],
    });
    const makerLamports = lamports(h.chain, h.maker.publicKey);
    const sends = chain.sends;
    const simulations = chain.simulations;
    const body = await post(quote, failing);
    expect(body.state).toBe("rejected");
    // Honest: the answer names the simulated error.
    expect(body.rejectionReason).toMatch(/^SIMULATION_FAILED: .*Lamports GreaterThan assertion failed/);
    expect(chain.simulations).toBe(simulations + 1);
    expect(chain.sends).toBe(sends);
    expect(lamports(h.chain, h.maker.publicKey)).toBe(makerLamports);
    expect(await h.inventory.reservations()).not.toContainEqual(
      expect.objectContaining({ quoteId: quote.quoteId }),
    );

    // The claim was released: the same quote fills with a transaction that lands.
    const honest = fillFor(quote, {
      recentBlockhash,
      lighthouseInstructions: [takerLamportsAbove(taker.publicKey, 1n)],
    });
    const again = await post(quote, honest);
    expect(again.state).toBe("accepted");
    expect(chain.sends).toBe(sends + 1);
  });

  it("sends without simulating when limits.preflightSimulation is off", async () => {
    const off = await observedHarness(
      { vary: (f) => ({ ...f, limits: { ...f.limits, preflightSimulation: false } }) },
      (c) => new ObservedChain(c),
    );
    try {
      const s = await listen(off.h.app);
      fundTaker(off.h.chain, taker.publicKey, {
        sol: 1_000_000_000n,
        tokens: { [MINT.JUP]: 10_000_000_000n },
      });
      const { stored } = await askQuote(off.h, s.fetch, {
        tokenIn: MINT.JUP,
        tokenOut: MINT.USDC,
        amount: 1_000_000_000n,
        taker: taker.publicKey,
      });
      const sc = scenarioFromQuote(stored, {
        maker: off.h.maker.publicKey,
        taker: taker.publicKey,
        tokens: off.h.config.tokensByMint,
        recentBlockhash: (await off.h.chain.getLatestBlockhash()).blockhash,
        nowUnix: BigInt(Math.floor(Date.now() / 1000)),
      });
      const res = await postSwap(s.fetch, {
        requestId: stored.requestId,
        quoteId: stored.quoteId,
        transaction: signAsTaker(buildFillTransaction(sc.params), taker),
      });
      expect(res.body.state).toBe("accepted");
      expect(off.chain.simulations).toBe(0);
      await s.close();
    } finally {
      await off.h.close();
    }
  });
});

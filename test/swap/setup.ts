/**
 * Setup shared by the swap tests that inject faults: a harness over the deliberate fault injector
 * (faults.ts) with a counting signer, and the honest fill most of them post (a fresh taker selling
 * 1 JUP for USDC, signed).
 */
import { Keypair } from "@solana/web3.js";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type Fetcher,
  type Harness,
  type HarnessOptions,
  observedHarness,
  operatorFill,
} from "../support/harness.ts";
import { FaultyChain } from "./faults.ts";

/** A harness whose chain is a FaultyChain (disarmed) and whose signer counts signatures. */
export function faultyHarness(opts: Omit<HarnessOptions, "wrapChain" | "wrapSigner"> = {}) {
  return observedHarness(opts, (c) => new FaultyChain(c));
}

/**
 * A fresh taker funded with 0.1 SOL and `jup` JUP, a quote for it selling 1 JUP for USDC, and the
 * operator's fill for that quote signed by the taker, ready to post as `body`.
 */
export async function signedJupFill(h: Harness, http: Fetcher, jup: bigint) {
  const taker = Keypair.generate();
  fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: jup } });
  const { response, stored } = await askQuote(h, http, {
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount: 1_000_000_000n,
    taker: taker.publicKey,
  });
  const tx = await operatorFill(h, stored, taker.publicKey);
  tx.sign([taker]);
  const body = { requestId: response.requestId, quoteId: response.quoteId, transaction: tx };
  return { taker, response, stored, tx, body };
}

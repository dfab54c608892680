/**
 * Setup shared by the swap tests that inject faults: a harness over the deliberate fault injector
 * (faults.ts) with a counting signer, and the honest fill most of them post (a fresh taker selling
 * 1 JUP for USDC, signed).
 */
import { Keypair, type PublicKey, type VersionedTransaction } from "@solana/web3.js";
import { expect, vi } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { RecentBlockhashes } from "../../src/chain/recent-blockhashes.ts";
import type { SwapResponse } from "../../src/contract/swap.ts";
import type { SignContext, Signer } from "../../src/signing/port.ts";
import { SwapExecutor, swapSettings } from "../../src/swap/executor.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  createHarness,
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
  /** The same request as the executor takes it (the transaction in base64). */
  const req = { ...body, transaction: Buffer.from(tx.serialize()).toString("base64") };
  return { taker, response, stored, tx, body, req };
}

/** Signs with the real key, unless held: then it waits until the test lets it sign, or fail. */
export class GatedSigner implements Signer {
  private gate: Promise<void> | undefined;
  private open: ((how: "sign" | "fail") => void) | undefined;
  /** A signature is waiting at the gate. */
  waiting = false;
  constructor(private readonly inner: Signer) {}
  get publicKey(): PublicKey {
    return this.inner.publicKey;
  }
  /** Holds the next signature; the returned function lets it go (`fail`: the signer errors). */
  hold(): (how: "sign" | "fail") => void {
    let how: "sign" | "fail" = "sign";
    let resolve!: () => void;
    this.gate = new Promise<void>((r) => (resolve = r)).then(() => {
      if (how === "fail") throw new Error("remote signer connection reset");
    });
    this.open = (h) => {
      how = h;
      this.gate = undefined;
      this.waiting = false;
      resolve();
    };
    return this.open;
  }
  async sign(tx: VersionedTransaction, context?: SignContext): Promise<void> {
    const gate = this.gate;
    if (gate) {
      this.waiting = true;
      await gate;
    }
    return this.inner.sign(tx, context);
  }
}

/** The swap's clock in a test: `base` (plus `offset`) while a test sets it, else the wall (plus `offset`). */
export class SwapClock {
  base: number | undefined = undefined;
  offset = 0;
  readonly now = () => (this.base ?? Date.now()) + this.offset;
  /** Back to the wall clock (after each test). */
  reset(): void {
    this.base = undefined;
    this.offset = 0;
  }
}

/** A gatedHarness whose swap runs on `clock`, with `swap`'s other tunables. */
export function clockedHarness(
  clock: SwapClock,
  swap: Omit<NonNullable<HarnessOptions["swap"]>, "now"> = {},
) {
  return gatedHarness({ swap: { ...swap, now: clock.now } });
}

/** A harness whose chain is a FaultyChain (disarmed) and whose signer is a GatedSigner. */
export async function gatedHarness(opts: Omit<HarnessOptions, "wrapChain" | "wrapSigner"> = {}) {
  let signer!: GatedSigner;
  let chain!: FaultyChain;
  const h = await createHarness({
    ...opts,
    wrapSigner: (s) => {
      signer = new GatedSigner(s);
      return signer;
    },
    wrapChain: (c) => {
      chain = new FaultyChain(c);
      return chain;
    },
  });
  return { h, signer, chain };
}

/**
 * Posts with the maker's signer held (`post`), runs `look` while the request waits at the signer, then
 * lets it sign: the request's answer.
 */
export async function answerAfterLook(
  signer: GatedSigner,
  post: () => Promise<{ body: SwapResponse }>,
  look: () => Promise<void>,
): Promise<SwapResponse> {
  const release = signer.hold();
  try {
    const first = post();
    await vi.waitFor(() => expect(signer.waiting).toBe(true));
    await look();
    release("sign");
    return (await first).body;
  } finally {
    release("sign");
  }
}

/** The executor as compose.ts builds it with a ledger (its decisions go to the journal's outbox), over `h`'s ports. */
export function ledgerExecutor(h: Harness, now?: () => number): SwapExecutor {
  return new SwapExecutor(
    {
      store: h.store,
      chain: h.chain,
      inventory: h.inventory,
      signer: h.signer,
      confirmations: h.confirmations,
      blockhashes: new RecentBlockhashes(h.chain),
      ledgerJournal: h.journal,
    },
    swapSettings(h.config, now ? { now } : {}),
  );
}

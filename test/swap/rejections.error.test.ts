/**
 * Honest rejections through POST /swap: the taker cannot pay (input balance, ATA rent) or did not
 * sign, each answered with the contract's reason, only when the chain shows it, with no maker
 * signature and nothing sent. Plus the plain rejections (expired, unknown, unreadable chain). The
 * chain is wrapped by a deliberate fault injector (faults.ts) for the unreadable-chain case only.
 */
import { Keypair, type VersionedTransaction } from "@solana/web3.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fundTaker, lamports } from "../../src/chain/local/seed.ts";
import type { SwapResponse } from "../../src/contract/swap.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Harness,
  inProcess,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import type { FaultyChain } from "./faults.ts";
import { faultyHarness } from "./setup.ts";

let h: Harness;
let signer: CountingSigner;
let chain: FaultyChain;

beforeAll(async () => {
  ({ h, signer, chain } = await faultyHarness({
    swap: { budgetMs: 3_000 },
  }));
});
afterAll(() => h.close());
beforeEach(() => {
  chain.disarm();
});

async function attempt(
  taker: Keypair,
  ask: { tokenIn: string; tokenOut: string; amount: bigint },
  opts: {
    nativeSolIn?: boolean;
    recentBlockhash?: string;
    sign?: (tx: VersionedTransaction) => void;
  } = {},
): Promise<SwapResponse> {
  const http = inProcess(h.app);
  const { response, stored } = await askQuote(h, http, { ...ask, taker: taker.publicKey });
  const tx = await operatorFill(h, stored, taker.publicKey, {
    nativeSolIn: opts.nativeSolIn ?? false,
    ...(opts.recentBlockhash ? { recentBlockhash: opts.recentBlockhash } : {}),
  });
  if (opts.sign) opts.sign(tx);
  else tx.sign([taker]);
  const signs = signer.count;
  const sends = chain.sends;
  const counted = h.fillRate.snapshot().counted;
  const res = await postSwap(http, {
    requestId: response.requestId,
    quoteId: response.quoteId,
    transaction: tx,
  });
  expect(res.status).toBe(200);
  if (res.body.state !== "accepted") {
    expect(signer.count).toBe(signs);
    expect(chain.sends).toBe(sends);
  }
  // Honest rejections are left out of the fill rate; everything else counts once.
  const honest = typeof res.body.state === "object";
  expect(h.fillRate.snapshot().counted).toBe(counted + (honest ? 0 : 1));
  return res.body;
}

describe("honest rejections", () => {
  it("answers insufficientBalance when the taker holds less of the input token than the fill takes", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 999_999_999n } });
    const res = await attempt(taker, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n });
    expect(res.state).toEqual({ rejectedWithReason: "insufficientBalance" });
    expect(res.rejectionReason).toMatch(/holds 999999999 .* needs 1000000000/);
  });

  it("answers insufficientBalance when the taker has no input token account at all", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n });
    const res = await attempt(taker, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n });
    expect(res.state).toEqual({ rejectedWithReason: "insufficientBalance" });
  });

  it("answers insufficientBalance when native SOL input plus rent exceeds the taker's lamports", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 1_000_000_000n });
    const res = await attempt(
      taker,
      { tokenIn: MINT.SOL, tokenOut: MINT.USDC, amount: 1_000_000_000n },
      { nativeSolIn: true },
    );
    expect(res.state).toEqual({ rejectedWithReason: "insufficientBalance" });
  });

  it("answers insufficientBalanceForAtaCreation when the taker cannot pay the new output ATA's rent", async () => {
    const taker = Keypair.generate();
    const rent = await h.chain.getMinimumBalanceForRentExemption(165);
    const walletRent = await h.chain.getMinimumBalanceForRentExemption(0);
    // One lamport short of the ATA rent while staying rent-exempt.
    fundTaker(h.chain, taker.publicKey, {
      sol: rent + walletRent - 1n,
      tokens: { [MINT.JUP]: 5_000_000_000n },
    });
    const res = await attempt(taker, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n });
    expect(res.state).toEqual({ rejectedWithReason: "insufficientBalanceForAtaCreation" });
  });

  it("accepts the same taker once it has exactly the ATA rent plus rent exemption", async () => {
    const taker = Keypair.generate();
    const rent = await h.chain.getMinimumBalanceForRentExemption(165);
    const walletRent = await h.chain.getMinimumBalanceForRentExemption(0);
    fundTaker(h.chain, taker.publicKey, { sol: rent + walletRent, tokens: { [MINT.JUP]: 5_000_000_000n } });
    const res = await attempt(taker, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n });
    expect(res.state).toBe("accepted");
    expect(lamports(h.chain, taker.publicKey)).toBe(walletRent);
  });

  it("answers signatureVerificationFailed when the taker's signature does not verify", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
    const res = await attempt(
      taker,
      { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n },
      {
        sign: (tx) => {
          tx.sign([taker]);
          const sig = tx.signatures[1] as Uint8Array;
          sig[10] = (sig[10] as number) ^ 0xff;
        },
      },
    );
    expect(res.state).toEqual({ rejectedWithReason: "signatureVerificationFailed" });
  });
});

describe("plain rejections", () => {
  it("does not claim a balance problem when the chain cannot be read, and says why instead", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n });
    chain.arm("getAccounts", { kind: "fail", error: "rpc 503" });
    const res = await attempt(taker, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n });
    expect(res.state).toBe("rejected");
    expect(res.rejectionReason).toMatch(/could not read the taker's balances: rpc 503/);
  });

  it("says the recent blockhash could not be checked when the chain cannot answer for one it did not poll", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
    chain.arm("isBlockhashValid", { kind: "fail", error: "rpc 503" });
    const res = await attempt(
      taker,
      { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n },
      // A blockhash the cache has never seen, so the check must ask the chain.
      { recentBlockhash: Keypair.generate().publicKey.toBase58() },
    );
    expect(res.state).toBe("rejected");
    // Asked again within the budget (reads-again.error.test.ts), then refused with the last failure.
    expect(res.rejectionReason).toMatch(
      /^could not check the recent blockhash: rpc 503 \(asked \d+ times in \d+ ms\)$/,
    );
  });

  it("rejects a fill for a quote that has expired by the time the swap arrives", async () => {
    const taker = Keypair.generate();
    fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
    // Expiry is judged against chain time: the chain's clock alone moves past the quote's expiry.
    chain.clockAheadSeconds = BigInt(Math.ceil((h.config.file.limits.quoteTtlMs + 5_000) / 1000));
    const res = await attempt(taker, { tokenIn: MINT.JUP, tokenOut: MINT.USDC, amount: 1_000_000_000n });
    expect(res.state).toBe("rejected");
    expect(res.rejectionReason).toMatch(/^QUOTE_EXPIRED: the quote expired at \d+; chain time is \d+$/);
  });
});

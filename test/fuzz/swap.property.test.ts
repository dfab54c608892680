/**
 * Property (issue 18): whatever a hostile taker does to a valid fill (test/fuzz/mutations.ts), a
 * fill /swap accepts lands, moving the maker's balances within the quote, and a fill it refuses
 * leaves the maker's accounts byte for byte as they were. The oracle is the local chain's own state.
 *
 * The stack is the sandbox's: the webhook composed as `npm start` composes it, served on a real
 * socket, over the local chain (LiteSVM). Every few mutations a control fill (the honest fill for a
 * fresh quote) must land exactly as quoted.
 *
 * Seeded and bounded: FUZZ_SEED (default 18), FUZZ_RUNS (default 25 in `npm test`; `npm run
 * test:fuzz` runs 2,000), FUZZ_TIME_LIMIT_MS (default 20 min), FUZZ_CONTROL_EVERY (default 10).
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { ata, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { temporaryWsolAccount } from "../../src/program/layout.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { MINT } from "../support/config.ts";
import {
  type Fetcher,
  type Harness,
  type ObservedChain,
  operatorFillParams,
  postSwap,
} from "../support/harness.ts";
import { type SwapBed, swapBed } from "../support/swap-bed.ts";
import { type MutationContext, mutationArb } from "./mutations.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 18);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 20 * 60_000);
const CONTROL_EVERY = Number(process.env.FUZZ_CONTROL_EVERY ?? 10);

let h: Harness;
let chain: ObservedChain;
let http: Fetcher;
let bed: SwapBed | undefined;
const taker = Keypair.generate();
const MINTS = Object.values(MINT).map((m) => new PublicKey(m));
const oldBlockhashes: string[] = [];

const report = {
  mutations: 0,
  accepted: 0,
  acceptedLanded: 0,
  acceptedNotLanded: 0,
  refused: new Map<string, number>(),
  controls: 0,
  controlsExact: 0,
};

beforeAll(async () => {
  bed = await swapBed({
    taker,
    takerFunds: {
      sol: 1_000_000_000_000n,
      tokens: { [MINT.JUP]: 10n ** 15n, [MINT.USDC]: 10n ** 15n, [MINT.SOL]: 0n },
    },
  });
  ({ h, chain, http } = bed);
});

afterAll(async () => {
  const refused = [...report.refused.entries()].sort((a, b) => b[1] - a[1]);
  console.log(
    `fuzz (seed ${SEED}): ${report.mutations} mutations, ${report.accepted} accepted (${report.acceptedLanded} landed, ${report.acceptedNotLanded} did not), ${report.mutations - report.accepted} refused; ${report.controls} controls, ${report.controlsExact} landed exactly as quoted\nrefusals: ${refused.map(([k, v]) => `${k} ${v}`).join(", ")}`,
  );
  await bed?.close();
});

/** The pairs the shipped config trades, both SPL and native-SOL legs. */
const PAIRS = [
  { tokenIn: MINT.JUP, tokenOut: MINT.USDC, nativeSolIn: false, nativeSolOut: false },
  { tokenIn: MINT.USDC, tokenOut: MINT.JUP, nativeSolIn: false, nativeSolOut: false },
  { tokenIn: MINT.SOL, tokenOut: MINT.USDC, nativeSolIn: true, nativeSolOut: false },
  { tokenIn: MINT.USDC, tokenOut: MINT.SOL, nativeSolIn: false, nativeSolOut: true },
] as const;

/** Maker accounts a fill can touch, as raw bytes: what a refused fill must leave identical. */
function makerAccounts(): string {
  const keys = [
    h.maker.publicKey,
    temporaryWsolAccount(h.maker.publicKey),
    ...MINTS.map((m) => ata(h.chain, h.maker.publicKey, m)),
  ];
  return keys
    .map((k) => {
      const a = h.chain.svm.getAccount(k);
      return a
        ? `${k.toBase58()}:${a.lamports}:${a.owner.toBase58()}:${Buffer.from(a.data).toString("hex")}`
        : "-";
    })
    .join("|");
}

function balances(who: PublicKey) {
  return {
    lamports: lamports(h.chain, who),
    ...Object.fromEntries(MINTS.map((m) => [m.toBase58(), tokenBalance(h.chain, who, m)])),
  } as Record<string, bigint>;
}

let counter = 0;
async function freshQuote(pairIndex: number, size: number) {
  const pair = PAIRS[pairIndex % PAIRS.length]!;
  const amount = pair.tokenIn === MINT.SOL ? 10_000_000n + BigInt(size) : 1_000_000n + BigInt(size);
  // The quote path is not under test here: a generous deadline, so a loaded machine cannot turn it
  // into a 404 (the 250 ms budget has its own tests).
  const n = counter++;
  const res = await http("/quote", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-request-start": String(Date.now()),
      "x-request-timeout": "10000",
    },
    body: JSON.stringify({
      requestId: `fuzz-r-${SEED}-${n}`,
      quoteId: `fuzz-q-${SEED}-${n}`,
      tokenIn: pair.tokenIn,
      tokenOut: pair.tokenOut,
      amount: amount.toString(),
      quoteType: "exactIn",
      protocol: "v1",
      feeBps: 10,
      taker: taker.publicKey.toBase58(),
    }),
  });
  if (res.status !== 200) throw new Error(`quote answered ${res.status}: ${await res.text()}`);
  const stored = await h.store.get(`fuzz-q-${SEED}-${n}`);
  if (!stored) throw new Error("quote not stored");
  const params = await operatorFillParams(h, stored, taker.publicKey, {
    createTakerOutputAta: false,
    nativeSolIn: pair.nativeSolIn,
    nativeSolOut: pair.nativeSolOut,
  });
  if (oldBlockhashes.at(-1) !== params.recentBlockhash) oldBlockhashes.push(params.recentBlockhash);
  return { stored, params };
}

/** Lamports the maker may pay for one fill at most (the fee cap). */
const maxFee = () => BigInt(h.config.file.limits.maxFeeLamports);

/** A control: the honest fill for a fresh quote lands exactly as quoted. */
async function control(pairIndex: number, size: number): Promise<void> {
  const { stored, params } = await freshQuote(pairIndex, size);
  const tx = buildFillTransaction(params);
  tx.sign([taker]);
  const before = balances(h.maker.publicKey);
  const res = await postSwap(http, { requestId: stored.requestId, quoteId: stored.quoteId, transaction: tx });
  report.controls++;
  expect(res.body.state, JSON.stringify(res.body)).toBe("accepted");
  expect((await h.chain.getSignatureStatus(res.body.txSignature as string)).state).toBe("confirmed");
  const after = balances(h.maker.publicKey);
  const inMint = stored.request.tokenIn;
  const outMint = stored.request.tokenOut;
  expect(after[inMint]! - before[inMint]!).toBe(params.inputAmount);
  expect(before[outMint]! - after[outMint]!).toBe(params.outputAmount);
  const fee = 10_000n + (BigInt(params.computeUnitLimit) * params.computeUnitPrice + 999_999n) / 1_000_000n;
  expect(before.lamports! - after.lamports!).toBe(fee);
  report.controlsExact++;
}

/** One mutation through /swap, judged by the chain. */
async function mutated(
  pairIndex: number,
  size: number,
  mutation: { label: string; build(ctx: MutationContext): string },
): Promise<void> {
  const { stored, params } = await freshQuote(pairIndex, size);
  const transaction = mutation.build({ params, taker, oldBlockhashes });
  const bytesBefore = makerAccounts();
  const before = balances(h.maker.publicKey);
  const sends = chain.sends;
  const res = await postSwap(http, { requestId: stored.requestId, quoteId: stored.quoteId, transaction });
  report.mutations++;
  if (res.status === 200 && res.body.state === "accepted") {
    report.accepted++;
    const status = await h.chain.getSignatureStatus(res.body.txSignature as string);
    if (status.state !== "confirmed") report.acceptedNotLanded++;
    expect(
      status.state,
      `${mutation.label}: accepted but ${status.state}${"error" in status ? ` (${status.error})` : ""}`,
    ).toBe("confirmed");
    report.acceptedLanded++;
    withinQuote(stored, before, balances(h.maker.publicKey), mutation.label);
    return;
  }
  const reason =
    res.status !== 200
      ? `HTTP ${res.status}`
      : typeof res.body.state === "object"
        ? JSON.stringify(res.body.state)
        : String(res.body.rejectionReason ?? "").startsWith("the chain refused")
          ? "chain-dropped"
          : (String(res.body.rejectionReason ?? "").match(/^[A-Z_]+(?=:)/)?.[0] ?? "other");
  report.refused.set(reason, (report.refused.get(reason) ?? 0) + 1);
  expect(makerAccounts(), `${mutation.label}: refused (${reason}) but the maker's accounts changed`).toBe(
    bytesBefore,
  );
  expect(
    chain.sends === sends || reason === "chain-dropped",
    `${mutation.label}: refused after sending`,
  ).toBe(true);
}

/** The maker gave at most the quoted amountOut, got at least amountIn, paid at most the fee cap. */
function withinQuote(
  q: StoredQuote,
  before: Record<string, bigint>,
  after: Record<string, bigint>,
  label: string,
) {
  const inMint = q.request.tokenIn;
  const outMint = q.request.tokenOut;
  expect(after[inMint]! - before[inMint]!, `${label}: input received`).toBeGreaterThanOrEqual(
    BigInt(q.response.amountIn),
  );
  expect(before[outMint]! - after[outMint]!, `${label}: output given`).toBeLessThanOrEqual(
    BigInt(q.response.amountOut),
  );
  expect(before.lamports! - after.lamports!, `${label}: lamports paid`).toBeLessThanOrEqual(maxFee());
  for (const m of MINTS.map((k) => k.toBase58()).filter((m) => m !== inMint && m !== outMint)) {
    expect(after[m], `${label}: ${m} untouched`).toBe(before[m]);
  }
}

describe("mutated fills through POST /swap on the sandbox stack", () => {
  it(
    `accepted ⇒ lands within the quote; refused ⇒ the maker's accounts are byte-identical (${RUNS} mutations, seed ${SEED})`,
    async () => {
      const started = Date.now();
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: PAIRS.length - 1 }),
          fc.nat({ max: 1_000_000 }),
          mutationArb,
          async (pairIndex, size, mutation) => {
            if (report.mutations % CONTROL_EVERY === 0) await control(pairIndex, size);
            await mutated(pairIndex, size, mutation);
          },
        ),
        { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, endOnFailure: true },
      );
      expect(report.acceptedNotLanded).toBe(0);
      expect(report.controls).toBeGreaterThan(0);
      expect(report.controlsExact).toBe(report.controls);
      expect(Date.now() - started).toBeLessThan(TIME_LIMIT_MS + 60_000);
    },
    TIME_LIMIT_MS + 120_000,
  );
});

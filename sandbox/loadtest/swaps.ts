/**
 * The load test's swap phase: N complete fills through the operator simulator, as takers do them
 * (order with a taker, sign, execute), C at a time, each taker used by one swap at a time. A fill
 * counts as landed only when the operator's execute answers Success (it waits for the chain).
 */
import type { Keypair } from "@solana/web3.js";
import { type OrderAsk, TakerClient } from "../operator/taker.ts";
import { type LatencySummary, summarize } from "./stats.ts";

const SOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const USDT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";
const JUP = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";

/** Both quote types, token and native-SOL legs, a fee-free stable pair. */
export const SWAP_MIX: OrderAsk[] = [
  { inputMint: USDC, outputMint: JUP, amount: 25_000_000n },
  { inputMint: JUP, outputMint: USDC, amount: 40_000_000n },
  { inputMint: USDC, outputMint: SOL, amount: 10_000_000n },
  { inputMint: SOL, outputMint: USDC, amount: 5_000_000n, swapMode: "ExactOut" },
  { inputMint: USDT, outputMint: SOL, amount: 20_000_000n },
  { inputMint: USDC, outputMint: USDT, amount: 50_000_000n },
  { inputMint: SOL, outputMint: JUP, amount: 30_000_000n, swapMode: "ExactOut" },
];

/** What each swap-phase taker starts with (symbol -> smallest units, plus lamports). */
export const SWAP_TAKER_FUNDING = {
  sol: 10_000_000_000_000n,
  tokens: { USDC: 1_000_000_000_000n, USDT: 1_000_000_000_000n, JUP: 1_000_000_000_000n, SOL: 0n },
};

export interface SwapPhaseResult {
  requested: number;
  landed: number;
  outcomes: Record<string, number>;
  latencyMs: LatencySummary;
  errorSamples: string[];
  /** Every swap that did not land: when its order was asked (epoch ms) and its outcome key. */
  misses: { askedAtMs: number; outcome: string }[];
  wallMs: number;
}

export async function runSwapPhase(opts: {
  operatorUrl: string;
  chainUrl: string;
  takers: Keypair[];
  count: number;
  concurrency: number;
  /**
   * A fault in the middle of the phase: once swap `at` has been handed to the operator, `fault` runs
   * (e.g. the webhook SIGKILLed and started again) while the swaps already in flight go on; no new
   * swap starts until it is done.
   */
  faultAt?: { at: number; delayMs?: number; fault: () => Promise<void> };
  /** Swap i starts no earlier than `i * paceMs` after the phase's start (a steady rate, `npm run soak`). */
  paceMs?: number;
  /** Called as swap i's execute is handed to the operator (a fault can be aimed at a fill in flight). */
  onExecuting?: (i: number) => void;
}): Promise<SwapPhaseResult> {
  const client = new TakerClient(opts.operatorUrl, opts.chainUrl);
  const outcomes: Record<string, number> = {};
  const errorSamples: string[] = [];
  const misses: SwapPhaseResult["misses"] = [];
  const latency = new Float64Array(opts.count).fill(Number.NaN);
  const bump = (k: string, askedAtMs?: number) => {
    outcomes[k] = (outcomes[k] ?? 0) + 1;
    if (askedAtMs !== undefined) misses.push({ askedAtMs, outcome: k });
  };
  let next = 0;
  const started = performance.now();
  let gate: Promise<void> = Promise.resolve();
  const worker = async (w: number) => {
    for (;;) {
      await gate;
      const i = next++;
      if (i >= opts.count) return;
      const wait = opts.paceMs ? started + i * opts.paceMs - performance.now() : 0;
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      // Worker w only ever uses takers w, w + C, ...: no two swaps in flight share a taker.
      const takers = opts.takers.filter((_, k) => k % opts.concurrency === w);
      const taker = takers[Math.floor(i / opts.concurrency) % takers.length] as Keypair;
      // Each swap's amount is its own (the mix's plus i smallest units): two identical orders from one
      // taker within one blockhash and expiry second are one transaction, which the maker rightly
      // refuses the second time ("already submitted for another quote"), as the chain would drop it.
      // The worker's two takers and the mix's seven asks repeat a (taker, ask) pair 7 swaps apart,
      // under a second at this concurrency: one run of 200 lost a fill to it.
      const mixed = SWAP_MIX[i % SWAP_MIX.length] as OrderAsk;
      const ask: OrderAsk = { ...mixed, amount: mixed.amount + BigInt(i) };
      const t0 = performance.now();
      const askedAtMs = Date.now();
      const order = await client
        .order(ask, taker.publicKey)
        .catch((e: Error) => ({ ok: false as const, status: 0, error: e.message }));
      if (!order.ok) {
        bump(`order ${order.status}`, askedAtMs);
        if (errorSamples.length < 10) errorSamples.push(`order: ${order.error}`);
        continue;
      }
      if (!order.body.transaction) {
        bump(`order errorCode ${order.body.errorCode}`, askedAtMs);
        if (errorSamples.length < 10) errorSamples.push(`order: ${order.body.errorMessage}`);
        continue;
      }
      const path = i % 2 ? "/ultra/v1/execute" : "/swap/v2/execute";
      const executing = client.execute(order.body, taker, path);
      opts.onExecuting?.(i);
      const fault = opts.faultAt;
      if (fault && i === fault.at) {
        // The execute is on its way (the operator forwards it to /swap at once): the fault lands while
        // it, and the other workers' swaps, are in flight.
        gate = new Promise<void>((resolve) => {
          setTimeout(() => void fault.fault().then(resolve, resolve), fault.delayMs ?? 30);
        });
      }
      const res = await executing.catch((e: Error) => ({ ok: false as const, status: 0, error: e.message }));
      latency[i] = performance.now() - t0;
      if (res.ok && res.body.status === "Success") {
        bump("landed");
        continue;
      }
      const key = res.ok ? `execute code ${res.body.code}` : `execute http ${res.status}`;
      bump(key, askedAtMs);
      if (errorSamples.length < 10) errorSamples.push(`${key}: ${res.ok ? res.body.error : res.error}`);
    }
  };
  const workers = Math.max(1, Math.min(opts.concurrency, opts.takers.length));
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    requested: opts.count,
    landed: outcomes.landed ?? 0,
    outcomes,
    latencyMs: summarize(latency),
    errorSamples,
    misses,
    wallMs: performance.now() - started,
  };
}

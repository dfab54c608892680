/**
 * The /swap latency harness the A/B swap benchmarks share (bench/preflight.ts, bench/signer.ts): the
 * shipped configuration's JUP and USDC, a taker funded to sell JUP, one operator-shaped fill through a
 * composed service (quote -> operator-built fill -> taker signs -> POST /swap, in-process) timing only
 * the /swap call, and the loop that alternates two beds one for one so the machine's load falls on
 * both alike.
 */
import { readFileSync } from "node:fs";
import { type Keypair, PublicKey } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { buildFillTransaction, fillAmountsFromQuote } from "../sandbox/fill/builder.ts";
import type { LocalChain } from "../src/chain/local/index.ts";
import { fundTaker } from "../src/chain/local/seed.ts";
import type { Service } from "../src/compose.ts";

export const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
const token = (symbol: string) => file.tokens.find((t) => t.symbol === symbol)!;
export const JUP = token("JUP").mint;
export const USDC = token("USDC").mint;

/** 100 SOL and 10^15 JUP units, no USDC: enough for every fill a run makes. */
export function fundBenchTaker(chain: LocalChain, taker: Keypair): void {
  fundTaker(chain, taker.publicKey, { sol: 100_000_000_000n, tokens: { [JUP]: 10n ** 15n, [USDC]: 0n } });
}

export interface SwapBench {
  label: string;
  service: Service;
  chain: LocalChain;
  maker: PublicKey;
  taker: Keypair;
  /** The timed /swap calls, ms. */
  ms: number[];
}

let n = 0;
/** One operator-shaped fill (selling 1,000+ JUP for USDC) through the service; returns the /swap call's duration (ms). */
export async function fillOnce(b: SwapBench): Promise<number> {
  n++;
  const quoteRes = await b.service.app.request("/quote", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-request-start": String(Date.now()),
      // Generous: only /swap is timed, and a loaded machine must not turn quotes into 404s.
      "x-request-timeout": "10000",
    },
    body: JSON.stringify({
      requestId: `bench-req-${n}`,
      quoteId: `bench-quote-${n}-${b.label}`,
      tokenIn: JUP,
      tokenOut: USDC,
      amount: String(1_000_000_000 + n),
      quoteType: "exactIn",
      protocol: "v1",
      feeBps: 10,
      taker: b.taker.publicKey.toBase58(),
    }),
  });
  if (quoteRes.status !== 200) throw new Error(`quote: ${quoteRes.status} ${await quoteRes.text()}`);
  const { quoteId, requestId } = (await quoteRes.json()) as { quoteId: string; requestId: string };
  const quote = await b.service.store.get(quoteId);
  if (!quote) throw new Error("quote not stored");
  const tx = buildFillTransaction({
    maker: b.maker,
    taker: b.taker.publicKey,
    inputMint: new PublicKey(JUP),
    outputMint: new PublicKey(USDC),
    inputTokenProgram: new PublicKey(token("JUP").tokenProgram),
    outputTokenProgram: new PublicKey(token("USDC").tokenProgram),
    ...fillAmountsFromQuote(quote),
    expireAt: BigInt(Math.floor(quote.expiresAtMs / 1000)),
    computeUnitLimit: 60_000,
    computeUnitPrice: BigInt(quote.response.prioritizationFeeToUse ?? 10_000),
    recentBlockhash: (await b.chain.getLatestBlockhash()).blockhash,
    createTakerOutputAta: false,
  });
  tx.sign([b.taker]);
  const body = JSON.stringify({
    requestId,
    quoteId,
    transaction: Buffer.from(tx.serialize()).toString("base64"),
  });
  const t0 = performance.now();
  const res = await b.service.app.request("/swap", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const answer = (await res.json()) as { state: unknown };
  const ms = performance.now() - t0;
  if (answer.state !== "accepted")
    throw new Error(`${b.label}: swap not accepted: ${JSON.stringify(answer)}`);
  return ms;
}

/**
 * `warmup` untimed fills on each bed, then `afterWarmup`, then `swaps` timed fills on each, alternating
 * which goes first so neither always runs right after the other's GC.
 */
export async function alternate(
  a: SwapBench,
  b: SwapBench,
  opts: { warmup: number; swaps: number; afterWarmup?: () => void },
): Promise<void> {
  for (let i = 0; i < opts.warmup; i++) {
    await fillOnce(a);
    await fillOnce(b);
  }
  opts.afterWarmup?.();
  for (let i = 0; i < opts.swaps; i++) {
    const pair = i % 2 === 0 ? [a, b] : [b, a];
    for (const x of pair) x.ms.push(await fillOnce(x));
  }
}

/** The p-th percentile (nearest rank) of `v`. */
export const pct = (v: number[], p: number) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
};

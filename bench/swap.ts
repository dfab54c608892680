/**
 * Swap path micro-benchmark (`npm run bench:swap`): the CPU work the executor does on every /swap
 * before the chain is involved, measured per stage over one run:
 *
 *   decode    base64 -> VersionedTransaction (with the trailing-bytes check), message bytes, sha256
 *   validate  validateFill against the stored quote + the taker's ed25519 signature check
 *   sign      the maker's co-signature (KeypairSigner) and its base58 transaction id
 *
 * The store, the chain reads and the send are excluded: they are network round trips measured by the
 * service's own rfq_swap_duration_seconds histogram. Target: p99 of the three together under 5 ms.
 *
 *   npm run bench:swap -- --iterations 5000 --warmup 500
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Keypair, PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import { buildConfig, DEFAULT_CONFIG_PATH, parseEnv, parseFileConfig } from "../config/load.ts";
import { buildFillTransaction, fillAmountsFromQuote } from "../sandbox/fill/builder.ts";
import { parseArgs } from "../src/cli/args.ts";
import { checkTakerSignatures } from "../src/fill/signatures.ts";
import { validateFill } from "../src/fill/validate.ts";
import { deserializeFillTransaction } from "../src/program/decode.ts";
import type { StoredQuote } from "../src/quote-store/interface.ts";
import { KeypairSigner } from "../src/signing/keypair.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:swap",
  summary:
    "Swap path micro-benchmark: the CPU work of every /swap before the chain (decode, validate with the\n" +
    "taker's signature check, the maker's co-signature), per stage; p99 target 5 ms. Reported, not asserted.",
  flags: {
    iterations: { type: "string", value: "N", default: "5000", description: "measured iterations" },
    warmup: { type: "string", value: "N", default: "500", description: "warm-up iterations" },
  },
});
const iterations = Number(args.iterations);
const warmup = Number(args.warmup);
const TARGET_P99_MS = 5;

const config = buildConfig(
  parseEnv({ LOG_LEVEL: "silent" }),
  parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8"))),
);
const maker = Keypair.generate();
const taker = Keypair.generate();
const signer = new KeypairSigner(maker);
const mint = (symbol: string) => config.tokensBySymbol.get(symbol)?.mint as string;

// A quote as the service stores it (1,000 JUP for USDC, 10 bps operator fee), and the operator's fill.
const nowMs = Date.now();
const quote: StoredQuote = {
  quoteId: "bench-quote",
  requestId: "bench-request",
  request: {
    requestId: "bench-request",
    quoteId: "bench-quote",
    tokenIn: mint("JUP"),
    tokenOut: mint("USDC"),
    amount: "1000000000",
    quoteType: "exactIn",
    protocol: "v1",
    feeBps: 10,
    taker: taker.publicKey.toBase58(),
  },
  response: {
    requestId: "bench-request",
    quoteId: "bench-quote",
    tokenIn: mint("JUP"),
    tokenOut: mint("USDC"),
    quoteType: "exactIn",
    protocol: "v1",
    amountIn: "1000000000",
    amountOut: "811250000",
    maker: maker.publicKey.toBase58(),
    prioritizationFeeToUse: 10_000,
    taker: taker.publicKey.toBase58(),
  },
  feeBps: 10,
  taker: taker.publicKey.toBase58(),
  permissioned: false,
  createdAtMs: nowMs,
  expiresAtMs: nowMs + 3_600_000,
};
const tx = buildFillTransaction({
  maker: maker.publicKey,
  taker: taker.publicKey,
  inputMint: new PublicKey(quote.request.tokenIn),
  outputMint: new PublicKey(quote.request.tokenOut),
  inputTokenProgram: new PublicKey(config.tokensByMint.get(quote.request.tokenIn)?.tokenProgram as string),
  outputTokenProgram: new PublicKey(config.tokensByMint.get(quote.request.tokenOut)?.tokenProgram as string),
  ...fillAmountsFromQuote(quote),
  expireAt: BigInt(Math.floor(quote.expiresAtMs / 1000)),
  computeUnitLimit: 60_000,
  computeUnitPrice: 10_000n,
  recentBlockhash: bs58.encode(createHash("sha256").update("bench").digest()),
  createTakerOutputAta: true,
});
tx.sign([taker]);
const wire = Buffer.from(tx.serialize()).toString("base64");
const maxFeeLamports = BigInt(config.file.limits.maxFeeLamports);

type Stage = "decode" | "validate" | "sign" | "total";
const samples: Record<Stage, number[]> = { decode: [], validate: [], sign: [], total: [] };
const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;

function once(record: boolean): void {
  const t0 = process.hrtime.bigint();
  const parsed = deserializeFillTransaction(wire);
  if (!parsed.ok) throw new Error(parsed.problem);
  const messageBytes = parsed.tx.message.serialize();
  createHash("sha256").update(messageBytes).digest("hex");
  const t1 = process.hrtime.bigint();
  const v = validateFill({
    tx: parsed.tx,
    quote,
    maker: maker.publicKey,
    tokens: config.tokensByMint,
    maxFeeLamports,
  });
  if (!v.ok) throw new Error(`${v.code}: ${v.context}`);
  const sigs = checkTakerSignatures(parsed.tx, messageBytes, 0);
  if (!sigs.ok) throw new Error(sigs.context);
  const t2 = process.hrtime.bigint();
  signer.sign(parsed.tx);
  bs58.encode(parsed.tx.signatures[0] as Uint8Array);
  const t3 = process.hrtime.bigint();
  if (!record) return;
  samples.decode.push(ms(t0, t1));
  samples.validate.push(ms(t1, t2));
  samples.sign.push(ms(t2, t3));
  samples.total.push(ms(t0, t3));
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

for (let i = 0; i < warmup; i++) once(false);
for (let i = 0; i < iterations; i++) once(true);

const rows = (Object.keys(samples) as Stage[]).map((stage) => {
  const sorted = [...samples[stage]].sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(3);
  return {
    stage,
    p50: f(percentile(sorted, 50)),
    p90: f(percentile(sorted, 90)),
    p99: f(percentile(sorted, 99)),
    max: f(sorted.at(-1) as number),
  };
});
console.log(`swap path CPU stages, ${iterations} iterations after ${warmup} warm-up (ms; chain excluded)`);
console.table(rows);
const p99 = Number(rows.find((r) => r.stage === "total")?.p99);
const verdict = p99 < TARGET_P99_MS ? "meets" : "MISSES";
console.log(
  `total p99 ${p99.toFixed(3)} ms: ${verdict} the ${TARGET_P99_MS} ms target (${process.version}, one run)`,
);
if (p99 >= TARGET_P99_MS) process.exitCode = 1;

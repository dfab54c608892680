/**
 * What the pre-flight simulation adds to /swap (`npm run bench:preflight`, part of `npm run bench`):
 * two services composed as `npm start` composes the paper setup (memory store, local chain), one with
 * `limits.preflightSimulation` on and one with it off, each filling the same operator-built fills
 * (quote -> fill -> taker signs -> POST /swap, in-process), alternated one for one so that the
 * machine's load falls on both alike. Only the /swap call is timed; every fill lands on its chain.
 * Reports p50/p99 of each and their ratio (on / off), and the share of the 25 s answer budget used.
 *
 *   npm run bench:preflight -- --swaps 200 --warmup 20
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair, PublicKey } from "@solana/web3.js";
import { buildConfig, DEFAULT_CONFIG_PATH, parseEnv, parseFileConfig } from "../config/load.ts";
import { buildFillTransaction, fillAmountsFromQuote } from "../sandbox/fill/builder.ts";
import { LocalChain } from "../src/chain/local/index.ts";
import { fundTaker, seedFromConfig } from "../src/chain/local/seed.ts";
import { parseArgs } from "../src/cli/args.ts";
import { composeService, type Service } from "../src/compose.ts";
import { KeypairSigner } from "../src/signer/index.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:preflight",
  summary:
    "Measures the latency the pre-flight simulation adds to POST /swap: the same operator-built fills\n" +
    "against two in-process services (local chain), limits.preflightSimulation on and off, alternated;\n" +
    "prints p50/p99 of each and the ratio on/off. Figures are printed, not asserted.",
  flags: {
    swaps: { type: "string", value: "N", default: "200", description: "timed swaps per mode" },
    warmup: { type: "string", value: "N", default: "20", description: "untimed swaps per mode first" },
  },
});
const swaps = Number(args.swaps);
const warmup = Number(args.warmup);

const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
const JUP = file.tokens.find((t) => t.symbol === "JUP")!.mint;
const USDC = file.tokens.find((t) => t.symbol === "USDC")!.mint;

interface Bed {
  label: string;
  service: Service;
  chain: LocalChain;
  maker: Keypair;
  taker: Keypair;
  ms: number[];
}

async function bed(label: string, preflightSimulation: boolean): Promise<Bed> {
  const config = buildConfig(
    parseEnv({
      LOG_LEVEL: "silent",
      LEDGER: "off",
      DATA_DIR: mkdtempSync(join(tmpdir(), "bench-preflight-")),
    }),
    { ...file, limits: { ...file.limits, preflightSimulation } },
  );
  const chain = LocalChain.create();
  const maker = Keypair.generate();
  seedFromConfig(chain, config.file, maker.publicKey);
  const taker = Keypair.generate();
  fundTaker(chain, taker.publicKey, {
    sol: 100_000_000_000n,
    tokens: { [JUP]: 10n ** 15n, [USDC]: 0n },
  });
  const service = await composeService(config, { chain, signer: new KeypairSigner(maker) });
  return { label, service, chain, maker, taker, ms: [] };
}

let n = 0;
/** One operator-shaped fill through the service; returns the /swap call's duration (ms). */
async function fillOnce(b: Bed): Promise<number> {
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
    maker: b.maker.publicKey,
    taker: b.taker.publicKey,
    inputMint: new PublicKey(JUP),
    outputMint: new PublicKey(USDC),
    inputTokenProgram: new PublicKey(file.tokens.find((t) => t.mint === JUP)!.tokenProgram),
    outputTokenProgram: new PublicKey(file.tokens.find((t) => t.mint === USDC)!.tokenProgram),
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
  const answer = (await res.json()) as { state: unknown; rejectionReason?: string };
  const ms = performance.now() - t0;
  if (answer.state !== "accepted")
    throw new Error(`${b.label}: swap not accepted: ${JSON.stringify(answer)}`);
  return ms;
}

const pct = (v: number[], p: number) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
};

const on = await bed("on", true);
const off = await bed("off", false);
try {
  for (let i = 0; i < warmup; i++) {
    await fillOnce(on);
    await fillOnce(off);
  }
  for (let i = 0; i < swaps; i++) {
    // Alternate which goes first so neither mode always runs right after the other's GC.
    const pair = i % 2 === 0 ? [on, off] : [off, on];
    for (const b of pair) b.ms.push(await fillOnce(b));
  }
  const row = (b: Bed) =>
    `${b.label.padEnd(4)} p50 ${pct(b.ms, 50).toFixed(2).padStart(7)} ms   p99 ${pct(b.ms, 99).toFixed(2).padStart(7)} ms`;
  console.log(`POST /swap, in-process, local chain, ${swaps} fills per mode (each landed)`);
  console.log(`pre-flight ${row(on)}`);
  console.log(`pre-flight ${row(off)}`);
  const r50 = pct(on.ms, 50) / pct(off.ms, 50);
  const r99 = pct(on.ms, 99) / pct(off.ms, 99);
  console.log(
    `added by pre-flight: p50 +${(pct(on.ms, 50) - pct(off.ms, 50)).toFixed(2)} ms (ratio ${r50.toFixed(2)}), p99 +${(pct(on.ms, 99) - pct(off.ms, 99)).toFixed(2)} ms (ratio ${r99.toFixed(2)}); p99 with pre-flight is ${((pct(on.ms, 99) / 25_000) * 100).toFixed(3)}% of the 25 s budget`,
  );
} finally {
  await on.service.close();
  await off.service.close();
}

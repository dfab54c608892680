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
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { buildConfig, parseEnv } from "../config/load.ts";
import { LocalChain } from "../src/chain/local/index.ts";
import { seedFromConfig } from "../src/chain/local/seed.ts";
import { parseArgs } from "../src/cli/args.ts";
import { composeService } from "../src/compose.ts";
import { KeypairSigner } from "../src/signing/keypair.ts";
import { alternate, file, fundBenchTaker, pct, type SwapBench } from "./swap-bench.ts";

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

async function bed(label: string, preflightSimulation: boolean): Promise<SwapBench> {
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
  fundBenchTaker(chain, taker);
  const service = await composeService(config, { chain, signer: new KeypairSigner(maker) });
  return { label, service, chain, maker: maker.publicKey, taker, ms: [] };
}

const on = await bed("on", true);
const off = await bed("off", false);
try {
  await alternate(on, off, { warmup, swaps });
  const row = (b: SwapBench) =>
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

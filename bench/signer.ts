/**
 * What the remote signer adds to /swap (`npm run bench:signer`, part of `npm run bench`): two services
 * composed as `npm start` composes them, on one throwaway Redis (each its own prefix) and each on its
 * own local chain seeded for the same maker: one signs with the local keypair adapter, the other asks
 * the signer service, run as its own process (`npm run signer`'s entry point) on a Unix socket, which
 * re-checks every fill (quote read from Redis, every fill rule, taker signature, limits, its record).
 * Both fill the same operator-built fills (quote -> fill -> taker signs -> POST /swap, in-process),
 * alternated one for one so the machine's load falls on both alike. Pre-flight simulation is off in
 * both, so the chain's simulation noise does not hide the signer's cost. Only the /swap call is timed;
 * every fill lands. Reports p50/p99 of each and what the remote signer adds (target: p99 +2 ms).
 *
 *   npm run bench:signer -- --swaps 300 --warmup 30
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Keypair } from "@solana/web3.js";
import { Redis } from "ioredis";
import { buildConfig, DEFAULT_CONFIG_PATH, parseEnv } from "../config/load.ts";
import { LocalChain } from "../src/chain/local/index.ts";
import { seedFromConfig } from "../src/chain/local/seed.ts";
import { parseArgs } from "../src/cli/args.ts";
import { composeService } from "../src/compose.ts";
import { KeypairSigner } from "../src/signing/keypair.ts";
import type { SignContext, Signer } from "../src/signing/port.ts";
import { RemoteSigner } from "../src/signing/remote.ts";
import { spawnTs, startRedis } from "../tooling/processes.ts";
import { alternate, file, fundBenchTaker, pct, type SwapBench } from "./swap-bench.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:signer",
  summary:
    "Measures the latency the remote signer (npm run signer, its own process, Unix socket) adds to\n" +
    "POST /swap against the local keypair adapter: the same operator-built fills against two\n" +
    "in-process services, alternated; prints p50/p99 of each and the difference. Not asserted.",
  flags: {
    swaps: { type: "string", value: "N", default: "300", description: "timed swaps per adapter" },
    warmup: { type: "string", value: "N", default: "30", description: "untimed swaps per adapter first" },
  },
});
const swaps = Number(args.swaps);
const warmup = Number(args.warmup);

const dir = mkdtempSync(join(tmpdir(), "bench-signer-"));
const maker = Keypair.generate();
const keyFile = join(dir, "maker.json");
writeFileSync(keyFile, JSON.stringify(Array.from(maker.secretKey)), { mode: 0o600 });
const limitsFile = join(dir, "limits.json");
// The signer's own prices: the configuration's static ones, each pair in a 1% band (as the sandbox).
const signerPrices = Object.assign(
  {},
  ...Object.values(file.priceSources).map((p) => (p.kind === "static" ? p.prices : {})),
) as Record<string, string>;
writeFileSync(
  limitsFile,
  JSON.stringify({
    tokens: { "*": { perFill: "1000000", perMinute: "4000000", perDay: "4000000", lossPerDay: "4000000" } },
    priceSources: { own: { kind: "static", prices: signerPrices } },
    pairs: Object.fromEntries(
      Object.keys(signerPrices).map((pair) => [pair, { priceSource: "own", bandBps: 100 }]),
    ),
  }),
);
const socket = join(dir, "signer.sock");
const timed: TimedSigner[] = [];

interface Bed extends SwapBench {
  /** The signature step alone (the signer port's sign call inside /swap), ms. */
  signMs: number[];
}

/** Times every sign call of the adapter it wraps (an observer: the real adapter signs). */
class TimedSigner implements Signer {
  timing = false;
  readonly ms: number[] = [];
  constructor(private readonly inner: Signer) {}
  get publicKey() {
    return this.inner.publicKey;
  }
  async sign(tx: Parameters<Signer["sign"]>[0], context?: SignContext): Promise<void> {
    const t0 = performance.now();
    await this.inner.sign(tx, context);
    if (this.timing) this.ms.push(performance.now() - t0);
  }
}

async function bed(label: string, redis: Redis, redisUrl: string, remote: boolean): Promise<Bed> {
  const env = {
    LOG_LEVEL: "silent",
    DATA_DIR: mkdtempSync(join(dir, `${label}-`)),
    REDIS_URL: redisUrl,
    // The fill ledger (PGlite, in this process) is off the /swap path; it would only add noise here.
    LEDGER: "off",
    ...(remote ? { SIGNER_URL: `unix://${socket}` } : {}),
  };
  const config = buildConfig(parseEnv(env), {
    ...file,
    limits: { ...file.limits, preflightSimulation: false },
  });
  const chain = LocalChain.create();
  seedFromConfig(chain, config.file, maker.publicKey);
  const taker = Keypair.generate();
  fundBenchTaker(chain, taker);
  // The remote adapter connects exactly as composeService does with SIGNER_URL (src/compose.ts).
  const inner: Signer = remote
    ? await RemoteSigner.connect({ url: env.SIGNER_URL as string })
    : new KeypairSigner(maker);
  const signer = new TimedSigner(inner);
  const service = await composeService(config, {
    chain,
    redis,
    signer,
    // The signer reads quotes under the configured prefix; the local bed keeps to its own.
    ...(remote ? {} : { redisPrefix: "bench-local:" }),
  });
  timed.push(signer);
  return { label, service, chain, maker: maker.publicKey, taker, ms: [], signMs: signer.ms };
}

async function waitForSocket(path: string, until: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(path, () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until)
      throw new Error(`the signer did not listen on ${path}; see ${join(dir, "signer.log")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
const signer = spawnTs(
  "signer",
  "src/signer/main.ts",
  {
    SIGNER_KEYPAIR: keyFile,
    SIGNER_SOCKET: socket,
    SIGNER_LIMITS: limitsFile,
    REDIS_URL: redisServer.url,
    CONFIG: DEFAULT_CONFIG_PATH,
    LOG_LEVEL: "warn",
  },
  join(dir, "signer.log"),
);
const beds: Bed[] = [];
try {
  await waitForSocket(socket, Date.now() + 60_000);
  const local = await bed("local", redis, redisServer.url, false);
  beds.push(local);
  const remote = await bed("remote", redis, redisServer.url, true);
  beds.push(remote);
  await alternate(local, remote, {
    warmup,
    swaps,
    afterWarmup: () => {
      for (const t of timed) t.timing = true;
    },
  });
  const row = (b: Bed) =>
    `${b.label.padEnd(6)} p50 ${pct(b.ms, 50).toFixed(2).padStart(7)} ms   p99 ${pct(b.ms, 99).toFixed(2).padStart(7)} ms`;
  console.log(
    `POST /swap, in-process, Redis store, local chain, pre-flight off, ${swaps} fills per signer adapter (each landed)`,
  );
  console.log(`signer ${row(local)}`);
  console.log(`signer ${row(remote)}   (signer service in its own process, Unix socket)`);
  const signRow = (b: Bed) =>
    `${b.label.padEnd(6)} p50 ${pct(b.signMs, 50).toFixed(3).padStart(7)} ms   p99 ${pct(b.signMs, 99).toFixed(3).padStart(7)} ms`;
  console.log(`the signature step alone (inside /swap): ${signRow(local)}`);
  console.log(`the signature step alone (inside /swap): ${signRow(remote)}`);
  const s50 = pct(remote.signMs, 50) - pct(local.signMs, 50);
  const s99 = pct(remote.signMs, 99) - pct(local.signMs, 99);
  console.log(`added at the signature step: p50 +${s50.toFixed(3)} ms, p99 +${s99.toFixed(3)} ms`);
  // The bare cost of a hop to the signer's process and back on this machine now: a keys request.
  const ping = await RemoteSigner.connect({ url: `unix://${socket}` });
  const pingMs: number[] = [];
  for (let i = 0; i < swaps; i++) {
    const t0 = performance.now();
    await ping.keys();
    pingMs.push(performance.now() - t0);
  }
  ping.close();
  console.log(
    `bare round trip to the signer process (keys request, no Redis, no rules): p50 ${pct(pingMs, 50).toFixed(3)} ms   p99 ${pct(pingMs, 99).toFixed(3)} ms`,
  );
  const load = (await import("node:os")).loadavg()[0]!;
  console.log(
    `machine load average (1 min) at the end: ${load.toFixed(1)} on ${(await import("node:os")).cpus().length} cores`,
  );
  const d50 = pct(remote.ms, 50) - pct(local.ms, 50);
  const d99 = pct(remote.ms, 99) - pct(local.ms, 99);
  console.log(
    `added by the remote signer: p50 +${d50.toFixed(2)} ms (ratio ${(pct(remote.ms, 50) / pct(local.ms, 50)).toFixed(2)}), p99 +${d99.toFixed(2)} ms (ratio ${(pct(remote.ms, 99) / pct(local.ms, 99)).toFixed(2)}); target p99 +2 ms: ${d99 <= 2 ? "met" : "NOT met"}`,
  );
} finally {
  for (const b of beds) await b.service.close();
  await signer.stop();
  redis.disconnect();
  await redisServer.stop();
}

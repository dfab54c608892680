/**
 * Quote path benchmark (`npm run bench`). The webhook runs as `npm start` would, in its own process,
 * with the Redis quote store; this process only generates load.
 *
 * 1. Fixed offered rate (open loop, default 2,000 quotes/s): p50/p99 latency measured from each
 *    request's scheduled send time, over the load test's realistic request mix.
 * 2. Maximum throughput: autocannon with many connections against the webhook and against a bare Hono
 *    endpoint answering the same JSON (bench/bare-hono.ts); the webhook's figure is given as a ratio.
 *
 * 3. Redis memory per stored quote (used_memory and keys before and after the fixed-rate run), and
 *    what a steady rate holds with the configured retention.
 *
 * Targets (issue 2): p99 under 10 ms at 2,000/s; throughput ratio at least 0.5. The machine is small
 * and shared, so figures are from one run and reported, not asserted in tests.
 *
 * With `--price-source redis` every pair is priced from Redis (the maker's pricing engine path): a
 * publisher in this process writes and publishes every pair's mid 10 times a second during the run,
 * as an engine would, so each webhook quote reads a price that changes under it.
 *
 *   npm run bench -- --rate 2000 --duration 15 --throughput-seconds 8
 *   npm run bench:quote -- --price-source redis
 *   CONFIG=my-config.json npm run bench:quote      (the webhook on that configuration file)
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import type { FileConfig } from "../config/schema.ts";
import { publishPrice } from "../pricing/redis.ts";
import { buildMix, DEFAULT_MIX } from "../sandbox/loadtest/mix.ts";
import { Outcome, runOpenLoop } from "../sandbox/loadtest/open-loop.ts";
import { summarize } from "../sandbox/loadtest/stats.ts";
import { parseArgs } from "../src/cli/args.ts";
import { freePort, REPO_ROOT, spawnTs, startRedis, waitForHttp } from "../tooling/processes.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:quote",
  summary:
    "Quote path benchmark: the webhook in its own process (Redis store); open-loop /quote load at a fixed\n" +
    "rate (p50/p99 from each request's scheduled send), then maximum throughput against a bare Hono\n" +
    "baseline, given as a ratio. Figures are printed, not asserted.",
  flags: {
    rate: { type: "string", value: "N", default: "2000", description: "offered quotes per second" },
    duration: { type: "string", value: "S", default: "15", description: "measured seconds at the rate" },
    warmup: { type: "string", value: "S", default: "3", description: "warm-up seconds before measuring" },
    "throughput-seconds": {
      type: "string",
      value: "S",
      default: "8",
      description: "seconds of the maximum-throughput run, per target",
    },
    connections: {
      type: "string",
      value: "N",
      default: "64",
      description: "connections for the throughput run",
    },
    "log-level": { type: "string", value: "LEVEL", default: "info", description: "the webhook's LOG_LEVEL" },
    "price-source": {
      type: "string",
      value: "static|redis",
      default: "static",
      description: "price every pair statically or from Redis with a live publisher",
    },
  },
});
const priceSource = String(args["price-source"]);
if (priceSource !== "static" && priceSource !== "redis") throw new Error("--price-source: static or redis");
const rate = Number(args.rate);
const durationS = Number(args.duration);
const warmupS = Number(args.warmup);
const tputS = Number(args["throughput-seconds"]);
const connections = Number(args.connections);

const QUOTE_ID = "59db3e19-c7b0-4753-a8aa-206701004498";
const quoteBody = JSON.stringify({
  requestId: "629bddf3-0038-43a6-8956-f5433d6b1191",
  quoteId: QUOTE_ID,
  tokenIn: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  tokenOut: "So11111111111111111111111111111111111111112",
  amount: "1000000",
  quoteType: "exactIn",
  protocol: "v1",
  feeBps: 10,
});

async function throughput(url: string): Promise<{ rps: number; non2xx: number; p99: number }> {
  // Every quote needs its own quoteId (the webhook refuses to answer one twice); the counter is the
  // only thing that changes, so building the body costs the generator next to nothing.
  let n = 0;
  const r = await autocannon({
    url: `${url}/quote`,
    connections,
    duration: tputS,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        setupRequest: (req) => ({
          ...req,
          body: quoteBody.replace(QUOTE_ID, `${QUOTE_ID.slice(0, 24)}${String(n++).padStart(12, "0")}`),
        }),
      },
    ],
  });
  return { rps: r.requests.average, non2xx: r.non2xx + r.errors, p99: r.latency.p99 };
}

/** The shipped config with every pair priced from Redis, and a publisher that keeps those prices moving. */
function redisPricedConfig(file: FileConfig): FileConfig {
  return {
    ...file,
    priceSources: {
      ...file.priceSources,
      engine: {
        kind: "redis",
        keyPrefix: "bench:price:",
        channel: "bench:prices",
        maxAgeMs: 5_000,
        pollMs: 500,
      },
    },
    pairs: file.pairs.map((p) => ({ ...p, priceSource: "engine" })),
  };
}

function startPublisher(url: string, file: FileConfig): { stop(): Promise<void>; ready: Promise<void> } {
  const redis = new Redis(url);
  const statics = file.priceSources.static;
  if (statics?.kind !== "static")
    throw new Error("bench: the shipped config must have static prices to start from");
  let tick = 0;
  const publishAll = async () => {
    tick++;
    await Promise.all(
      Object.entries(statics.prices).map(([pair, mid]) => {
        // Nudge the last digit so every update is a real change; the string stays an exact decimal.
        const moved = `${mid}${tick % 10}`;
        return publishPrice(
          redis,
          pair,
          { ts: Date.now(), mid: moved },
          { keyPrefix: "bench:price:", channel: "bench:prices" },
        );
      }),
    );
  };
  const ready = publishAll();
  const timer = setInterval(() => void publishAll(), 100);
  return {
    ready,
    async stop() {
      clearInterval(timer);
      await redis.quit();
    },
  };
}

async function main(): Promise<void> {
  const redis = await startRedis();
  const logDir = join(REPO_ROOT, "results", "bench");
  // CONFIG, when set, as the load test reads it (e.g. a copy with "quoteStoreFormat": "full").
  const shipped = parseFileConfig(
    JSON.parse(readFileSync(process.env.CONFIG ?? DEFAULT_CONFIG_PATH, "utf8")),
  );
  const file = priceSource === "redis" ? redisPricedConfig(shipped) : shipped;
  const configPath = join(mkdtempSync(join(os.tmpdir(), "rfq-bench-config-")), "config.json");
  writeFileSync(configPath, JSON.stringify(file));
  const publisher = priceSource === "redis" ? startPublisher(redis.url, shipped) : undefined;
  await publisher?.ready;
  const [wPort, bPort] = [await freePort(), await freePort()];
  const webhook = spawnTs(
    "webhook",
    "src/main.ts",
    {
      PORT: String(wPort),
      HOST: "127.0.0.1",
      ADMIN_PORT: String(await freePort()),
      REDIS_URL: redis.url,
      CONFIG: configPath,
      LOG_LEVEL: String(args["log-level"]),
      DATA_DIR: mkdtempSync(join(os.tmpdir(), "rfq-bench-")),
      LEDGER: "off",
      // The paper setup with Redis, on purpose.
      PAPER: "1",
    },
    join(logDir, "webhook.log"),
  );
  const bare = spawnTs("bare-hono", "bench/bare-hono.ts", { PORT: String(bPort) }, join(logDir, "bare.log"));
  const wUrl = `http://127.0.0.1:${wPort}`;
  const bUrl = `http://127.0.0.1:${bPort}`;
  try {
    await waitForHttp(`${wUrl}/ready`, webhook);
    await waitForHttp(`${bUrl}/health`, bare);

    // Redis memory per stored quote: used_memory and key count around the fixed-rate run (nothing
    // expires during it: a quote lives quoteTtlMs + quoteRetainAfterExpiryMs).
    const probe = new Redis(redis.url);
    const usedMemory = async () =>
      Number(/used_memory:(\d+)/.exec(await probe.info("memory"))?.[1] ?? Number.NaN);
    const [mem0, keys0] = [await usedMemory(), await probe.dbsize()];

    // Request sizes come from the static prices, which the Redis publisher starts from.
    const mix = buildMix(shipped, Math.ceil(rate * (durationS + warmupS)) + 1, DEFAULT_MIX);
    const fixed = await runOpenLoop(mix, {
      url: new URL(`${wUrl}/quote`),
      rate,
      durationS,
      warmupS,
      budgetMs: 250,
      requestTimeoutMs: 2_000,
      maxSockets: 128,
    });
    const lat = summarize(fixed.latencyMs);
    const counts = new Map<number, number>();
    for (const o of fixed.outcome) counts.set(o, (counts.get(o) ?? 0) + 1);
    const named = Object.fromEntries(Object.entries(Outcome).map(([k, v]) => [k, counts.get(v) ?? 0]));
    const [mem1, keys1] = [await usedMemory(), await probe.dbsize()];
    probe.disconnect();
    const storedQuotes = keys1 - keys0;
    const bytesPerQuote = storedQuotes > 0 ? (mem1 - mem0) / storedQuotes : Number.NaN;
    const lifeS = (file.limits.quoteTtlMs + file.limits.quoteRetainAfterExpiryMs) / 1000;

    // Bare first, then the webhook, each after the other has gone quiet.
    const bareT = await throughput(bUrl);
    const hookT = await throughput(wUrl);
    const ratio = hookT.rps / bareT.rps;

    const f = (x: number) => x.toFixed(2);
    console.log(
      `\nquote benchmark: ${os.cpus().length} cores, node ${process.version}, Redis store, ${priceSource} prices, inventory checks on, log level ${args["log-level"]}`,
    );
    console.log(`fixed rate ${rate}/s for ${durationS} s (open loop, ${lat.count} measured):`);
    console.log(
      `  p50 ${f(lat.p50)} ms  p90 ${f(lat.p90)} ms  p99 ${f(lat.p99)} ms  p99.9 ${f(lat.p999)} ms  max ${f(lat.max)} ms`,
    );
    console.log(`  outcomes ${JSON.stringify(named)}`);
    console.log(`  target p99 < 10 ms: ${lat.p99 < 10 ? "met" : "NOT met"}`);
    console.log(
      `Redis memory: ${bytesPerQuote.toFixed(0)} bytes per stored quote (${storedQuotes} keys, +${((mem1 - mem0) / 1e6).toFixed(1)} MB used_memory); ` +
        `a quote lives ${lifeS} s (quoteTtlMs + quoteRetainAfterExpiryMs), so a steady 1,000 quotes/s holds ` +
        `${((bytesPerQuote * 1000 * lifeS) / 1e6).toFixed(0)} MB, 5,000/s ${((bytesPerQuote * 5000 * lifeS) / 1e6).toFixed(0)} MB`,
    );
    console.log(`max throughput (${connections} connections, ${tputS} s each):`);
    console.log(
      `  bare Hono ${bareT.rps.toFixed(0)} req/s, webhook ${hookT.rps.toFixed(0)} req/s (webhook non-2xx ${hookT.non2xx})`,
    );
    console.log(
      `  ratio webhook/bare ${ratio.toFixed(2)}  target >= 0.5: ${ratio >= 0.5 ? "met" : "NOT met"}`,
    );
  } finally {
    await Promise.all([webhook.stop(), bare.stop()]);
    await publisher?.stop();
    await redis.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

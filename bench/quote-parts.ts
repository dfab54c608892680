/**
 * Where the quote listener's CPU goes (`npm run bench:quote-parts`): the store's round trip, the
 * webhook's own work, and what any listener pays to read a body and answer.
 *
 * Three variants run in this one process, driven with the harness of `bench:quote-ab`
 * (bench/listener-harness.ts: mock requests and responses, so Node's HTTP parser and socket writes
 * are left out):
 *
 *   redis    the working tree's build as `npm start` composes it, storing quotes in a throwaway Redis
 *   memory   the same build with the in-memory quote store (no Redis)
 *   parse    a listener that only reads the body, parses it and answers a small JSON object
 *
 * They take turns in chunks of the load test's request mix, in an order that alternates, so that the
 * machine's drift cancels out of the differences taken chunk by chunk: redis − memory is what
 * storing each quote in Redis costs the webhook's process, memory − parse what the webhook's own work
 * costs beyond reading a body and answering.
 *
 * The store's writes of one turn of the event loop leave in one write (src/redis/coalesce.ts), so
 * redis − memory depends on how many requests are in flight: with one, every quote pays a whole
 * round trip (the write, the wake-up and the read of the reply); with many, they share it and what
 * is left is the client's own work per command. Each `--concurrency` is measured in turn.
 *
 *   npm run bench:quote-parts
 *   taskset -c 1 npm run bench:quote-parts -- --concurrency 1,16 --api-key k0123456789abcdef
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseArgs } from "../src/cli/args.ts";
import { runMain } from "../src/cli/run.ts";
import { ensureBuilt, REPO_ROOT, startRedis } from "../tooling/processes.ts";
import {
  type Build,
  composeBuild,
  cpuPerRequest,
  median,
  requestBodies,
  statusCounts,
  takeTurns,
} from "./listener-harness.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:quote-parts",
  summary:
    "The quote listener's CPU per request with the Redis store, with the in-memory store and for a\n" +
    "listener that only parses the body, in one process, taking turns in chunks.",
  flags: {
    concurrency: {
      type: "string",
      value: "LIST",
      default: "1,4,16,64",
      description: "requests in flight, each measured in turn",
    },
    rounds: { type: "string", value: "N", default: "12", description: "chunks per variant and concurrency" },
    chunk: { type: "string", value: "N", default: "4000", description: "requests per chunk" },
    "api-key": { type: "string", value: "KEY", description: "API_KEY, sent as X-API-KEY" },
  },
});

/** Reads the body, parses it and answers a small JSON object: the least any quote listener does. */
function parseOnlyListener(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (d: Buffer) => chunks.push(d));
  req.on("end", () => {
    const b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    const text = JSON.stringify({ requestId: b.requestId, quoteId: b.quoteId, amountOut: "1" });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
}

async function main(): Promise<number> {
  const levels = String(args.concurrency)
    .split(",")
    .map((x) => Number(x.trim()));
  if (levels.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--concurrency: a list of positive integers, got "${args.concurrency}"`);
  const rounds = Number(args.rounds);
  const chunk = Number(args.chunk);
  const apiKey = args["api-key"];

  // The build measured is dist/, as `npm start` runs it: rebuilt first when stale.
  ensureBuilt();
  const redis = await startRedis();
  const variants: Build[] = [];
  try {
    variants.push(
      await composeBuild("redis", REPO_ROOT, redis.url, apiKey),
      await composeBuild("memory", REPO_ROOT, undefined, apiKey),
    );
    const basePath = (variants[0] as Build).path;
    variants.push({ name: "parse", listener: parseOnlyListener, path: basePath, statuses: new Map() });
    const next = requestBodies();
    console.log(
      `quote listener, CPU per request (user + system), median of ${rounds} chunks of ${chunk}${apiKey ? ", with an API key" : ""}:`,
    );
    console.log("  in flight   redis      memory     parse      redis − memory   memory − parse");
    for (const concurrency of levels) {
      const run = (t: Build) => cpuPerRequest(t, next, { chunk, concurrency, apiKey });
      const [redisCpu, memoryCpu, parseCpu] = (await takeTurns(variants, { rounds, warmups: 1 }, run)) as [
        number[],
        number[],
        number[],
      ];
      const diff = (x: number[], y: number[]) => median(x.map((v, i) => v - (y[i] as number))).toFixed(1);
      const med = (x: number[]) => `${median(x).toFixed(1)} µs`.padEnd(11);
      console.log(
        `  ${String(concurrency).padEnd(12)}${med(redisCpu)}${med(memoryCpu)}${med(parseCpu)}` +
          `${`${diff(redisCpu, memoryCpu)} µs`.padEnd(17)}${diff(memoryCpu, parseCpu)} µs`,
      );
    }
    const [r, m] = variants as [Build, Build];
    // The two builds must have answered alike, or the difference is not the store's alone.
    console.log(`answers at ${levels.at(-1)} in flight: redis ${statusCounts(r)}; memory ${statusCounts(m)}`);
  } finally {
    for (const t of variants) await t.close?.();
    await redis.stop();
  }
  return 0;
}

runMain(main);

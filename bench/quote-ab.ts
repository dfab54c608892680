/**
 * Paired A/B of the quote path's CPU between two builds, in one process (`npm run bench:quote-ab`).
 *
 * On these machines the CPU a load test measures per quote moves by 25% or more between runs a minute
 * apart (the hypervisor's neighbours), so a change worth 2-5% cannot be seen by comparing two load
 * tests. Here both builds run in this one process, each composed as `npm start` composes it (its own
 * `dist/`, config and metrics; a throwaway Redis for both), and their operator listeners are driven
 * alternately in chunks of the load test's request mix: whatever the machine does, it does to both
 * within the same second, and the paired per-chunk ratio cancels it.
 *
 * What it measures: the listener's own work for POST /quote (auth, deadline and shedding, body
 * read, parse and validation, pricing, the store's put through the real Redis client, the answer's
 * serialisation, metrics), with Node's HTTP parser and socket writes left out (they are Node's, the
 * same in both builds). Process CPU per request (user + system), so the Redis client's socket work
 * counts.
 *
 *   npm run bench:quote-ab -- --base HEAD~3            # that commit against the working tree
 *   taskset -c 1 npm run bench:quote-ab -- --base main --api-key k   # pinned; with a key, as the operator sends
 *
 * `--http RATE` measures the whole request instead: each build runs as its own process, as `npm start`
 * runs it (bench/process-harness.ts), both on the same CPU with this generator and Redis on the other,
 * and they take turns at RATE requests per second, open-loop, in windows of `--seconds`. The figures
 * then include Node's HTTP parser and socket writes, and Redis' own CPU per request is reported
 * beside them. Noisier per window than the in-process chunks (a window is a few seconds of a shared
 * machine), so run it with the default 40 rounds, and an identical pair (`--base HEAD` on a clean
 * tree) beside the change.
 *
 *   npm run bench:quote-ab -- --base HEAD~1 --http 4000 --api-key k   # whole requests, 4,000/s
 *
 * `--b-redis-socket` (with `--http`) has B reach the shared Redis over its unix socket while A stays
 * on loopback TCP: with `--base HEAD` on a clean tree, the transport is the only difference.
 *
 * `--base` is built in a temporary git worktree with this tree's node_modules; the working tree's
 * build is `dist/` (rebuilt first when stale). Each chunk takes the next requests of the one mix, so
 * both builds answer the same kinds of request in the same shares; their status counts are printed,
 * and a gap between them larger than the mix's own spread (a few per thousand) means the builds
 * answer differently and the figures compare different work.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "../src/cli/args.ts";
import { runMain } from "../src/cli/run.ts";
import { ensureBuilt, pinProcesses, pinSplit, REPO_ROOT, startRedis } from "../tooling/processes.ts";
import {
  type Build,
  composeBuild,
  cpuPerRequest,
  median,
  pairedRatios,
  requestBodies,
  statusCounts,
  takeTurns,
} from "./listener-harness.ts";
import { openLoopWindow, type ProcessBuild, startBuild } from "./process-harness.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:quote-ab",
  summary:
    "Paired A/B of the quote listener's CPU per request: a git ref's build against the working tree's,\n" +
    "in one process, driven alternately in chunks so that the machine's drift cancels.",
  flags: {
    base: { type: "string", value: "REF", description: "the git ref to compare against (required)" },
    rounds: { type: "string", value: "N", default: "40", description: "chunks per build" },
    chunk: { type: "string", value: "N", default: "4000", description: "requests per chunk" },
    concurrency: { type: "string", value: "N", default: "16", description: "requests in flight" },
    "api-key": { type: "string", value: "KEY", description: "API_KEY for both, sent as X-API-KEY" },
    http: {
      type: "string",
      value: "RATE",
      description:
        "whole requests instead: each build as its own process, pinned, taking turns at RATE requests/s (--chunk and --concurrency unused)",
    },
    "b-redis-socket": {
      type: "boolean",
      description: "--http: B reaches the shared Redis over its unix socket, A over loopback TCP",
    },
    seconds: {
      type: "string",
      value: "S",
      default: "1.5",
      description: "--http: measured seconds per window (after 0.5 s unmeasured)",
    },
  },
});

function run(cmd: string, argv: string[], cwd: string): void {
  const r = spawnSync(cmd, argv, { cwd, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} (in ${cwd}) exited ${r.status}`);
}

async function main(): Promise<number> {
  if (!args.base) throw new Error("--base REF: the git ref to compare the working tree against");
  const rounds = Number(args.rounds);
  const chunk = Number(args.chunk);
  const concurrency = Number(args.concurrency);
  const apiKey = args["api-key"];

  const bSocket = args["b-redis-socket"] === true;
  if (bSocket && args.http === undefined) throw new Error("--b-redis-socket: only with --http RATE");
  ensureBuilt();
  const worktree = mkdtempSync(join(tmpdir(), "quote-ab-"));
  const redis = await startRedis({ socket: bSocket });
  const builds: Build[] = [];
  try {
    run("git", ["worktree", "add", "--detach", "--force", worktree, args.base], REPO_ROOT);
    if (!existsSync(join(worktree, "node_modules")))
      symlinkSync(join(REPO_ROOT, "node_modules"), join(worktree, "node_modules"));
    run("node", ["scripts/build.mjs"], worktree);

    if (args.http !== undefined) {
      await wholeRequests(worktree, redis, {
        bSocket,
        rounds,
        apiKey,
        rate: Number(args.http),
        seconds: Number(args.seconds),
      });
      return 0;
    }
    const a = await composeBuild(`base (${args.base})`, worktree, redis.url, apiKey);
    builds.push(a);
    const b = await composeBuild("working tree", REPO_ROOT, redis.url, apiKey);
    builds.push(b);
    const next = requestBodies();
    /** CPU per request (µs) over one chunk of requests through `t`'s listener. */
    const runChunk = (t: Build) => cpuPerRequest(t, next, { chunk, concurrency, apiKey });

    const [ua, ub] = (await takeTurns([a, b], { rounds, warmups: 4 }, runChunk)) as [number[], number[]];
    const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
    console.log(
      [
        `quote listener, CPU per request (user + system), ${rounds} chunks of ${chunk} each, ${concurrency} in flight${apiKey ? ", with an API key" : ""}:`,
        `  A ${a.name}: ${mean(ua).toFixed(2)} µs   (answers ${statusCounts(a)})`,
        `  B ${b.name}: ${mean(ub).toFixed(2)} µs   (answers ${statusCounts(b)})`,
        `  B / A: ${(mean(ub) / mean(ua)).toFixed(3)} over the run; paired by chunk: ${pairedRatios(ua, ub)}`,
      ].join("\n"),
    );
  } finally {
    for (const t of builds) await t.close?.();
    spawnSync("git", ["worktree", "remove", "--force", worktree], { cwd: REPO_ROOT });
    rmSync(worktree, { recursive: true, force: true });
    await redis.stop();
  }
  return 0;
}

/** `--http RATE`: both builds as processes, on one CPU, taking turns at RATE (process-harness.ts). */
async function wholeRequests(
  worktree: string,
  redis: { url: string; tcpUrl?: string | undefined; pid?: number | undefined },
  o: { bSocket: boolean; rounds: number; rate: number; seconds: number; apiKey: string | undefined },
): Promise<void> {
  for (const [flag, v] of [
    ["--http", o.rate],
    ["--seconds", o.seconds],
  ] as const)
    if (!(Number.isFinite(v) && v > 0)) throw new Error(`${flag}: expected a positive number, got ${v}`);
  const split = pinSplit(1);
  const logDir = mkdtempSync(join(tmpdir(), "quote-ab-logs-"));
  const builds: ProcessBuild[] = [];
  try {
    // With --b-redis-socket, Redis listens on both: A on TCP, B on the unix socket.
    const tcp = redis.tcpUrl ?? redis.url;
    for (const [name, root, redisUrl] of [
      [`base (${args.base})`, worktree, tcp],
      [`working tree${o.bSocket ? ", Redis over its unix socket" : ""}`, REPO_ROOT, redis.url],
    ] as const)
      builds.push(
        await startBuild(name, root, {
          redisUrl,
          apiKey: o.apiKey,
          logPath: join(logDir, `${builds.length ? "b" : "a"}.log`),
          cpuList: split.server,
        }),
      );
    pinProcesses([process.pid, ...(redis.pid ? [redis.pid] : [])], split.rest);
    const [a, b] = builds as [ProcessBuild, ProcessBuild];
    const window = openLoopWindow({
      rate: o.rate,
      seconds: o.seconds,
      apiKey: o.apiKey,
      redisPid: redis.pid,
    });
    const [ua, ub] = (await takeTurns([a, b], { rounds: o.rounds, warmups: 2 }, window)) as [
      number[],
      number[],
    ];
    // Redis is read in every window, the warm-ups too: the last `rounds` are the measured ones.
    const redisMedian = (t: ProcessBuild) => median(t.redisUs.slice(-o.rounds)).toFixed(1);
    console.log(
      [
        `whole requests, process CPU per request (user + system), ${o.rounds} windows of ${o.seconds} s at ${o.rate}/s each, pinned to CPU ${split.server}${o.apiKey ? ", with an API key" : ""}:`,
        `  A ${a.name}: median ${median(ua).toFixed(1)} µs, Redis ${redisMedian(a)} µs   (answers ${statusCounts(a)})`,
        `  B ${b.name}: median ${median(ub).toFixed(1)} µs, Redis ${redisMedian(b)} µs   (answers ${statusCounts(b)})`,
        `  B / A paired by window: ${pairedRatios(ua, ub)}`,
      ].join("\n"),
    );
  } finally {
    for (const t of builds) await t.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
}

runMain(main);

/**
 * `npm run loadtest`: operator-shaped load against the webhook, then a swap phase of full fills.
 *
 * Quote phase: open-loop POST /quote at a constant rate (see open-loop.ts) straight to the webhook,
 * as the operator's fan-out sends them. Swap phase: N complete fills through the operator simulator
 * (order, sign as the taker, execute), each of which must land.
 *
 * By default the whole stack is started here, each part in its own process so this generator does
 * not share an event loop with what it measures: a throwaway Redis (or REDIS_URL), the Redis-backed
 * webhook, and for the swap phase the local chain server and the operator simulator.
 *
 *   npm run loadtest -- --rate 2000 --duration 60 --swaps 200
 *   npm run loadtest -- --webhook http://127.0.0.1:8080 --swaps 0      (an already running webhook)
 *   npm run loadtest -- --workers 2 --instances 2 --redis-cluster       (2 instances x 2 workers, on a cluster)
 *   npm run loadtest -- --rate 5000 --redis-socket --baseline store     (Redis on a unix socket, as beside the webhook on one host)
 *   npm run loadtest -- --sweep --workers 1,2                            (rate sweep with baselines: sweep.ts)
 *   npm run loadtest -- --rate 5000 --baseline http     (the quote phase again on bare node:http: baseline.ts)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import { parseArgs } from "../../src/cli/args.ts";
import {
  cpuSecondsOf,
  machineCpuSeconds,
  nodeDescendantPids,
  REPO_ROOT,
  residentMemoryOf,
  startRedisCluster,
} from "../../tooling/processes.ts";
import { type Stack, startStack } from "../operator/stack.ts";
import { type BaselineKind, type BaselineResult, parseBaselineKind, runBaselinePhase } from "./baseline.ts";
import { checkLedger, swapCallRecorder, waitForQuietJournal } from "./ledger-check.ts";
import { buildMix, DEFAULT_MIX } from "./mix.ts";
import { OUTCOME_NAMES, runOpenLoop } from "./open-loop.ts";
import { type Check, type LoadReport, renderHtml, textSummary } from "./report.ts";
import { series, summarize } from "./stats.ts";
import { runSwapPhase, SWAP_TAKER_FUNDING } from "./swaps.ts";
import { runSweep, type Target, writeSweep } from "./sweep.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run loadtest",
  summary:
    "Operator-shaped load: open-loop POST /quote at a constant rate (latency from each request's\n" +
    "scheduled send), then a swap phase of full fills through the operator simulator. Starts its own\n" +
    "stack (throwaway Redis or REDIS_URL, webhook, local chain, operator) unless --webhook is given.\n" +
    "Report (text, JSON, HTML) under --out.",
  flags: {
    rate: { type: "string", value: "N", default: "2000", description: "quotes per second" },
    duration: { type: "string", value: "S", default: "60", description: "measured seconds" },
    warmup: { type: "string", value: "S", default: "5", description: "warm-up seconds (not measured)" },
    budget: { type: "string", value: "MS", default: "250", description: "the operator's quote budget" },
    swaps: {
      type: "string",
      value: "N",
      default: "200",
      description: "full fills in the swap phase (0: none)",
    },
    "swap-concurrency": { type: "string", value: "N", default: "4", description: "fills in flight at once" },
    webhook: { type: "string", value: "URL", description: "an already running webhook (its basePath URL)" },
    "api-key": { type: "string", value: "KEY", description: "the webhook's API_KEY" },
    "log-level": {
      type: "string",
      value: "LEVEL",
      default: "info",
      description: "the started webhook's LOG_LEVEL",
    },
    "max-sockets": { type: "string", value: "N", default: "128", description: "the generator's socket pool" },
    out: { type: "string", value: "DIR", default: join(REPO_ROOT, "results"), description: "report folder" },
    "p99-target": { type: "string", value: "MS", default: "10", description: "the p99 the report checks" },
    "p999-target": {
      type: "string",
      value: "MS",
      default: "20",
      description: "the p99.9 the report checks",
    },
    "no-redis": { type: "boolean", description: "accepted for compatibility; the stack always uses Redis" },
    workers: {
      type: "string",
      value: "N[,M]",
      default: "1",
      description: "the webhook's WORKERS (a list with --sweep: each swept; > 1 runs with LEDGER=off)",
    },
    instances: {
      type: "string",
      value: "N",
      default: "1",
      description: "webhook processes sharing Redis and the chain; requests spread round-robin",
    },
    "redis-cluster": { type: "boolean", description: "run on a throwaway 3-master Redis Cluster" },
    "redis-socket": {
      type: "boolean",
      description:
        "the throwaway Redis (the webhook's, and the store baseline's) on a unix socket instead of loopback TCP",
    },
    "from-source": {
      type: "boolean",
      description: "run the webhook from source under tsx (default: the build, as `npm start` runs it)",
    },
    sweep: {
      type: "boolean",
      description: "open-loop rate sweep (--rates) for the webhook and bare baselines, report under --out",
    },
    rates: {
      type: "string",
      value: "LIST",
      default: "1000,2000,3000,5000,6000,7000,8000,9000,10000,12000,14000,16000,20000,24000",
      description: "--sweep: the rate steps, each until one misses",
    },
    "step-duration": {
      type: "string",
      value: "S",
      default: "10",
      description: "--sweep: measured seconds per step",
    },
    "startup-load": {
      type: "string",
      value: "S",
      default: "10",
      description: "--sweep: seconds each target runs at the first rate once started, shown, not counted",
    },
    "step-retries": {
      type: "string",
      value: "N",
      default: "1",
      description: "--sweep: times a missed step is run again before the target's sweep stops",
    },
    baselines: {
      type: "string",
      value: "LIST",
      description:
        '--sweep: bare servers swept beside the webhook (http, hono, store: node:http + the quote store\'s put; none: ""; default http,hono)',
    },
    baseline: {
      type: "string",
      value: "http|hono|store|none",
      default: "none",
      description:
        "after the quote phase, the same phase against a bare server on the same workers (beside, not in, the checks)",
    },
    "kill-webhook-at": {
      type: "string",
      value: "N",
      description: "SIGKILL the webhook once swap N is in flight, start it again (implies --check-ledger)",
    },
    "check-ledger": {
      type: "boolean",
      description: "after the swap phase, check the fill ledger and `npm run report` against the chain",
    },
  },
});

const num = (name: keyof typeof args) => {
  const v = Number(args[name]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name}: must be a non-negative number`);
  return v;
};

const list = (name: keyof typeof args) =>
  String(args[name] ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * `--redis-socket`: for the throwaway redis-server this command starts, and only for it (REDIS_URL
 * names a Redis of its own, `unix:///path/redis.sock` for a socket; a cluster is reached over TCP).
 */
function redisSocketAsked(): boolean {
  if (args["redis-socket"] !== true) return false;
  if (args["redis-cluster"]) throw new Error("--redis-socket: a single Redis node only, not --redis-cluster");
  if (args.webhook) throw new Error("--redis-socket: needs the stack this command starts (not --webhook)");
  if (process.env.REDIS_URL)
    throw new Error(
      "--redis-socket: applies to the throwaway redis-server, and REDIS_URL is set (for a socket of your own: REDIS_URL=unix:///path/redis.sock)",
    );
  return true;
}

/**
 * Interrupted (Ctrl-C, or SIGTERM from a timeout, CI or an orchestrator), `stop` takes down what this
 * run started instead of leaving it running on orphaned, then the process exits 130 or 143.
 */
function onInterrupt(stop: () => Promise<void>): void {
  const exit = (code: number) => () =>
    void stop().then(
      () => process.exit(code),
      () => process.exit(code),
    );
  process.on("SIGINT", exit(130));
  process.on("SIGTERM", exit(143));
}

async function sweepMain(): Promise<void> {
  const configPath = process.env.CONFIG ?? DEFAULT_CONFIG_PATH;
  const file = parseFileConfig(JSON.parse(readFileSync(configPath, "utf8")), configPath);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const outDir = join(args.out as string, `sweep-${stamp}`);
  const rates = list("rates").map(Number);
  const workers = list("workers").map(Number);
  if (rates.some((r) => !(r > 0)) || workers.some((w) => !(w >= 1)))
    throw new Error("--rates and --workers: positive numbers, comma-separated");
  // The store baseline runs on one Redis node: by default it is left out on a cluster, and refused
  // there when asked for.
  const cluster = args["redis-cluster"] === true;
  const asked = args.baselines === undefined ? ["http", "hono"] : list("baselines");
  const baselines = asked
    .map((b) => parseBaselineKind(b, "--baselines"))
    .filter((b): b is BaselineKind => b !== undefined);
  if (baselines.includes("store") && cluster)
    throw new Error("--baselines store runs on a single Redis node: leave it out with --redis-cluster");
  // Interrupted, the targets being swept (their servers, and for the webhook its Redis and chain) go
  // down with the sweep, even one still starting.
  let current: Promise<Target>[] = [];
  onInterrupt(async () => {
    await Promise.all(
      current.map(async (starting) => {
        const t = await starting.catch(() => undefined);
        await t?.close();
      }),
    );
  });
  const report = await runSweep({
    file,
    outDir,
    rates,
    stepS: num("step-duration"),
    retries: num("step-retries"),
    warmupS: Math.min(num("warmup"), 3),
    startupS: num("startup-load"),
    budgetMs: num("budget"),
    workers,
    instances: Math.max(1, num("instances")),
    redisCluster: args["redis-cluster"] === true,
    ...(redisSocketAsked() ? { redisSocket: true } : {}),
    fromSource: args["from-source"] === true,
    baselines,
    maxSockets: num("max-sockets"),
    say: (l) => process.stdout.write(`${l}\n`),
    track: (targets) => {
      current = targets;
    },
  });
  const html = writeSweep(report, outDir);
  process.stdout.write(`\nreport: ${html}\n`);
}

async function main(): Promise<void> {
  if (args.sweep) return sweepMain();
  const rate = num("rate");
  const durationS = num("duration");
  const warmupS = num("warmup");
  const budgetMs = num("budget");
  const swaps = num("swaps");
  const p99Target = num("p99-target");
  const p999Target = num("p999-target");
  const killAt = args["kill-webhook-at"] === undefined ? undefined : num("kill-webhook-at");
  if (killAt !== undefined && (!Number.isInteger(killAt) || killAt >= swaps))
    throw new Error(`--kill-webhook-at: must be a whole number below --swaps (${swaps})`);
  if (killAt !== undefined && args.webhook)
    throw new Error("--kill-webhook-at: needs the stack this command starts (not --webhook)");
  const checkLedgerToo = killAt !== undefined || args["check-ledger"] === true;
  const baselineKind = parseBaselineKind(String(args.baseline));
  const redisSocket = redisSocketAsked();
  const workers = Number(list("workers")[0] ?? 1);
  const recorder = swapCallRecorder();
  const startedMs = Date.now();
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const outDir = join(args.out as string, `loadtest-${stamp}`);
  mkdirSync(outDir, { recursive: true });

  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  // Interrupted: the stack it started (Redis, the chain, the webhook, a cluster) goes down with it.
  onInterrupt(cleanup);

  try {
    const configPath = process.env.CONFIG ?? DEFAULT_CONFIG_PATH;
    const file = parseFileConfig(JSON.parse(readFileSync(configPath, "utf8")), configPath);

    let webhookUrl = args.webhook;
    let store = "as running";
    let pids: Record<string, number | undefined> = {};
    let stack: Stack | undefined;
    let clusterPids: number[] = [];
    let clusterNodes: string | undefined;
    let urls: URL[] = [];
    if (!webhookUrl) {
      // WEBHOOK_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the webhook under load.
      const nodeArgs = process.env.WEBHOOK_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
      const webhookEnv: Record<string, string> = {
        // More than one worker needs the ledger outside the process (the embedded one is single-process).
        ...(workers > 1 ? { WORKERS: String(workers), LEDGER: "off" } : {}),
      };
      const takers = Math.max(1, Math.min(swaps, num("swap-concurrency") * 2));
      if (args["redis-cluster"]) {
        process.stdout.write("  starting a throwaway 3-master Redis Cluster\n");
        const cluster = await startRedisCluster(3);
        cleanups.push(cluster.stop);
        clusterPids = cluster.pids;
        clusterNodes = cluster.nodes;
      }
      stack = await startStack({
        ...(clusterNodes ? { redisClusterNodes: clusterNodes } : {}),
        ...(redisSocket ? { redisSocket: true } : {}),
        webhookEnv,
        webhookInstances: Math.max(1, num("instances")),
        dir: join(outDir, "stack"),
        takers: Array.from({ length: swaps > 0 ? takers : 0 }, (_, i) => ({
          name: String(i + 1),
          ...SWAP_TAKER_FUNDING,
        })),
        webhookLogLevel: args["log-level"] as string,
        ...(args["api-key"] ? { webhookApiKey: args["api-key"] } : {}),
        webhookNodeArgs: nodeArgs,
        webhookBuilt: args["from-source"] !== true,
        ...(checkLedgerToo
          ? {
              operator: {
                onOutcome: recorder.onOutcome,
                // The swaps a deliberate kill cuts would get the maker suspended for fill rate by the
                // operator stand-in, and the rest of the phase would get no quote: no suspension then.
                ...(killAt !== undefined ? { fillRate: { threshold: 0 } } : {}),
              },
            }
          : {}),
        say: (line) => process.stdout.write(`  ${line}\n`),
      });
      cleanups.push(stack.close);
      webhookUrl = stack.webhookUrl;
      urls = stack.webhookUrls.map((u) => new URL(`${u.replace(/\/+$/, "")}/quote`));
      // Per process: each webhook instance with its workers (node:cluster children), Redis, the chain.
      pids = { ...stack.pids };
      for (const [k, pid] of Object.entries(stack.pids)) {
        if (!k.startsWith("webhook") || pid === undefined) continue;
        nodeDescendantPids(pid).forEach((c, i) => {
          pids[`${k} worker ${i + 1}`] = c;
        });
      }
      clusterPids.forEach((p, i) => {
        pids[`redis cluster node ${i + 1}`] = p;
      });
      store = clusterNodes
        ? "redis (throwaway 3-master cluster)"
        : `redis (${process.env.REDIS_URL ? "REDIS_URL" : `throwaway redis-server${redisSocket ? ", unix socket" : ""}`})`;
    }

    const total = Math.round((warmupS + durationS) * rate);
    const mix = buildMix(file, total, { ...DEFAULT_MIX, seed: `loadtest:${stamp}` });
    process.stdout.write(
      `quote phase: ${rate}/s for ${durationS} s after ${warmupS} s warm-up (${total} requests prebuilt)\n`,
    );
    const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSecondsOf(pid)]));
    const genBefore = process.cpuUsage();
    const machineBefore = machineCpuSeconds();
    const q = await runOpenLoop(mix, {
      url: new URL(`${webhookUrl.replace(/\/+$/, "")}/quote`),
      ...(urls.length > 1 ? { urls } : {}),
      rate,
      durationS,
      warmupS,
      budgetMs,
      requestTimeoutMs: 5_000,
      maxSockets: num("max-sockets"),
      ...(args["api-key"] ? { apiKey: args["api-key"] } : {}),
    });

    const gen = process.cpuUsage(genBefore);
    const machineAfter = machineCpuSeconds();
    const cpu: Record<string, string> = {
      generator: `${((gen.user + gen.system) / 1e6).toFixed(2)} s (${((gen.user + gen.system) / total).toFixed(0)} µs/request)`,
    };
    // Each process's CPU over the phase, read once: its line here and its share of the machine below.
    let ours = (gen.user + gen.system) / 1e6;
    for (const [k, pid] of Object.entries(pids)) {
      const after = cpuSecondsOf(pid);
      const before = cpuBefore[k];
      if (after !== undefined && before !== undefined) {
        cpu[k] =
          `${(after - before).toFixed(2)} s (${(((after - before) * 1e6) / total).toFixed(0)} µs/request)`;
        ours += after - before;
      }
    }
    // Each process's resident memory as the phase ends, and its peak so far: what a rate costs in RAM.
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    const memory: Record<string, string> = {};
    for (const [k, pid] of [["generator", process.pid] as const, ...Object.entries(pids)]) {
      const m = residentMemoryOf(pid);
      if (m) memory[k] = `${mib(m.rssBytes)} (peak ${mib(m.peakBytes)})`;
    }
    // Whatever else ran on the machine meanwhile (other builds, tests): the context for the figures.
    if (machineBefore !== undefined && machineAfter !== undefined) {
      const wallS = q.wallMs / 1000;
      // Every CPU of the machine.
      const cores = os.cpus().length;
      const others = Math.max(0, machineAfter.busy - machineBefore.busy - ours);
      cpu["other processes"] =
        `${others.toFixed(2)} s (${((others / wallS) * 100).toFixed(0)}% of one core over the phase)`;
      cpu["machine busy"] =
        `${(((machineAfter.busy - machineBefore.busy) / (wallS * cores)) * 100).toFixed(0)}% of ${cores} cores`;
      // A hypervisor's steal stalls the webhook and the generator at once: the context for a tail.
      cpu["stolen by the hypervisor"] =
        `${(((machineAfter.steal - machineBefore.steal) / (wallS * cores)) * 100).toFixed(1)}% of ${cores} cores`;
    }
    const outcomes: Record<string, number> = Object.fromEntries(OUTCOME_NAMES.map((n) => [n, 0]));
    let within = 0;
    for (let i = 0; i < q.outcome.length; i++) {
      outcomes[OUTCOME_NAMES[q.outcome[i] as number] as string]! += 1;
      const l = q.latencyMs[i] as number;
      if (Number.isFinite(l) && l <= budgetMs) within++;
    }
    const errors = q.outcome.length - outcomes.quoted! - outcomes.noQuote!;
    const latency = summarize(q.latencyMs);
    const measured = q.outcome.length;
    const checks: Check[] = [
      {
        name: "within budget",
        ok: within / measured >= 0.999,
        detail: `${((within / measured) * 100).toFixed(3)}% answered within ${budgetMs} ms of x-request-start (need >= 99.9%)`,
      },
      {
        name: "p99",
        ok: latency.p99 < p99Target,
        detail: `${latency.p99.toFixed(2)} ms (need < ${p99Target} ms)`,
      },
      {
        name: "p99.9",
        ok: latency.p999 < p999Target,
        detail: `${latency.p999.toFixed(2)} ms (need < ${p999Target} ms)`,
      },
      { name: "errors", ok: errors === 0, detail: `${errors} (need 0)` },
    ];

    let baseline: BaselineResult | undefined;
    if (baselineKind) {
      process.stdout.write(
        `baseline phase: the same requests at ${rate}/s against a bare ${baselineKind} server (not checked)\n`,
      );
      baseline = await runBaselinePhase({
        kind: baselineKind,
        workers,
        mix,
        rate,
        durationS,
        warmupS,
        budgetMs,
        maxSockets: num("max-sockets"),
        dir: outDir,
        targets: { p99Ms: p99Target, p999Ms: p999Target },
        ...(redisSocket ? { redisSocket: true } : {}),
      });
    }

    let swapResult: Awaited<ReturnType<typeof runSwapPhase>> | undefined;
    let kill: { atSwap: number; downMs: number } | undefined;
    let ledger: Awaited<ReturnType<typeof checkLedger>> | undefined;
    if (swaps > 0 && stack) {
      process.stdout.write(
        `swap phase: ${swaps} fills through the operator, ${num("swap-concurrency")} at a time\n`,
      );
      const s = stack;
      swapResult = await runSwapPhase({
        operatorUrl: stack.operatorUrl,
        chainUrl: stack.chainUrl,
        takers: stack.takers.map((t) => t.keypair),
        count: swaps,
        concurrency: num("swap-concurrency"),
        ...(killAt !== undefined
          ? {
              faultAt: {
                at: killAt,
                fault: async () => {
                  const t0 = Date.now();
                  await s.killWebhook();
                  process.stdout.write(
                    `  webhook SIGKILLed with swap ${killAt} in flight; starting it again\n`,
                  );
                  await s.startWebhook();
                  kill = { atSwap: killAt, downMs: Date.now() - t0 };
                  process.stdout.write(`  webhook ready again after ${kill.downMs} ms\n`);
                },
              },
            }
          : {}),
      });
      // With a kill, the swaps in flight at that moment may be cut: at most one per worker.
      const mayLose = killAt !== undefined ? num("swap-concurrency") : 0;
      checks.push({
        name: "fills",
        ok: swapResult.landed >= swaps - mayLose && (killAt === undefined || kill !== undefined),
        detail: `${swapResult.landed}/${swaps} landed (need ${mayLose ? `${swaps - mayLose}: the kill may cut the ${mayLose} in flight` : "all"}); operator's fill rate for the maker: ${(stack.operator.fillRate.status("maker").rate * 100).toFixed(1)}%`,
      });
      if (checkLedgerToo) {
        process.stdout.write("ledger check: waiting for the fill journal to settle and drain\n");
        const quiet = await waitForQuietJournal(stack.redis, stack.config, 180_000);
        const stopped = await stack.stopWebhook();
        ledger = await checkLedger({
          calls: recorder.calls,
          chainUrl: stack.chainUrl,
          maker: stack.maker,
          dataDir: join(stack.dir, "webhook-data"),
          configPath,
          fromMs: startedMs,
          journal: quiet,
          webhookExit: stopped,
        });
        const fg = ledger.figures;
        checks.push({
          name: "ledger",
          ok: ledger.ok,
          detail:
            `${fg.decisionRows} decision rows for ${fg.swapCalls} /swap calls (${fg.answered} answered, ${fg.cut} cut by the kill, ${fg.cutWithRow} of them decided); ` +
            `${fg.ledgerLanded} landed fills in the ledger, ${fg.chainFills} on chain; fees owed (report / chain): ` +
            `${
              Object.entries(fg.feesByMint)
                .map(([m, v]) => `${m.slice(0, 4)} ${v.report}/${v.chain}`)
                .join(", ") || "none"
            }` +
            (ledger.ok ? "" : `; problems: ${ledger.problems.slice(0, 5).join("; ")}`),
        });
      }
    } else if (swaps > 0) {
      checks.push({
        name: "fills",
        ok: false,
        detail: "not run: --webhook targets a running webhook without a sandbox stack",
      });
    }

    const report: LoadReport = {
      title: "RFQ webhook load test",
      startedAt: new Date().toISOString(),
      machine: {
        nproc: os.cpus().length,
        cpu: os.cpus()[0]?.model ?? "unknown",
        memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
        node: process.version,
        platform: `${os.platform()} ${os.release()}`,
        loadavgBefore: os
          .loadavg()
          .map((x) => x.toFixed(2))
          .join("/"),
      },
      settings: {
        target: webhookUrl,
        store,
        rate,
        durationS,
        warmupS,
        budgetMs,
        maxSockets: num("max-sockets"),
        workers: args.webhook ? "as running" : workers,
        instances: args.webhook ? 1 : Math.max(1, num("instances")),
        webhookLogLevel: args.webhook ? "as running" : (args["log-level"] as string),
        mix: `unknownMint ${DEFAULT_MIX.unknownMintShare}, oversize ${DEFAULT_MIX.oversizeShare}, taker ${DEFAULT_MIX.takerShare}, exactOut ${DEFAULT_MIX.exactOutShare}, ${DEFAULT_MIX.takers} takers, pairs from ${configPath}`,
        swaps,
        swapConcurrency: num("swap-concurrency"),
        baseline: baselineKind ?? "none",
      },
      quotes: {
        measured,
        measuredFrom: new Date(q.measuredFromEpochMs).toISOString(),
        achievedRatePerS: measured / (durationS || 1),
        outcomes,
        errors,
        latencyMs: latency,
        withinBudget: { count: within, share: within / measured },
        sendLagMs: summarize(q.sendLagMs),
        errorSamples: q.errorSamples,
        series: series(q.scheduledMs, q.latencyMs, durationS > 20 ? 1000 : 250, q.sendLagMs),
        cpu,
        memory,
      },
      ...(swapResult
        ? {
            swaps: {
              requested: swapResult.requested,
              landed: swapResult.landed,
              outcomes: swapResult.outcomes,
              latencyMs: swapResult.latencyMs,
              errorSamples: swapResult.errorSamples,
            },
          }
        : {}),
      ...(kill ? { kill } : {}),
      ...(ledger ? { ledger } : {}),
      ...(baseline ? { baseline } : {}),
      checks,
      pass: checks.every((c) => c.ok),
    };

    writeFileSync(join(outDir, "report.json"), JSON.stringify(report, null, 2));
    writeFileSync(join(outDir, "report.txt"), `${textSummary(report)}\n`);
    writeFileSync(join(outDir, "report.html"), renderHtml(report, budgetMs));
    process.stdout.write(`\n${textSummary(report)}\n\nreport: ${join(outDir, "report.html")}\n`);
    process.exitCode = report.pass ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});

/**
 * `npm run loadtest -- --sweep`: an open-loop rate sweep. For each target (the webhook with each
 * worker count asked for, and the same sweep against a bare node:http server, a bare Hono app and a
 * bare node:http server that also stores each quote through the webhook's quote store, all answering
 * the same request shape on the same number of workers), the rate steps up (`--rates`: 1k, 2k, 3k,
 * 5k, then every 1k/s to 10k, 12k, 14k, 16k, 20k, 24k/s by default) until a step misses the criteria
 * (a missed step is run again `--step-retries` times first); each webhook target then gets one more
 * step at 1.2x the highest rate it held, to show how it degrades past capacity. The targets of one worker
 * count run side by side and take each rate step in turn (webhook, then the bare servers), so that a
 * machine whose speed drifts over the minutes a sweep takes drifts under all of them alike; each is
 * closed as soon as it has missed. Every step records the tail, the outcomes, and the CPU of every
 * process (the webhook's primary and workers, Redis, the chain, this generator) per request. The
 * report (JSON, text, HTML with SVG plots) goes under results/.
 *
 * A step "holds" when p99 < 50 ms, 99.9% of requests are answered (200 or 404) within the budget, no
 * request failed, and at most 0.1% of the quotes that should be priced were not (a fast 404 from
 * shedding is within budget but is not a priced answer).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type { FileConfig } from "../../config/schema.ts";
import {
  type Child,
  cpuSecondsOf,
  descendantPids,
  freePort,
  machineCpuSeconds,
  spawnTs,
  startRedis,
  startRedisCluster,
  waitForHttp,
} from "../../tooling/processes.ts";
import { startStack } from "../operator/stack.ts";
import { buildMix, DEFAULT_MIX, type MixRequest } from "./mix.ts";
import { Outcome, runOpenLoop } from "./open-loop.ts";
import { summarize } from "./stats.ts";

export interface SweepOptions {
  file: FileConfig;
  outDir: string;
  rates: number[];
  stepS: number;
  /**
   * How many times a step that misses is run again before the target's sweep stops (0: never). The
   * step holds if any run of it holds; every run is reported.
   */
  retries: number;
  warmupS: number;
  /**
   * Seconds each target is loaded at the first rate once started, before its first measured step (0:
   * none). Reported as its "start-up" step, never counted: without it the first step measures the
   * process's start-up (code not yet optimised, the garbage of starting), not what it holds.
   */
  startupS: number;
  budgetMs: number;
  /** Worker counts to sweep the webhook (and the baselines) with. */
  workers: number[];
  /** Webhook processes (each with its workers) the generator spreads over. */
  instances: number;
  redisCluster: boolean;
  /** The webhook and the store baseline talk to their throwaway Redis over a unix socket (`--redis-socket`). */
  redisSocket?: boolean;
  /** The webhook from source under tsx instead of the build `npm start` runs. */
  fromSource?: boolean;
  baselines: Exclude<BareKind, "floor">[];
  maxSockets: number;
  say: (line: string) => void;
  /**
   * Told of the targets started and not yet closed (each start may still be under way) whenever that
   * changes: what a signal handler must stop so that nothing the sweep started runs on orphaned.
   */
  track?: (targets: Promise<Target>[]) => void;
}

export interface StepResult {
  target: string;
  rate: number;
  /**
   * "sweep" for the rate steps, "overload" for the steps past the highest rate held (1.2x, 1.5x, 2x,
   * 3x: `OVERLOAD_FACTORS`), "start-up" for the load right after the target starts (`startupS`;
   * shown, not counted).
   */
  kind: "sweep" | "overload" | "start-up";
  /** An overload step's rate as a multiple of the highest rate held. */
  factor?: number;
  /** Set on a step run again after a miss: which retry this is (1, 2, ...). */
  retry?: number;
  measured: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** Answered (200 or 404) within the budget, over all requests. */
  withinBudget: number;
  /** Of the requests that should be priced: priced (200) within the budget. */
  pricedWithinBudget: number;
  /** 404s the mix did not expect (shed, deadline), over the requests that should be priced. */
  unexpectedNoQuote: number;
  errors: number;
  holds: boolean;
  /** CPU per request by process group, µs; and % of one core over the step. */
  cpuUsPerRequest: Record<string, number>;
  cpuCoreShare: Record<string, number>;
  /** Processes per group (e.g. webhook: primary + 2 workers = 3). */
  processes: Record<string, number>;
  sendLagP99: number;
  machineBusyShare?: number;
  /** The share of the machine's cores the hypervisor gave to other guests during the step (steal). */
  stealShare?: number;
}

/**
 * The bare servers (bare.ts): node:http, a bare Hono app, and node:http with the quote store's put
 * (the floor for any webhook that stores each quote in Redis before answering); and `floor`, a fixed
 * 404 with the body unread, which `npm run bench:shed` measures shedding against (never a sweep
 * baseline: it prices nothing, and --baselines does not accept it).
 */
export type BareKind = "http" | "hono" | "store" | "floor";

export const BARE_NAMES: Record<BareKind, string> = {
  http: "bare node:http",
  hono: "bare Hono",
  store: "bare node:http + store",
  floor: "bare node:http, fixed 404",
};

export interface Target {
  name: string;
  workers: number;
  urls: URL[];
  apiKey?: string;
  /** Process groups whose CPU is measured: name -> root pids (descendants included). */
  groups: Record<string, number[]>;
  isBaseline: boolean;
  close(): Promise<void>;
}

const P99_LIMIT_MS = 50;

export function cpuOfGroups(groups: Record<string, number[]>): Record<string, { s: number; n: number }> {
  const out: Record<string, { s: number; n: number }> = {};
  for (const [name, roots] of Object.entries(groups)) {
    let s = 0;
    let n = 0;
    for (const root of roots) {
      for (const pid of [root, ...descendantPids(root)]) {
        const c = cpuSecondsOf(pid);
        if (c !== undefined) {
          s += c;
          n++;
        }
      }
    }
    out[name] = { s, n };
  }
  return out;
}

/**
 * A target built on a resource that `release` frees (a Redis of its own): freed if the build fails,
 * and after the target's own close.
 */
async function onTopOf(release: () => Promise<void>, build: () => Promise<Target>): Promise<Target> {
  let t: Target;
  try {
    t = await build();
  } catch (e) {
    await release();
    throw e;
  }
  return {
    ...t,
    close: async () => {
      await t.close();
      await release();
    },
  };
}

async function startWebhookTarget(o: SweepOptions, workers: number, dir: string): Promise<Target> {
  const cluster = o.redisCluster ? await startRedisCluster(3) : undefined;
  return onTopOf(
    async () => cluster?.stop(),
    async () => {
      const stack = await startStack({
        dir,
        takers: [],
        webhookLogLevel: "warn",
        // No fill ledger: an embedded one is single-process (WORKERS > 1 refuses it), and quotes write none.
        webhookEnv: { WORKERS: String(workers), LEDGER: "off" },
        webhookInstances: o.instances,
        webhookBuilt: !o.fromSource,
        webhookNodeArgs: process.env.WEBHOOK_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
        ...(cluster ? { redisClusterNodes: cluster.nodes } : {}),
        ...(o.redisSocket ? { redisSocket: true } : {}),
        say: (l) => o.say(`    ${l}`),
      });
      const webhookPids = stack.children
        .filter((c) => c.name.startsWith("webhook"))
        .map((c) => c.proc.pid)
        .filter((p): p is number => p !== undefined);
      const redisPids = cluster ? cluster.pids : stack.pids.redis ? [stack.pids.redis] : [];
      return {
        name: `webhook ×${workers}${o.instances > 1 ? ` ×${o.instances} instances` : ""}${cluster ? " (cluster)" : ""}`,
        workers,
        urls: stack.webhookUrls.map((u) => new URL(`${u.replace(/\/+$/, "")}/quote`)),
        groups: {
          webhook: webhookPids,
          redis: redisPids,
          chain: stack.pids.chain ? [stack.pids.chain] : [],
        },
        isBaseline: false,
        close: () => stack.close(),
      };
    },
  );
}

/**
 * A bare server as a target. `redisSocket`: the store's Redis on a unix socket.
 */
export async function startBareTarget(
  kind: BareKind,
  workers: number,
  dir: string,
  opts: { redisSocket?: boolean } = {},
): Promise<Target> {
  // `store` writes to a Redis of its own (or REDIS_URL's, as the webhook's stack does), so that its
  // Redis' CPU is measured apart from the webhook's and neither holds the other's keys.
  const redis = kind === "store" ? await startRedis({ socket: opts.redisSocket === true }) : undefined;
  return onTopOf(
    async () => redis?.stop(),
    async () => {
      const port = await freePort();
      const child: Child = spawnTs(
        `bare-${kind}`,
        "sandbox/loadtest/bare.ts",
        {},
        join(dir, `bare-${kind}-${workers}.log`),
        [
          "--kind",
          kind,
          "--port",
          String(port),
          "--workers",
          String(workers),
          ...(redis ? ["--redis", redis.url] : []),
        ],
        // BARE_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), as WEBHOOK_NODE_ARGS for the webhook.
        process.env.BARE_NODE_ARGS?.split(" ").filter(Boolean) ?? [],
      );
      await waitForHttp(`http://127.0.0.1:${port}/health`, child);
      // Workers start after the primary; give them a moment to listen so the first step is not lopsided.
      await new Promise((r) => setTimeout(r, workers > 1 ? 2_000 : 200));
      return {
        name: `${BARE_NAMES[kind]} ×${workers}`,
        workers,
        urls: [new URL(`http://127.0.0.1:${port}/quote`)],
        groups: {
          server: child.proc.pid ? [child.proc.pid] : [],
          ...(redis ? { redis: redis.pid ? [redis.pid] : [] } : {}),
        },
        isBaseline: true,
        close: () => child.stop(),
      };
    },
  );
}

function runStep(
  o: SweepOptions,
  t: Target,
  rate: number,
  kind: StepResult["kind"],
  seq: number,
): Promise<StepResult> {
  // The start-up load is one measured stretch of startupS with no warm-up of its own.
  const [warmupS, stepS] = kind === "start-up" ? [0, o.startupS] : [o.warmupS, o.stepS];
  const total = Math.round((warmupS + stepS) * rate);
  const mix = buildMix(o.file, total, { ...DEFAULT_MIX, seed: `sweep:${t.name}:${rate}:${seq}` });
  return measureStep(t, mix, { rate, stepS, warmupS, budgetMs: o.budgetMs, maxSockets: o.maxSockets }, kind);
}

/** The load one step sends: `rate` for `warmupS` (not measured) and `stepS` seconds. */
export interface StepLoad {
  rate: number;
  stepS: number;
  warmupS: number;
  budgetMs: number;
  maxSockets: number;
}

/**
 * One step against a started target: `mix` (at least (warmupS + stepS) x rate requests) sent open
 * loop, with its tail, outcomes and the CPU of every process group. The sweep's steps and the load
 * test's `--baseline` (baseline.ts) both measure through it.
 */
export async function measureStep(
  t: Target,
  mix: MixRequest[],
  load: StepLoad,
  kind: StepResult["kind"],
): Promise<StepResult> {
  const { rate } = load;
  const total = Math.round((load.warmupS + load.stepS) * rate);
  const before = cpuOfGroups(t.groups);
  const gen0 = process.cpuUsage();
  const m0 = machineCpuSeconds();
  const q = await runOpenLoop(mix, {
    url: t.urls[0] as URL,
    urls: t.urls,
    rate,
    durationS: load.stepS,
    warmupS: load.warmupS,
    budgetMs: load.budgetMs,
    requestTimeoutMs: 5_000,
    maxSockets: load.maxSockets,
    ...(t.apiKey ? { apiKey: t.apiKey } : {}),
  });
  const gen = process.cpuUsage(gen0);
  const m1 = machineCpuSeconds();
  const after = cpuOfGroups(t.groups);
  const wallS = q.wallMs / 1000;
  // Every CPU of the machine.
  const coreSeconds = wallS * os.cpus().length;
  const cpuUs: Record<string, number> = {};
  const share: Record<string, number> = {};
  const processes: Record<string, number> = {};
  for (const [g, a] of Object.entries(after)) {
    const d = a.s - (before[g]?.s ?? 0);
    cpuUs[g] = (d * 1e6) / total;
    share[g] = d / wallS;
    processes[g] = a.n;
  }
  cpuUs.generator = (gen.user + gen.system) / total;
  share.generator = (gen.user + gen.system) / 1e6 / wallS;
  processes.generator = 1;

  const n = q.outcome.length;
  let within = 0;
  let shouldPrice = 0;
  let priced = 0;
  let unexpectedNoQuote = 0;
  let errors = 0;
  const warm = total - n;
  for (let i = 0; i < n; i++) {
    const out = q.outcome[i] as number;
    const l = q.latencyMs[i] as number;
    const answered = q.status[i] === 200 || q.status[i] === 404;
    const inTime = Number.isFinite(l) && l <= load.budgetMs;
    if (answered && inTime) within++;
    if (
      out === Outcome.httpError ||
      out === Outcome.timeout ||
      out === Outcome.network ||
      out === Outcome.badBody
    )
      errors++;
    // The bare baselines price everything, including what the mix expects a 404 for.
    const expectsQuote = t.isBaseline || mix[warm + i]?.expect === "quote";
    if (expectsQuote) {
      shouldPrice++;
      const isPriced = out === Outcome.quoted || (t.isBaseline && out === Outcome.unexpectedQuote);
      if (isPriced && inTime) priced++;
      if (out === Outcome.unexpectedNoQuote) unexpectedNoQuote++;
    }
  }
  const lat = summarize(q.latencyMs);
  const r: StepResult = {
    target: t.name,
    rate,
    kind,
    measured: n,
    p50: lat.p50,
    p99: lat.p99,
    p999: lat.p999,
    max: lat.max,
    withinBudget: within / n,
    pricedWithinBudget: shouldPrice ? priced / shouldPrice : 0,
    unexpectedNoQuote: shouldPrice ? unexpectedNoQuote / shouldPrice : 0,
    errors,
    holds: false,
    cpuUsPerRequest: cpuUs,
    cpuCoreShare: share,
    processes,
    sendLagP99: summarize(q.sendLagMs).p99,
    ...(m0 !== undefined && m1 !== undefined
      ? {
          machineBusyShare: (m1.busy - m0.busy) / coreSeconds,
          stealShare: (m1.steal - m0.steal) / coreSeconds,
        }
      : {}),
  };
  r.holds = r.p99 < P99_LIMIT_MS && r.withinBudget >= 0.999 && r.errors === 0 && r.unexpectedNoQuote <= 0.001;
  return r;
}

export interface SweepReport {
  startedAt: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number | boolean>;
  steps: StepResult[];
  /** Highest rate held per target, and for the webhook the 1.2x step. */
  summary: SweepSummary[];
}

export interface SweepSummary {
  target: string;
  workers: number;
  highestHeld: number | null;
  /**
   * The target held the last of the rates: it never missed, so its limit is above `highestHeld`, and a
   * ratio against it is a bound, not a measurement.
   */
  heldTopStep: boolean;
  /**
   * The first of the rates. A target that missed it (`highestHeld` null) has its limit below it, so a
   * ratio against it is a bound too. (Absent in reports written before it was recorded.)
   */
  firstRate?: number;
  /** The 1.2x step (the first of `overloads`). */
  overload?: StepResult;
  /** Every step past capacity, in `OVERLOAD_FACTORS` order. */
  overloads?: StepResult[];
}

/**
 * The steps past the highest rate held, as multiples of it: past capacity every answer must still
 * leave within the budget (priced or a fast 404), at each of them (issue 60).
 */
export const OVERLOAD_FACTORS = [1.2, 1.5, 2, 3] as const;

/**
 * `a / b` as the report gives it: exact, a bound when a target held the top step or missed the first,
 * or unknown.
 */
export function heldRatio(a: SweepSummary, b: SweepSummary): string {
  if (!a.highestHeld && b.highestHeld && a.firstRate)
    return `below ${(a.firstRate / b.highestHeld).toFixed(2)}`;
  if (a.highestHeld && !b.highestHeld && b.firstRate)
    return `above ${(a.highestHeld / b.firstRate).toFixed(2)}`;
  if (!a.highestHeld || !b.highestHeld) return "";
  if (a.heldTopStep && b.heldTopStep) return "unknown (both held the top step)";
  const r = (a.highestHeld / b.highestHeld).toFixed(2);
  if (b.heldTopStep) return `at most ${r}`;
  if (a.heldTopStep) return `at least ${r}`;
  return r;
}

/** The settings a sweep's report records: what was swept, on which Redis, and what holds. */
export function sweepSettings(o: SweepOptions): SweepReport["settings"] {
  return {
    rates: o.rates.join(","),
    stepS: o.stepS,
    stepRetries: o.retries,
    warmupS: o.warmupS,
    startupS: o.startupS,
    budgetMs: o.budgetMs,
    workers: o.workers.join(","),
    instances: o.instances,
    redis: o.redisCluster ? "3-master cluster" : o.redisSocket ? "single node, unix socket" : "single node",
    baselines: o.baselines.join(","),
    maxSockets: o.maxSockets,
    holds: `p99 < ${P99_LIMIT_MS} ms, >= 99.9% answered within ${o.budgetMs} ms, 0 errors, <= 0.1% of priceable quotes unpriced`,
  };
}

export async function runSweep(o: SweepOptions): Promise<SweepReport> {
  mkdirSync(o.outDir, { recursive: true });
  const steps: StepResult[] = [];
  const summary: SweepReport["summary"] = [];
  const loadBefore = os.loadavg();
  // Per worker count: the webhook and the baselines, started together and swept side by side.
  const groups: { starts: { name: string; start: () => Promise<Target> }[] }[] = [];
  for (const w of o.workers) {
    groups.push({
      starts: [
        { name: `webhook ×${w}`, start: () => startWebhookTarget(o, w, join(o.outDir, `stack-w${w}`)) },
        ...o.baselines.map((b) => ({
          name: `bare ${b} ×${w}`,
          start: () => startBareTarget(b, w, o.outDir, o.redisSocket ? { redisSocket: true } : {}),
        })),
      ],
    });
  }
  let seq = 0;
  /** Targets started and not yet closed, for a signal handler (`track`). */
  const open = new Set<Promise<Target>>();
  /** Each target's summary at its place in the start order. */
  const slots: (SweepSummary | undefined)[] = [];
  for (const { starts } of groups) {
    const sweeps: {
      t: Target;
      starting: Promise<Target>;
      slot: number;
      highest: number | null;
      done: boolean;
    }[] = [];
    try {
      for (const s of starts) {
        o.say(`target: ${s.name}`);
        // Closed once, whoever asks first: the sweep when the target is done, or a signal handler.
        const starting = s.start().then((started): Target => {
          let closed: Promise<void> | undefined;
          return { ...started, close: () => (closed ??= started.close()) };
        });
        open.add(starting);
        o.track?.([...open]);
        const t = await starting;
        sweeps.push({ t, starting, slot: slots.push(undefined) - 1, highest: null, done: false });
      }
      // Rate by rate, every target still holding takes its step in turn: the machine's speed drifts by
      // tens of percent over the minutes a sweep takes, and targets swept one after another would each
      // meet a different machine. A target is closed as soon as it is done, so that it costs the
      // others nothing; until then an idle stack (the webhook's chain and Redis) uses a little CPU.
      const finish = async (sw: (typeof sweeps)[number]) => {
        sw.done = true;
        const { t, highest } = sw;
        const overloads: StepResult[] = [];
        if (!t.isBaseline && highest !== null) {
          for (const factor of OVERLOAD_FACTORS) {
            const r = { ...(await runStep(o, t, Math.round(highest * factor), "overload", seq++)), factor };
            steps.push(r);
            overloads.push(r);
            o.say(`  ${t.name} ${factor}x: ${line(r)}`);
          }
        }
        const overload = overloads[0];
        slots[sw.slot] = {
          target: t.name,
          workers: t.workers,
          highestHeld: highest,
          heldTopStep: highest !== null && highest === o.rates[o.rates.length - 1],
          firstRate: o.rates[0] as number,
          ...(overload ? { overload, overloads } : {}),
        };
        await t.close();
        open.delete(sw.starting);
        o.track?.([...open]);
      };
      if (o.startupS > 0) {
        for (const sw of sweeps) {
          const r = await runStep(o, sw.t, o.rates[0] as number, "start-up", seq++);
          steps.push(r);
          o.say(`  ${sw.t.name}: start-up (not counted): ${line(r)}`);
        }
      }
      for (const rate of o.rates) {
        for (const sw of sweeps) {
          if (sw.done) continue;
          let r = await runStep(o, sw.t, rate, "sweep", seq++);
          steps.push(r);
          o.say(`  ${sw.t.name}: ${line(r)}`);
          // A miss is run again (--step-retries), the same for every target: one stall in a step of a
          // few seconds (a full collection, the hypervisor's steal on a shared machine) is not capacity.
          for (let retry = 1; !r.holds && retry <= o.retries; retry++) {
            r = await runStep(o, sw.t, rate, "sweep", seq++);
            r.retry = retry;
            steps.push(r);
            o.say(`  ${sw.t.name}: retry ${retry}: ${line(r)}`);
          }
          if (r.holds) sw.highest = rate;
          else await finish(sw);
        }
      }
      for (const sw of sweeps) if (!sw.done) await finish(sw);
    } finally {
      for (const sw of sweeps) {
        await sw.t.close();
        open.delete(sw.starting);
      }
      o.track?.([...open]);
    }
  }
  // The report lists the targets in the order they were started, whichever finished first.
  summary.push(...slots.filter((x): x is SweepSummary => x !== undefined));
  return {
    startedAt: new Date().toISOString(),
    machine: {
      nproc: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? "unknown",
      node: process.version,
      loadavgBefore: loadBefore.map((x) => x.toFixed(2)).join("/"),
      loadavgAfter: os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join("/"),
    },
    settings: sweepSettings(o),
    steps,
    summary,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");

export function line(r: StepResult): string {
  const cpu = Object.entries(r.cpuUsPerRequest)
    .map(([k, v]) => `${k} ${v.toFixed(0)} µs (${(r.cpuCoreShare[k] ?? 0).toFixed(2)} cores)`)
    .join(", ");
  return `${r.rate}/s ${r.holds ? "holds" : "MISSES"}: p50 ${ms(r.p50)} p99 ${ms(r.p99)} p99.9 ${ms(r.p999)} ms, within ${pct(r.withinBudget)}, priced in budget ${pct(r.pricedWithinBudget)}, shed/late 404 ${pct(r.unexpectedNoQuote)}, errors ${r.errors}; cpu/request ${cpu}; send lag p99 ${ms(r.sendLagP99)} ms${r.stealShare ? `; steal ${pct(r.stealShare)}` : ""}`;
}

/** The highest rate a target held, as the report says it: a floor when it never missed, a ceiling when it never held. */
function heldText(s: SweepSummary): string {
  if (s.heldTopStep)
    return `${s.highestHeld}/s or more (it held the top step: raise --rates to find its limit)`;
  if (s.highestHeld !== null) return `${s.highestHeld}/s`;
  if (s.firstRate)
    return `below ${s.firstRate}/s (it missed the first step: lower --rates to find its limit)`;
  return "none/s";
}

const KIND_PREFIX: Record<StepResult["kind"], string> = {
  sweep: "",
  overload: "1.2x ",
  "start-up": "start-up (not counted): ",
};

export function sweepText(rep: SweepReport): string {
  const out = [
    `rate sweep — ${rep.startedAt}`,
    `machine: ${Object.entries(rep.machine)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")}`,
    `settings: ${Object.entries(rep.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")}`,
    "",
  ];
  for (const s of rep.summary) {
    out.push(`${s.target}:`);
    for (const r of rep.steps.filter((x) => x.target === s.target))
      out.push(
        `  ${r.kind === "overload" && r.factor ? `${r.factor}x ` : KIND_PREFIX[r.kind]}${r.retry ? `retry ${r.retry}: ` : ""}${line(r)}`,
      );
  }
  out.push("", "highest rate held (and ratios):");
  const byWorkers = new Map<number, SweepReport["summary"]>();
  for (const s of rep.summary) byWorkers.set(s.workers, [...(byWorkers.get(s.workers) ?? []), s]);
  const one = rep.summary.find((s) => s.workers === 1 && s.target.startsWith("webhook"));
  for (const [w, list] of byWorkers) {
    const hook = list.find((s) => s.target.startsWith("webhook"));
    for (const s of list) {
      const r = hook && s !== hook ? heldRatio(hook, s) : "";
      const ratio = r ? ` (webhook / this: ${r})` : "";
      out.push(`  workers ${w}: ${s.target}: ${heldText(s)}${ratio}`);
    }
    // The floor's own ratio: what one Redis round trip per quote leaves of bare node:http here, so the
    // most any webhook that stores each quote before answering could reach on this machine.
    const bare = list.find((s) => s.target.startsWith(`${BARE_NAMES.http} ×`));
    const floor = list.find((s) => s.target.startsWith(`${BARE_NAMES.store} ×`));
    const floorRatio = bare && floor ? heldRatio(floor, bare) : "";
    if (floorRatio)
      out.push(
        `  workers ${w}: ${BARE_NAMES.store} / ${BARE_NAMES.http}: ${floorRatio} (the most a webhook that stores each quote before answering reaches here)`,
      );
    const scale = hook && one && hook !== one ? heldRatio(hook, one) : "";
    if (scale) out.push(`  workers ${w}: webhook ×${w} / webhook ×1: ${scale}`);
    // Every webhook target's step past capacity (alone, and behind a proxy with --proxy).
    for (const s of list)
      for (const r of s.overloads ?? (s.overload ? [s.overload] : []))
        out.push(
          `  workers ${w}: ${s.target} at ${r.factor ?? 1.2}x (${r.rate}/s): ${pct(r.withinBudget)} answered within budget, ${pct(r.pricedWithinBudget)} of priceable quotes priced within budget, ${pct(r.unexpectedNoQuote)} shed or late 404s, p99 ${ms(r.p99)} ms`,
        );
  }
  return out.join("\n");
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const COLORS = ["#27c", "#f90", "#2a2", "#c3c", "#e55", "#555", "#0aa", "#a60"];

/** One plot: a value per rate step, a line per target; log y when asked. */
function plot(
  rep: SweepReport,
  title: string,
  value: (r: StepResult) => number,
  o: { log?: boolean; yMax?: number; hline?: [number, string] },
): string {
  const W = 960;
  const H = 320;
  const m = { l: 60, r: 180, t: 28, b: 40 };
  // The start-up load is in the text report, not the plot: it is not a point of the sweep.
  const steps = rep.steps.filter((r) => r.kind !== "start-up");
  const xMax = Math.max(1, ...steps.map((s) => s.rate));
  const vals = steps.map(value).filter((v) => Number.isFinite(v));
  const yMax = o.yMax ?? Math.max(1, ...vals, o.hline?.[0] ?? 0) * 1.1;
  const yMin = o.log ? 0.1 : 0;
  const x = (v: number) => m.l + (v / xMax) * (W - m.l - m.r);
  const y = (v: number) => {
    const c = Math.min(Math.max(v, yMin), yMax);
    const f = o.log
      ? (Math.log10(c) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))
      : (c - yMin) / (yMax - yMin);
    return m.t + (1 - f) * (H - m.t - m.b);
  };
  const parts: string[] = [];
  const ticks = o.log
    ? Array.from({ length: 12 }, (_, i) => yMin * 10 ** i).filter((v) => v <= yMax)
    : Array.from({ length: 6 }, (_, i) => (yMax * i) / 5);
  for (const v of ticks)
    parts.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1)}</text>`,
    );
  for (const r of [...new Set(steps.map((s) => s.rate))])
    parts.push(`<text x="${x(r)}" y="${H - m.b + 16}" text-anchor="middle" font-size="10">${r}</text>`);
  if (o.hline)
    parts.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${y(o.hline[0])}" y2="${y(o.hline[0])}" stroke="#c00" stroke-dasharray="6 4"/><text x="${m.l + 4}" y="${y(o.hline[0]) - 4}" font-size="11" fill="#c00">${esc(o.hline[1])}</text>`,
    );
  rep.summary.forEach((s, i) => {
    const c = COLORS[i % COLORS.length];
    const pts = steps.filter((r) => r.target === s.target).sort((a, b) => a.rate - b.rate);
    parts.push(
      `<polyline fill="none" stroke="${c}" stroke-width="2" points="${pts.map((p) => `${x(p.rate).toFixed(1)},${y(value(p)).toFixed(1)}`).join(" ")}"/>`,
      ...pts.map(
        (p) =>
          `<circle cx="${x(p.rate).toFixed(1)}" cy="${y(value(p)).toFixed(1)}" r="${p.kind === "overload" ? 5 : 3}" fill="${p.holds ? c : "white"}" stroke="${c}"/>`,
      ),
      `<text x="${W - m.r + 8}" y="${m.t + 14 + i * 16}" font-size="11" fill="${c}">${esc(s.target)}</text>`,
    );
  });
  return `<h3>${esc(title)}</h3><svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">
<rect width="${W}" height="${H}" fill="white"/>${parts.join("")}
<text x="${m.l}" y="${H - 4}" font-size="11">offered rate (requests/s); filled dot: the step holds, hollow: it misses; large dot: the 1.2x step</text>
</svg>`;
}

export function sweepHtml(rep: SweepReport): string {
  const budget = Number(rep.settings.budgetMs);
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>rate sweep</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1000px}pre{background:#f6f6f6;padding:12px;overflow:auto;font-size:12px}</style></head><body>
<h1>Rate sweep</h1>
${plot(rep, "p99 latency (ms, log scale)", (r) => r.p99, { log: true, yMax: 5_000, hline: [P99_LIMIT_MS, `${P99_LIMIT_MS} ms`] })}
${plot(rep, "priced within budget (% of priceable quotes)", (r) => r.pricedWithinBudget * 100, { yMax: 100, hline: [99.9, "99.9%"] })}
${plot(rep, "server CPU per request (µs: webhook primary + workers, or the bare server)", (r) => r.cpuUsPerRequest.webhook ?? r.cpuUsPerRequest.server ?? Number.NaN, {})}
${plot(rep, "CPU in cores over the step: server", (r) => r.cpuCoreShare.webhook ?? r.cpuCoreShare.server ?? Number.NaN, { hline: [budget > 0 ? os.cpus().length : 0, "all cores"] })}
${plot(rep, "CPU in cores over the step: the load generator", (r) => r.cpuCoreShare.generator ?? Number.NaN, {})}
<pre>${esc(sweepText(rep))}</pre>
</body></html>
`;
}

export function writeSweep(rep: SweepReport, outDir: string): string {
  writeFileSync(join(outDir, "sweep.json"), JSON.stringify(rep, null, 2));
  writeFileSync(join(outDir, "sweep.txt"), `${sweepText(rep)}\n`);
  writeFileSync(join(outDir, "sweep.html"), sweepHtml(rep));
  return join(outDir, "sweep.html");
}

/**
 * `npm run loadtest -- --baseline http`: the quote phase again, right after it, against a bare server
 * (sweep.ts's baselines: node:http or Hono answering the same request shape with none of the
 * webhook's work), at the same rate, with the same requests, the same generator and the same number
 * of workers. What the bare server gets is what this machine and this generator allow at that rate;
 * the webhook's figures are read beside it.
 *
 * Why: the tail checks (p99 < 10 ms, p99.9 < 20 ms at 5,000/s) are absolute, and on a shared two-core
 * machine a stall of the generator or a process waiting for a core lands in every latency it delays.
 * On one machine, in 15-60 s runs without `--pin`, a bare node:http server at 5,000/s measured p99
 * 14-35 ms and p99.9 21-131 ms, with the generator's own send lag at p99 9-22 ms: the checks were out
 * of reach there for any server. The baseline says so in the same report instead of leaving it to a
 * separate run.
 *
 * The baseline never changes the verdict: the checks stay the webhook's.
 */

import { nodeDescendantPids, pinProcesses, REPO_ROOT } from "../../tooling/processes.ts";
import type { MixRequest } from "./mix.ts";
import { PERF_NODE_ARGS, type PerfSplit, perfSplitText, recordPerf } from "./perf-split.ts";
import { serverTraceText } from "./server-trace.ts";
import type { LatencySummary } from "./stats.ts";
import { type BareKind, measureStep, type StepResult, startBareTarget } from "./sweep.ts";

export type BaselineKind = Exclude<BareKind, "floor">;

export interface BaselineResult {
  /**
   * The phase as the sweep records a step (target, tail, share within budget, CPU per request of the
   * bare server and this generator, the generator's send lag).
   */
  step: StepResult;
  /** The webhook's tail checks, and whether the bare server met them. */
  targets: TailTargets;
  meetsTail: boolean;
  /** The bare server's CPU per request by part, kernel included (`--perf-server`), or why it failed. */
  perf?: PerfSplit | string;
}

export interface BaselineOptions {
  kind: BaselineKind;
  workers: number;
  /** The quote phase's own requests; the bare server answers every one with a quote-shaped 200. */
  mix: MixRequest[];
  rate: number;
  durationS: number;
  warmupS: number;
  budgetMs: number;
  maxSockets: number;
  /** Where the bare server's log goes. */
  dir: string;
  targets: TailTargets;
  /** `--pin`: the CPUs the bare server gets (taskset's syntax), as the webhook had them. */
  pinServer?: string;
  /** `--trace-server`: the bare server runs with the tracer, its records here (the step's split). */
  traceDir?: string;
  /** `--redis-socket`: the store baseline's Redis on a unix socket, as the webhook's. */
  redisSocket?: boolean;
  /** `--perf-server`: the bare server recorded with perf over the measured window (perf-split.ts). */
  perfDataPath?: string;
}

/** A bare server's kind as `flag` (--baseline, or an item of --baselines) names it; none: undefined. */
export function parseBaselineKind(v: string, flag = "--baseline"): BaselineKind | undefined {
  if (v === "none" || v === "") return undefined;
  if (v === "http" || v === "hono" || v === "store") return v;
  throw new Error(`${flag}: "${v}" is not one of http, hono, store, none`);
}

export async function runBaselinePhase(o: BaselineOptions): Promise<BaselineResult> {
  const t = await startBareTarget(o.kind, o.workers, o.dir, {
    ...(o.traceDir ? { traceDir: o.traceDir } : {}),
    ...(o.redisSocket ? { redisSocket: true } : {}),
    ...(o.perfDataPath ? { nodeArgs: PERF_NODE_ARGS } : {}),
  });
  try {
    if (o.pinServer) pinProcesses(t.groups.server ?? [], o.pinServer);
    const perfRun = o.perfDataPath
      ? recordPerf(
          (t.groups.server ?? []).flatMap((pid) => [pid, ...nodeDescendantPids(pid)]),
          {
            delayMs: o.warmupS * 1000,
            seconds: o.durationS,
            dataPath: o.perfDataPath,
            requests: Math.round(o.rate * o.durationS),
            label: `the bare server (${t.name})`,
            repoRoot: REPO_ROOT,
          },
        ).catch((e: unknown) => (e instanceof Error ? e.message : String(e)))
      : undefined;
    const step = await measureStep(
      t,
      o.mix,
      {
        rate: o.rate,
        stepS: o.durationS,
        warmupS: o.warmupS,
        budgetMs: o.budgetMs,
        maxSockets: o.maxSockets,
      },
      "sweep",
    );
    const perf = await perfRun;
    return {
      step,
      targets: o.targets,
      meetsTail: meetsTail(step, o.targets),
      ...(perf !== undefined ? { perf } : {}),
    };
  } finally {
    await t.close();
  }
}

/** The tail checks' bounds, applied alike to the webhook and to the baseline. */
export interface TailTargets {
  p99Ms: number;
  p999Ms: number;
}

export const meetsTail = (l: Pick<LatencySummary, "p99" | "p999">, t: TailTargets) =>
  l.p99 < t.p99Ms && l.p999 < t.p999Ms;

/** The baseline's lines in the text report. */
export function baselineText(b: BaselineResult, webhook: LatencySummary): string[] {
  const t = b.targets;
  const s = b.step;
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
  const ratio = (w: number, bare: number) =>
    bare > 0 && Number.isFinite(w) ? `${(w / bare).toFixed(2)}x` : "n/a";
  return [
    `baseline: ${s.target}, same rate, requests and generator, run right after the quote phase`,
    `  latency ms (from scheduled send): p50 ${f(s.p50)}  p99 ${f(s.p99)}  p99.9 ${f(s.p999)}  max ${f(s.max)}`,
    `  within budget: ${Math.round(s.withinBudget * s.measured)}/${s.measured} = ${(s.withinBudget * 100).toFixed(3)}%; generator send lag ms: p99 ${f(s.sendLagP99)}`,
    `  cpu per request: server ${(s.cpuUsPerRequest.server ?? Number.NaN).toFixed(0)} µs${s.cpuUsPerRequest.redis !== undefined ? `, redis ${s.cpuUsPerRequest.redis.toFixed(0)} µs` : ""}, generator ${(s.cpuUsPerRequest.generator ?? Number.NaN).toFixed(0)} µs`,
    `  webhook against the baseline: p99 ${ratio(webhook.p99, s.p99)}, p99.9 ${ratio(webhook.p999, s.p999)}`,
    b.meetsTail
      ? `  the bare server meets p99 < ${t.p99Ms} ms and p99.9 < ${t.p999Ms} ms on this machine at this rate`
      : `  the bare server itself misses p99 < ${t.p99Ms} ms or p99.9 < ${t.p999Ms} ms on this machine at this rate: the tail checks measure the machine here, not the webhook`,
    ...(s.serverTrace ? serverTraceText(s.serverTrace, "the bare server's side").map((l) => `  ${l}`) : []),
    ...(b.perf === undefined
      ? []
      : typeof b.perf === "string"
        ? [`  perf: not recorded: ${b.perf}`]
        : perfSplitText(b.perf).map((l) => `  ${l}`)),
  ];
}

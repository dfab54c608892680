/**
 * `npm run loadtest -- --baseline http`: the quote phase again, right after it, against a bare server
 * (sweep.ts's baselines: node:http or Hono answering the same request shape with none of the
 * webhook's work), at the same rate, with the same requests, the same generator and the same number
 * of workers. What the bare server gets is what this machine and this generator allow at that rate;
 * the webhook's figures are read beside it.
 *
 * Why: the tail checks are absolute, and on a shared machine a stall of the generator or a process
 * waiting for a core lands in every latency it delays. The baseline says what any server gets here,
 * in the same report.
 *
 * The baseline never changes the verdict: the checks stay the webhook's.
 */

import type { MixRequest } from "./mix.ts";
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
  /** `--redis-socket`: the store baseline's Redis on a unix socket, as the webhook's. */
  redisSocket?: boolean;
}

/** A bare server's kind as `flag` (--baseline, or an item of --baselines) names it; none: undefined. */
export function parseBaselineKind(v: string, flag = "--baseline"): BaselineKind | undefined {
  if (v === "none" || v === "") return undefined;
  if (v === "http" || v === "hono" || v === "store") return v;
  throw new Error(`${flag}: "${v}" is not one of http, hono, store, none`);
}

export async function runBaselinePhase(o: BaselineOptions): Promise<BaselineResult> {
  const t = await startBareTarget(o.kind, o.workers, o.dir, o.redisSocket ? { redisSocket: true } : {});
  try {
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
    return { step, targets: o.targets, meetsTail: meetsTail(step, o.targets) };
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
  ];
}

/**
 * The load test report: a JSON document, a plain-text summary, and a self-contained HTML page with an
 * inline SVG plot of latency over time (no scripts, no network, opens from disk).
 */
import { type BaselineResult, baselineText } from "./baseline.ts";
import type { LedgerCheck } from "./ledger-check.ts";
import { type LatencySummary, type SeriesPoint, slowestBuckets } from "./stats.ts";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface LoadReport {
  title: string;
  startedAt: string;
  machine: Record<string, string | number>;
  settings: Record<string, string | number | boolean>;
  quotes: {
    measured: number;
    /**
     * When the first measured request was due (the end of the warm-up): the series' t = 0, to line the
     * report up with the webhook's logs and profiles.
     */
    measuredFrom: string;
    achievedRatePerS: number;
    outcomes: Record<string, number>;
    errors: number;
    latencyMs: LatencySummary;
    withinBudget: { count: number; share: number };
    sendLagMs: LatencySummary;
    errorSamples: string[];
    series: SeriesPoint[];
    /** CPU used during the phase (warm-up included) by each process, with the cost per request. */
    cpu: Record<string, string>;
    /** Each process's resident memory as the phase ends, with its peak so far (/proc VmRSS, VmHWM). */
    memory: Record<string, string>;
  };
  swaps?: {
    requested: number;
    landed: number;
    outcomes: Record<string, number>;
    latencyMs: LatencySummary;
    errorSamples: string[];
  };
  /** The webhook SIGKILLed and restarted in the swap phase (`--kill-webhook-at`). */
  kill?: { atSwap: number; downMs: number };
  /** The ledger against the operator's record and the chain (ledger-check.ts). */
  ledger?: LedgerCheck;
  /** The quote phase again against a bare server (`--baseline`, baseline.ts); never part of the checks. */
  baseline?: BaselineResult;
  checks: Check[];
  pass: boolean;
}

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

/**
 * The three slowest buckets of the series, each with the generator's own worst send lag in it: the
 * tail's stalls, and whether the generator or the server's side held them up.
 */
function slowestText(points: SeriesPoint[]): string[] {
  const worst = slowestBuckets(points, 3);
  if (worst.length === 0) return [];
  return [
    "  slowest buckets (by max latency; held up by the generator when its own send lag is half the max or more):",
    ...worst.map(
      (p) =>
        `    t=${p.t}s: p99 ${f(p.p99)}  max ${f(p.max)}  generator send lag max ${p.sendLagMax === undefined ? "n/a" : f(p.sendLagMax)}  -> ${p.heldUpBy}`,
    ),
  ];
}

export function textSummary(r: LoadReport): string {
  const q = r.quotes;
  const l = q.latencyMs;
  const lines = [
    `${r.title} — ${r.startedAt}`,
    `machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")}`,
    `settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")}`,
    "",
    `quotes: ${q.measured} measured at ${f(q.achievedRatePerS, 1)}/s from ${q.measuredFrom}`,
    `  latency ms (from scheduled send): p50 ${f(l.p50)}  p90 ${f(l.p90)}  p99 ${f(l.p99)}  p99.9 ${f(l.p999)}  max ${f(l.max)}  mean ${f(l.mean)}`,
    `  within budget (from x-request-start): ${q.withinBudget.count}/${q.measured} = ${f(q.withinBudget.share * 100, 3)}%`,
    `  generator send lag ms: p50 ${f(q.sendLagMs.p50)}  p99 ${f(q.sendLagMs.p99)}  max ${f(q.sendLagMs.max)}`,
    ...slowestText(q.series),
    `  cpu during the phase: ${Object.entries(q.cpu)
      .map(([k, v]) => `${k} ${v}`)
      .join("; ")}`,
    `  memory at the phase's end (resident): ${Object.entries(q.memory)
      .map(([k, v]) => `${k} ${v}`)
      .join("; ")}`,
    `  outcomes: ${Object.entries(q.outcomes)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ")}`,
    `  errors: ${q.errors}`,
    ...q.errorSamples.slice(0, 5).map((s) => `    e.g. ${s}`),
  ];
  if (r.baseline) lines.push("", ...baselineText(r.baseline, l));
  if (r.swaps) {
    const s = r.swaps;
    lines.push(
      "",
      `swaps: ${s.landed}/${s.requested} landed; outcomes: ${Object.entries(s.outcomes)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`,
      `  order+sign+execute ms: p50 ${f(s.latencyMs.p50)}  p99 ${f(s.latencyMs.p99)}  max ${f(s.latencyMs.max)}`,
      ...s.errorSamples.slice(0, 5).map((x) => `    e.g. ${x}`),
    );
  }
  lines.push(
    "",
    ...r.checks.map((c) => `${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`),
    "",
    r.pass ? "RESULT: PASS" : "RESULT: FAIL",
  );
  return lines.join("\n");
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Latency over time on a log axis: p50, p99 and max per bucket, with the 10 ms and budget lines. */
export function latencySvg(points: SeriesPoint[], budgetMs: number): string {
  const W = 960;
  const H = 380;
  const m = { l: 60, r: 20, t: 20, b: 40 };
  const tMax = Math.max(1, ...points.map((p) => p.t + 1));
  const yMax = Math.max(budgetMs * 2, ...points.map((p) => p.max));
  const yMin = 0.1;
  const x = (t: number) => m.l + (t / tMax) * (W - m.l - m.r);
  const y = (v: number) => {
    const c = Math.min(Math.max(v, yMin), yMax);
    return (
      m.t + (1 - (Math.log10(c) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (H - m.t - m.b)
    );
  };
  const line = (key: "p50" | "p99" | "max" | "sendLagMax", color: string, width: number, dash = "") => {
    const pts = points.filter((p) => p[key] !== undefined);
    if (pts.length === 0) return "";
    return `<polyline fill="none" stroke="${color}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ""} points="${pts.map((p) => `${x(p.t).toFixed(1)},${y(p[key] as number).toFixed(1)}`).join(" ")}"/>`;
  };
  const ticks: string[] = [];
  for (let v = yMin; v <= yMax * 1.0001; v *= 10) {
    ticks.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v >= 1 ? v.toFixed(0) : v.toFixed(1)}</text>`,
    );
  }
  const xStep = tMax > 120 ? 30 : tMax > 30 ? 10 : 5;
  for (let t = 0; t <= tMax; t += xStep) {
    ticks.push(`<text x="${x(t)}" y="${H - m.b + 16}" text-anchor="middle" font-size="11">${t}s</text>`);
  }
  const hline = (v: number, color: string, label: string) =>
    `<line x1="${m.l}" x2="${W - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="${color}" stroke-dasharray="6 4"/><text x="${W - m.r - 4}" y="${y(v) - 4}" text-anchor="end" font-size="11" fill="${color}">${esc(label)}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">
<rect width="${W}" height="${H}" fill="white"/>
${ticks.join("\n")}
${hline(10, "#8a2be2", "10 ms (p99 target)")}
${hline(budgetMs, "#c00", `${budgetMs} ms budget`)}
${line("max", "#e55", 1)}
${line("p99", "#f90", 2)}
${line("p50", "#27c", 2)}
${line("sendLagMax", "#777", 1, "2 3")}
<text x="${m.l}" y="${H - 6}" font-size="12">time since start (by scheduled send) — ms, log scale: <tspan fill="#27c">p50</tspan> · <tspan fill="#f90">p99</tspan> · <tspan fill="#e55">max</tspan> · <tspan fill="#777">generator's send lag, max</tspan> per bucket</text>
<text x="14" y="${m.t + 10}" font-size="11" transform="rotate(-90 14 ${m.t + 10})" text-anchor="end">latency (ms)</text>
</svg>`;
}

export function renderHtml(r: LoadReport, budgetMs: number): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${esc(r.title)}</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1000px}pre{background:#f6f6f6;padding:12px;overflow:auto}
.pass{color:#080}.fail{color:#c00}</style></head><body>
<h1>${esc(r.title)} <span class="${r.pass ? "pass" : "fail"}">${r.pass ? "PASS" : "FAIL"}</span></h1>
${latencySvg(r.quotes.series, budgetMs)}
<pre>${esc(textSummary(r))}</pre>
</body></html>
`;
}

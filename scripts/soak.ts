/**
 * `npm run soak`: the chaos soak of issue 60 on the production shape, not run in CI. Composed of the
 * load test's and the fault suite's parts:
 *
 *   Redis with AOF (appendfsync always), killable (tooling/redis-server.ts);
 *   a PostgreSQL ledger (tooling/processes.ts startPostgres), stopped and started;
 *   the chain server behind the fault proxy (sandbox/chain/fault-proxy.ts) as the webhook's RPC_URL;
 *   the sandbox stack (sandbox/operator/stack.ts): the webhook, the signer service (SIGNER_URL) and the
 *   operator simulator with its fill-rate policing, 8 funded takers executing real swaps at a steady
 *   rate (sandbox/loadtest/swaps.ts);
 *   open-loop /quote at a constant rate (sandbox/loadtest/open-loop.ts), in back-to-back segments.
 *
 * Every `--interval` seconds one fault, in turn: Redis SIGKILL and restart, the RPC stalling, answering
 * 503, dropping connections (each `--fault-s`), the webhook SIGTERMed and SIGKILLed the moment a fill
 * is handed to it (then started again), PostgreSQL stopped (`--fault-s`), the signer service SIGKILLed
 * and started again. At the end: operator suspensions by the fill-rate rule, lost markouts, doubled or
 * missing fills (sandbox/loadtest/ledger-check.ts against the chain), 5xx, quotes answered within the
 * budget outside and inside the fault windows, and the first priced quote after each recovery.
 *
 *   npm run soak                                               (20 min, 500/s, 30 swaps/min, a fault every 2 min)
 *   npm run soak -- --duration 180 --rate 200 --interval 20 --fault-s 5     (a short run: every kind once)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { startFaultProxy } from "../sandbox/chain/fault-proxy.ts";
import { checkLedger, swapCallRecorder, waitForQuietJournal } from "../sandbox/loadtest/ledger-check.ts";
import { buildMixPaced, DEFAULT_MIX, type MixRequest } from "../sandbox/loadtest/mix.ts";
import { type OpenLoopResult, runOpenLoop } from "../sandbox/loadtest/open-loop.ts";
import { runSwapPhase, SWAP_TAKER_FUNDING } from "../sandbox/loadtest/swaps.ts";
import { startStack } from "../sandbox/operator/stack.ts";
import { parseArgs } from "../src/cli/args.ts";
import { MARKOUT_HORIZONS } from "../src/ledger/markouts.ts";
import { openLedger } from "../src/ledger/open.ts";
import { freePort, REPO_ROOT, startPostgres } from "../tooling/processes.ts";
import { killableRedis } from "../tooling/redis-server.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run soak",
  summary:
    "Chaos soak on the production shape (Redis with AOF, PostgreSQL ledger, the chain behind an RPC\n" +
    "proxy, the signer service, the operator simulator with funded takers swapping): open-loop /quote\n" +
    "and steady swaps while a fault is injected every --interval seconds, every kind in turn. Prints\n" +
    "suspensions, lost markouts, doubled/missing fills, 5xx, quotes within budget outside and inside\n" +
    "fault windows, and the first priced quote after each recovery. Not run in CI.",
  flags: {
    duration: { type: "string", value: "S", default: "1200", description: "seconds of load and faults" },
    rate: { type: "string", value: "N", default: "500", description: "quotes per second (open loop)" },
    "swaps-per-min": { type: "string", value: "N", default: "30", description: "swaps per minute" },
    interval: { type: "string", value: "S", default: "120", description: "seconds between faults" },
    "fault-s": {
      type: "string",
      value: "S",
      default: "10",
      description: "how long an outage (Redis, RPC, PostgreSQL) lasts",
    },
    budget: { type: "string", value: "MS", default: "250", description: "the operator's quote budget" },
    out: { type: "string", value: "DIR", default: join(REPO_ROOT, "results", "soak"), description: "folder" },
    "from-source": { type: "boolean", description: "the webhook from source (default: the build)" },
  },
});
const num = (k: string) => Number(args[k as keyof typeof args]);
const durationS = num("duration");
const rate = num("rate");
const intervalS = num("interval");
const faultMs = num("fault-s") * 1000;
const budgetMs = num("budget");
const swapsPerMin = num("swaps-per-min");
const SEGMENT_S = 30;
/** Quotes before the counted run starts (a process's first load: its code not yet optimised). */
const WARMUP_S = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
const say = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 23)} ${line}\n`);

/** One injected fault: when it was cut, when what it broke answered again. */
interface Fault {
  kind: string;
  cutAt: number;
  backAt: number;
  note?: string;
}

const FAULT_KINDS = [
  "redis-kill",
  "rpc-stall",
  "rpc-503",
  "rpc-drop",
  "webhook-sigterm",
  "webhook-sigkill",
  "postgres-stop",
  "signer-restart",
] as const;

async function main(): Promise<void> {
  const out = args.out as string;
  mkdirSync(out, { recursive: true });
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    const redis = await killableRedis({ persistence: true });
    cleanups.push(() => redis.stop());
    const pg = await startPostgres();
    cleanups.push(() => pg.stop());
    // The stack, the webhook it starts and the ledger check all take these.
    process.env.REDIS_URL = redis.url;
    process.env.DATABASE_URL = pg.url;
    const chainPort = await freePort();
    const proxy = await startFaultProxy(`http://127.0.0.1:${chainPort}`);
    cleanups.push(() => proxy.close());
    const recorder = swapCallRecorder();
    say(
      `starting the stack in ${out}/stack (Redis AOF ${redis.url}, PostgreSQL ${pg.url}, RPC via ${proxy.url})`,
    );
    const stack = await startStack({
      dir: join(out, "stack"),
      ports: { chain: chainPort },
      takers: Array.from({ length: 8 }, (_, i) => ({ name: String(i + 1), ...SWAP_TAKER_FUNDING })),
      remoteSigner: true,
      webhookLogLevel: "info",
      webhookBuilt: args["from-source"] !== true,
      webhookEnv: { RPC_URL: proxy.url, LEDGER: "on", DATABASE_URL: pg.url },
      operator: { onOutcome: recorder.onOutcome },
      say: (l) => say(`  ${l}`),
    });
    cleanups.push(() => stack.close());
    const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);

    // Suspensions by the operator's fill-rate rule, counted as they start.
    let suspensions = 0;
    let wasSuspended = false;
    const watch = setInterval(() => {
      const now = stack.operator.fillRate.status("maker").suspended;
      if (now && !wasSuspended) suspensions++;
      wasSuspended = now;
    }, 250);
    cleanups.push(async () => clearInterval(watch));

    // The first segment's requests and the takers are built before the clock starts; the webhook and
    // this generator then take WARMUP_S of quotes, not counted (as the sweep's start-up load).
    const runId = Date.now();
    const mixFor = (k: number, seconds: number) =>
      buildMixPaced(file, Math.round(seconds * rate), {
        ...DEFAULT_MIX,
        seed: `soak:${runId}:${k}`,
        takerSeed: `soak:${runId}`,
      });
    const firstS = Math.min(SEGMENT_S, durationS);
    const firstMix = await mixFor(0, firstS + WARMUP_S);
    const startedMs = Date.now() + WARMUP_S * 1000;
    const endMs = startedMs + durationS * 1000;
    say(
      `soak: ${durationS} s, ${rate} quotes/s, ${swapsPerMin} swaps/min, a fault every ${intervalS} s (after ${WARMUP_S} s of quotes not counted)`,
    );

    // Quotes: back-to-back open-loop segments (a whole run's requests prebuilt at once would not fit),
    // each built while the one before runs, a chunk at a time (buildMixPaced).
    const url = new URL(`${stack.webhookUrl.replace(/\/+$/, "")}/quote`);
    const segment = (mix: MixRequest[], durationS: number, warmupS: number) =>
      runOpenLoop(mix, { url, rate, durationS, warmupS, budgetMs, requestTimeoutMs: 5_000, maxSockets: 256 });
    const segments: Promise<OpenLoopResult>[] = [segment(firstMix, firstS, WARMUP_S)];
    const quoting = (async () => {
      const n = Math.ceil(durationS / SEGMENT_S);
      for (let k = 1; k < n; k++) {
        const s = Math.min(SEGMENT_S, durationS - k * SEGMENT_S);
        const mix = await mixFor(k, s);
        await sleep(startedMs + k * SEGMENT_S * 1000 - Date.now());
        segments.push(segment(mix, s, 0));
      }
    })();

    // Swaps: steady, each taker one at a time; a webhook fault waits for the next one in flight.
    let inFlight: (() => void) | undefined;
    const swapCount = Math.floor((durationS / 60) * swapsPerMin);
    const swapping = runSwapPhase({
      operatorUrl: stack.operatorUrl,
      chainUrl: stack.chainUrl,
      takers: stack.takers.map((t) => t.keypair),
      count: swapCount,
      concurrency: 4,
      paceMs: 60_000 / swapsPerMin,
      onExecuting: () => {
        const fire = inFlight;
        inFlight = undefined;
        fire?.();
      },
    });

    const faults: Fault[] = [];
    const nextInFlight = () =>
      Promise.race([new Promise<void>((r) => (inFlight = r)), sleep(15_000)]).then(() => sleep(30));
    const inject = async (kind: (typeof FAULT_KINDS)[number]): Promise<Fault> => {
      switch (kind) {
        case "redis-kill": {
          const cutAt = Date.now();
          await redis.kill();
          await sleep(faultMs);
          await redis.start();
          return { kind, cutAt, backAt: Date.now() };
        }
        case "rpc-stall":
        case "rpc-503":
        case "rpc-drop": {
          const cutAt = Date.now();
          await proxy.set(
            kind === "rpc-stall" ? "blackhole" : kind === "rpc-503" ? "unavailable" : "reset-before",
          );
          await sleep(faultMs);
          await proxy.set("pass");
          return { kind, cutAt, backAt: Date.now() };
        }
        case "webhook-sigterm": {
          await nextInFlight();
          const cutAt = Date.now();
          const exit = await stack.stopWebhook();
          await stack.startWebhook();
          return { kind, cutAt, backAt: Date.now(), note: `exit code ${exit.code} signal ${exit.signal}` };
        }
        case "webhook-sigkill": {
          await nextInFlight();
          const cutAt = Date.now();
          await stack.killWebhook();
          await stack.startWebhook();
          return { kind, cutAt, backAt: Date.now() };
        }
        case "postgres-stop": {
          const cutAt = Date.now();
          await pg.halt();
          await sleep(faultMs);
          await pg.resume();
          return { kind, cutAt, backAt: Date.now() };
        }
        case "signer-restart": {
          const cutAt = Date.now();
          await stack.restartSigner("SIGKILL");
          return { kind, cutAt, backAt: Date.now() };
        }
      }
    };
    for (let k = 0; ; k++) {
      const at = startedMs + (k + 1) * intervalS * 1000;
      if (at + faultMs + 5_000 > endMs) break;
      await sleep(at - Date.now());
      const kind = FAULT_KINDS[k % FAULT_KINDS.length] as (typeof FAULT_KINDS)[number];
      say(`fault ${k + 1}: ${kind}`);
      const f = await inject(kind);
      faults.push(f);
      say(`  back after ${f.backAt - f.cutAt} ms${f.note ? ` (${f.note})` : ""}`);
    }
    await quoting;
    const quotes = await Promise.all(segments);
    const swaps = await swapping;
    say(`load done; ${swaps.landed}/${swaps.requested} swaps landed; waiting for the journal to drain`);

    const quiet = await waitForQuietJournal(stack.redis, stack.config, 240_000);
    const stopped = await stack.stopWebhook();
    const ledger = await checkLedger({
      calls: recorder.calls,
      chainUrl: stack.chainUrl,
      maker: stack.maker,
      dataDir: join(stack.dir, "webhook-data"),
      configPath: DEFAULT_CONFIG_PATH,
      fromMs: startedMs,
      journal: quiet,
      webhookExit: stopped,
    });
    const markouts = await lostMarkouts(pg.url, startedMs, Date.now());
    const summary = summarize(quotes, faults, budgetMs);
    const report = {
      settings: { durationS, rate, swapsPerMin, intervalS, faultS: faultMs / 1000, budgetMs },
      suspensions,
      fillRate: stack.operator.fillRate.status("maker"),
      swaps: {
        requested: swaps.requested,
        landed: swaps.landed,
        outcomes: swaps.outcomes,
        errorSamples: swaps.errorSamples,
        missesByWindow: swapMisses(swaps.misses, faults),
      },
      ledger: { ok: ledger.ok, problems: ledger.problems, figures: ledger.figures },
      markouts,
      quotes: summary,
      faults: faults.map((f) => ({ ...f, firstPricedMs: firstPriced(quotes, f.backAt) })),
    };
    writeFileSync(join(out, "soak.json"), JSON.stringify(report, null, 2));
    print(report);
  } finally {
    await cleanup();
  }
}

/**
 * The swaps that did not land, by where their order was asked: in a fault's window (from 2 s before
 * its cut, an order's quote round, to a second after it answered again) or outside them all.
 */
function swapMisses(misses: { askedAtMs: number; outcome: string }[], faults: Fault[]) {
  const windowOf = (t: number) => faults.findIndex((f) => t >= f.cutAt - 2_000 && t <= f.backAt + 1_000);
  const where: Record<string, Record<string, number>> = {};
  for (const m of misses) {
    const w = windowOf(m.askedAtMs);
    const f = faults[w];
    const label = f ? `${w + 1} ${f.kind}` : "outside";
    const at = where[label] ?? {};
    at[m.outcome] = (at[m.outcome] ?? 0) + 1;
    where[label] = at;
  }
  return where;
}

/** Every request of every segment as (answered-at epoch, status, latency), in schedule order. */
function* requests(quotes: OpenLoopResult[]): Generator<{ at: number; ms: number; status: number }> {
  for (const q of quotes)
    for (let i = 0; i < q.latencyMs.length; i++)
      yield {
        at: q.measuredFromEpochMs + (q.scheduledMs[i] as number),
        ms: q.latencyMs[i] as number,
        status: q.status[i] as number,
      };
}

/** Quotes in one window (or outside them all): sent, answered in budget, answered late, not answered. */
interface WindowCount {
  n: number;
  ok: number;
  /** Answered 200 or 404, after the budget. */
  late: number;
  /** No HTTP answer at all (connection refused or reset, timed out): the process was not there to answer. */
  none: number;
}

/**
 * Within budget: answered (200 or 404) no later than the budget after its scheduled send. Inside the
 * fault windows each fault is counted on its own, its misses split into late answers and no answer (a
 * webhook restarted by the fault refuses connections until it listens again).
 */
function summarize(quotes: OpenLoopResult[], faults: Fault[], budget: number) {
  // A fault's window: from the cut to a second after what it broke answered again (the recovery promise).
  const windowOf = (t: number) => faults.findIndex((f) => t >= f.cutAt && t <= f.backAt + 1_000);
  const count = (): WindowCount => ({ n: 0, ok: 0, late: 0, none: 0 });
  const outside = count();
  const byFault = faults.map(count);
  let fivexx = 0;
  let priced = 0;
  /** Misses by the second they were sent in (epoch s) and their window (-1: outside): where they bunch. */
  const missesBySecond = new Map<string, { second: number; late: number; none: number; window: number }>();
  const missed = (at: number, window: number) => {
    const second = Math.floor(at / 1_000);
    const key = `${second}:${window}`;
    const seen = missesBySecond.get(key) ?? { second, late: 0, none: 0, window };
    missesBySecond.set(key, seen);
    return seen;
  };
  for (const r of requests(quotes)) {
    const i = windowOf(r.at);
    const w = byFault[i] ?? outside;
    w.n++;
    const answered = r.status === 200 || r.status === 404;
    if (answered && r.ms <= budget) w.ok++;
    else if (answered) {
      w.late++;
      missed(r.at, i).late++;
    } else if (!(r.status > 0)) {
      w.none++;
      missed(r.at, i).none++;
    }
    if (r.status >= 500) fivexx++;
    if (r.status === 200) priced++;
  }
  const inside = byFault.reduce(
    (a, b) => ({ n: a.n + b.n, ok: a.ok + b.ok, late: a.late + b.late, none: a.none + b.none }),
    count(),
  );
  const pct = (x: WindowCount) => (x.n ? (100 * x.ok) / x.n : 100);
  return {
    sent: outside.n + inside.n,
    priced,
    fivexx,
    outside: { ...outside, inBudgetPct: pct(outside) },
    inside: { ...inside, inBudgetPct: pct(inside) },
    faults: byFault.map((w, i) => ({ kind: faults[i]?.kind ?? "", ...w, inBudgetPct: pct(w) })),
    missSeconds: [...missesBySecond.values()]
      .sort((a, b) => b.late + b.none - (a.late + a.none))
      .slice(0, 16)
      .map(({ second, late, none, window }) => {
        const f = faults[window];
        return {
          at: new Date(second * 1_000).toISOString(),
          late,
          none,
          during: f ? `${f.kind} +${((second * 1_000 - f.cutAt) / 1_000).toFixed(0)} s` : "outside",
        };
      }),
  };
}

/** ms from `backAt` to the first quote answered 200 that was sent at or after it. */
function firstPriced(quotes: OpenLoopResult[], backAt: number): number | undefined {
  let best: number | undefined;
  for (const r of requests(quotes)) {
    if (r.at < backAt || r.status !== 200) continue;
    const answeredAt = r.at + r.ms - backAt;
    if (best === undefined || answeredAt < best) best = answeredAt;
  }
  return best;
}

/** Markouts due (a fill's settle time + its horizon) more than 10 s before `toMs` and not in the ledger. */
async function lostMarkouts(url: string, fromMs: number, toMs: number) {
  const ledger = await openLedger({ kind: "postgres", url });
  try {
    const fills = await ledger.db.query<{ tx_signature: string; settled_at_ms: string }>(
      "SELECT tx_signature, settled_at_ms FROM fills WHERE outcome = 'landed' AND sent_at_ms >= $1",
      [fromMs - 60_000],
    );
    const rows = await ledger.db.query<{ tx_signature: string; horizon: string }>(
      "SELECT tx_signature, horizon FROM markouts",
    );
    const have = new Set(rows.map((r) => `${r.tx_signature}/${r.horizon}`));
    let due = 0;
    const missing: string[] = [];
    for (const f of fills)
      for (const h of MARKOUT_HORIZONS) {
        if (Number(f.settled_at_ms) + h.ms > toMs - 10_000) continue;
        due++;
        if (!have.has(`${f.tx_signature}/${h.label}`))
          missing.push(`${f.tx_signature.slice(0, 8)} ${h.label}`);
      }
    return { due, lost: missing.length, missing: missing.slice(0, 20) };
  } finally {
    await ledger.db.close();
  }
}

function print(r: {
  settings: Record<string, number>;
  suspensions: number;
  swaps: {
    requested: number;
    landed: number;
    outcomes: Record<string, number>;
    errorSamples: string[];
    missesByWindow: Record<string, Record<string, number>>;
  };
  ledger: { ok: boolean; problems: string[]; figures: { chainFills: number; ledgerLanded: number } };
  markouts: { due: number; lost: number; missing: string[] };
  quotes: ReturnType<typeof summarize>;
  faults: (Fault & { firstPricedMs: number | undefined })[];
}): void {
  const q = r.quotes;
  const lines = [
    "",
    `== soak: ${JSON.stringify(r.settings)}`,
    `operator suspensions (fill-rate rule)   ${r.suspensions}`,
    `swaps                                   ${r.swaps.landed}/${r.swaps.requested} landed; ${JSON.stringify(r.swaps.outcomes)}`,
    ...r.swaps.errorSamples.slice(0, 3).map((e) => `    ${e.slice(0, 160)}`),
    "    not landed, by where the order was asked (fault windows from 2 s before the cut):",
    ...Object.entries(r.swaps.missesByWindow).map(([w, o]) => `      ${w.padEnd(20)} ${JSON.stringify(o)}`),
    `doubled or missing fills                ${r.ledger.problems.length} problems (${r.ledger.figures.chainFills} fills on chain, ${r.ledger.figures.ledgerLanded} landed in the ledger)`,
    ...r.ledger.problems.slice(0, 10).map((p) => `    ${p}`),
    `lost markouts                           ${r.markouts.lost} of ${r.markouts.due} due${r.markouts.missing.length ? `: ${r.markouts.missing.join(", ")}` : ""}`,
    `5xx                                     ${q.fivexx} of ${q.sent} quotes`,
    `quotes in budget outside fault windows  ${q.outside.inBudgetPct.toFixed(3)} % of ${q.outside.n} (${q.outside.late} answered late, ${q.outside.none} not answered)`,
    `quotes in budget inside fault windows   ${q.inside.inBudgetPct.toFixed(3)} % of ${q.inside.n} (${q.inside.late} answered late, ${q.inside.none} not answered)`,
    ...q.faults.map(
      (w) =>
        `    ${w.kind.padEnd(16)} ${w.inBudgetPct.toFixed(3).padStart(7)} % of ${String(w.n).padStart(5)}: ${w.late} answered late, ${w.none} not answered`,
    ),
    "the seconds with the most misses (by the second sent in):",
    ...q.missSeconds.map(
      (s) =>
        `    ${s.at.slice(11, 19)} ${String(s.late).padStart(5)} answered late ${String(s.none).padStart(5)} not answered  (${s.during})`,
    ),
    "first priced quote after each recovery:",
    ...r.faults.map(
      (f) =>
        `    ${f.kind.padEnd(16)} outage ${String(f.backAt - f.cutAt).padStart(6)} ms, first priced ${f.firstPricedMs === undefined ? "none" : `${Math.round(f.firstPricedMs)} ms`} after${f.note ? ` (${f.note})` : ""}`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`soak failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

/**
 * `npm run bench:shed`: what a shed quote costs beside a priced one and beside Node's own floor, the
 * figure that decides how much a saturated core still prices (README, _Past capacity_).
 *
 * Four servers take the same open-loop load in turn, each round in a new order, the server pinned to
 * one CPU and this generator and Redis to the other (as `--pin` in the sweep):
 *
 *   floor   node:http answering a fixed 404 as soon as the headers are read, body unread
 *           (sandbox/loadtest/bare.ts --kind floor): the least any refusal inside Node can cost;
 *   http    bare node:http reading and parsing the body (the sweep's baseline);
 *   shed    the webhook as `npm start` builds it (Redis quote store, API key), every request's
 *           `x-request-start` 200 ms old, so every quote is shed as OVERLOADED before its body is read;
 *   priced  the same webhook with fresh requests: every quote priced, stored in Redis, answered 200.
 *
 * Each figure is the server process's CPU (its threads' scheduler time, user and kernel alike, to
 * the nanosecond: `treeCpuSeconds`) over the requests of one measured window, less its CPU at rest. The machines here drift by 25% or more within minutes, so every ratio is taken within a
 * round (seconds apart) and the median of the rounds is reported. The rate is a fixed one below
 * saturation (default 2,000/s): near saturation a request costs less (more of them per wake-up),
 * for all four alike.
 *
 * A server that answers anything but what it is there to measure (the shed webhook a 200, or a quote
 * shed for another reason than its age) fails the run: the figures would compare different work.
 * One exception: a round in which the priced webhook shed quotes (the machine slowed until it could
 * not price the rate) is left out and said so; the run fails if half the rounds are.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { buildMix, DEFAULT_MIX } from "../sandbox/loadtest/mix.ts";
import { runOpenLoop } from "../sandbox/loadtest/open-loop.ts";
import {
  SHED_TARGET_NAMES,
  SHED_TARGETS,
  type ShedRound,
  type ShedTarget,
  shedSummaryText,
  summarizeShedRounds,
} from "../sandbox/loadtest/shed-model.ts";
import { startBareTarget, type Target } from "../sandbox/loadtest/sweep.ts";
import { parseArgs } from "../src/cli/args.ts";
import { metricSum } from "../tooling/metrics.ts";
import {
  type Child,
  descendantPids,
  freePort,
  pinProcesses,
  pinSplit,
  REPO_ROOT,
  spawnBuiltWebhook,
  startRedis,
  treeCpuSeconds,
  waitForHttp,
} from "../tooling/processes.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:shed",
  summary:
    "CPU per request of a shed quote, a priced one, bare node:http and Node's own floor (a fixed 404),\n" +
    "measured in turn at one rate, and what they allow at 1.2x capacity (README, Past capacity).",
  flags: {
    rate: { type: "string", value: "N", default: "2000", description: "requests per second" },
    seconds: {
      type: "string",
      value: "S",
      default: "1.5",
      description: "measured seconds per server per round (after 0.5 s unmeasured)",
    },
    rounds: { type: "string", value: "N", default: "24", description: "rounds (each server once per round)" },
    pin: {
      type: "string",
      value: "yes|no",
      default: "yes",
      description: "servers on one CPU, generator and Redis on the others",
    },
  },
});

const rate = Number(args.rate);
const seconds = Number(args.seconds);
const roundCount = Number(args.rounds);
for (const [flag, v] of [
  ["--rate", rate],
  ["--seconds", seconds],
  ["--rounds", roundCount],
] as const)
  if (!(Number.isFinite(v) && v > 0)) throw new Error(`${flag}: expected a positive number, got ${v}`);

/** `x-request-start` this far back: past the shed share (0.6 of 250 ms), short of the deadline. */
const SHED_SKEW_MS = 200;
const BUDGET_MS = 250;
const WARMUP_S = 0.5;
/** Seconds the servers are watched at rest, before the rounds and again after them. */
const IDLE_S = 5;
const API_KEY = "bench-shed-api-key-0123456789abcdef";

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const outDir = join(REPO_ROOT, "results", `shed-${stamp}`);
mkdirSync(outDir, { recursive: true });
const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);
const split = args.pin === "yes" ? pinSplit(1) : undefined;

const children: Child[] = [];
const bares: Target[] = [];
const redis = await startRedis();
const stopAll = async () => {
  await Promise.all([...children.map((c) => c.stop()), ...bares.map((b) => b.close())]);
  await redis.stop();
};
process.on("SIGINT", () => void stopAll().then(() => process.exit(130)));

interface Server {
  url: URL;
  pid: number;
  /** The webhook's operations port (its /metrics). */
  adminPort?: number;
}

/**
 * The webhook's count of quotes shed before their body was read, from its /metrics: OVERLOADED, and
 * DEADLINE for one that also arrived within the minimum budget of its deadline (the same early path).
 */
async function shedCount(adminPort: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const count = (reason: string) => metricSum(text, "rfq_no_quote_total", { reason });
  return { OVERLOADED: count("OVERLOADED"), DEADLINE: count("DEADLINE") };
}

/** The sweep's bare server of this kind (sandbox/loadtest/bare.ts), one process. */
async function bare(kind: "floor" | "http"): Promise<Server> {
  const t = await startBareTarget(kind, 1, outDir);
  bares.push(t);
  return { url: t.urls[0] as URL, pid: t.groups.server?.[0] as number };
}

async function webhook(): Promise<Server> {
  const port = await freePort();
  const adminPort = await freePort();
  const child = spawnBuiltWebhook(
    "webhook",
    {
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      REDIS_URL: redis.url,
      API_KEY,
      LEDGER: "off",
      WORKERS: "1",
    },
    join(outDir, "webhook.log"),
  );
  children.push(child);
  await waitForHttp(`http://127.0.0.1:${port}/health`, child);
  return { url: new URL(`http://127.0.0.1:${port}/quote`), pid: child.proc.pid as number, adminPort };
}

try {
  const [floor, http, hook] = await Promise.all([bare("floor"), bare("http"), webhook()]);
  const servers: Record<ShedTarget, Server> = { floor, http, shed: hook, priced: hook };
  if (split) {
    for (const s of [floor, http, hook]) pinProcesses([s.pid, ...descendantPids(s.pid)], split.server);
    pinProcesses([process.pid, ...(redis.pid ? [redis.pid] : [])], split.rest);
  }
  const expected: Record<ShedTarget, number> = { floor: 404, http: 200, shed: 404, priced: 200 };
  // Every request must be priced: no unknown mints or oversized amounts in this mix.
  const mixOf = (n: number, seed: string) =>
    buildMix(file, n, { ...DEFAULT_MIX, unknownMintShare: 0, oversizeShare: 0, seed });
  /** One window: `WARMUP_S` unmeasured, then `seconds` measured, on the same connections. */
  const load = (t: ShedTarget, seed: string, onMeasureStart: () => void) =>
    runOpenLoop(mixOf(Math.ceil((WARMUP_S + seconds) * rate), seed), {
      url: servers[t].url,
      rate,
      durationS: seconds,
      warmupS: WARMUP_S,
      budgetMs: BUDGET_MS,
      apiKey: API_KEY,
      requestTimeoutMs: 2_000,
      maxSockets: 64,
      startSkewMs: t === "shed" ? SHED_SKEW_MS : 0,
      onMeasureStart,
    });

  process.stdout.write(
    `bench:shed: ${rate}/s, ${seconds} s per server, ${roundCount} rounds${split ? `, servers on CPU ${split.server}` : ", unpinned"}\n`,
  );
  // What each server spends at rest (timers, the paper chain's clock, metrics), per second: taken
  // out of every window below, so that the figures are per request. Measured for all three at once
  // (they idle side by side), before the rounds and after them.
  const processes = { floor, http, webhook: hook };
  /** Each process's CPU at rest, as a share of a core, in `processes`' order. */
  const idleShares = async (): Promise<number[]> => {
    const cpus = () => Object.values(processes).map((srv) => treeCpuSeconds(srv.pid));
    const t0 = performance.now();
    const c0 = cpus();
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const s = (performance.now() - t0) / 1000;
    return cpus().map((c, k) => (c - (c0[k] as number)) / s);
  };
  // First use of each path (JIT, the Redis client's script load, the pricing caches) is slow enough
  // to queue a few hundred ms of quotes on a slow machine: every target runs once, unmeasured.
  for (const t of SHED_TARGETS) await load(t, `shed:${stamp}:first:${t}`, () => {});
  const idleBefore = await idleShares();
  const skipped: string[] = [];
  const rawRounds: { t: ShedTarget; pid: number; used: number; s: number; n: number }[][] = [];
  for (let i = 0; i < roundCount; i++) {
    const order = SHED_TARGETS.map((_, k) => SHED_TARGETS[(k + i) % SHED_TARGETS.length] as ShedTarget);
    const windows: (typeof rawRounds)[number] = [];
    for (const t of order) {
      const cpu = () => treeCpuSeconds(servers[t].pid);
      const shedBefore = t === "shed" ? await shedCount(hook.adminPort as number) : {};
      let before = Number.NaN;
      let t0 = Number.NaN;
      const res = await load(t, `shed:${stamp}:${i}:${t}`, () => {
        before = cpu();
        t0 = performance.now();
      });
      const used = cpu() - before;
      windows.push({
        t,
        pid: servers[t].pid,
        used,
        s: (performance.now() - t0) / 1000,
        n: res.status.length,
      });
      if (t === "shed") {
        // Every request of the window (warm-up too) shed before its body was read, not declined
        // later for another reason.
        const after = await shedCount(hook.adminPort as number);
        const by = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (shedBefore[k] ?? 0)]));
        const shed = Object.values(by).reduce((a, b) => a + b, 0);
        if (shed !== res.sent)
          throw new Error(
            `round ${i + 1}: ${shed} of ${res.sent} quotes were shed before their body was read (${JSON.stringify(by)})`,
          );
      }
      const n = res.status.length;
      const right = res.status.filter((s) => s === expected[t]).length;
      if (right < n) {
        const counts: Record<string, number> = {};
        for (const s of res.status) counts[s] = (counts[s] ?? 0) + 1;
        const what = `${n - right} of ${n} answers were not ${expected[t]} (statuses ${JSON.stringify(counts)}; samples: ${res.errorSamples.slice(0, 3).join(" | ")})`;
        // A priced webhook that shed (404s only) could not price this rate while the machine was this
        // slow: the round is left out. Anything else means the servers answer other work than claimed.
        const onlyShed = t === "priced" && Object.keys(counts).every((k) => k === "200" || k === "404");
        if (!onlyShed) throw new Error(`round ${i + 1}, ${SHED_TARGET_NAMES[t]}: ${what}`);
        skipped.push(
          `round ${i + 1}: the priced webhook shed ${n - right} of ${n} quotes (saturated at ${rate}/s)`,
        );
        windows.length = 0;
        break;
      }
    }
    if (windows.length) rawRounds.push(windows);
  }
  for (const line of skipped) process.stdout.write(`  left out: ${line}\n`);
  if (rawRounds.length * 2 < roundCount)
    throw new Error(
      `${skipped.length} of ${roundCount} rounds left out: the webhook cannot price ${rate}/s on this machine now; lower --rate`,
    );
  const idleAfter = await idleShares();
  /** Share of a core at rest by process: the mean of before and after the rounds. */
  const idle = Object.fromEntries(
    Object.keys(processes).map((name, k) => [
      name,
      ((idleBefore[k] as number) + (idleAfter[k] as number)) / 2,
    ]),
  );
  const idleOfPid = new Map(Object.entries(processes).map(([name, srv]) => [srv.pid, idle[name] as number]));
  const idleLine = Object.entries(idle)
    .map(([name, share]) => `${name} ${(share * 100).toFixed(2)}%`)
    .join(", ");
  process.stdout.write(`  at rest (share of a core, taken out of each window): ${idleLine}\n`);
  const rounds: ShedRound[] = rawRounds.map((windows) => {
    const round = {} as ShedRound;
    for (const w of windows) round[w.t] = ((w.used - (idleOfPid.get(w.pid) ?? 0) * w.s) / w.n) * 1e6;
    return round;
  });
  for (const [i, round] of rounds.entries())
    process.stdout.write(
      `  round ${i + 1}: ${SHED_TARGETS.map((t) => `${t} ${round[t].toFixed(1)} µs`).join(", ")}\n`,
    );
  const summary = summarizeShedRounds(rounds);
  const text = shedSummaryText(summary, rate);
  process.stdout.write(`${text.join("\n")}\n`);
  writeFileSync(
    join(outDir, "shed.json"),
    `${JSON.stringify({ settings: { rate, seconds, rounds: roundCount, pinned: split ?? null }, skipped, idleCoreShare: idle, rawRounds, rounds, summary }, null, 2)}\n`,
  );
  writeFileSync(join(outDir, "shed.txt"), `${text.join("\n")}\n`);
  process.stdout.write(`report: ${outDir}/shed.{json,txt}\n`);
} finally {
  await stopAll();
}

/**
 * Runs builds of the webhook as processes, as `npm start` runs them, and drives them over real HTTP,
 * for `npm run bench:quote-ab -- --http RATE`: the same paired comparison as the in-process one
 * (listener-harness.ts), with Node's HTTP parser, socket writes and the Redis server counted.
 *
 * Both builds run at once on the same CPU (the load test's `--pin` split: this generator and Redis on
 * the rest) and share one Redis; each window sends one build the load test's request mix, open-loop
 * at a fixed rate, and reads the CPU that build's process and Redis used over the window's measured
 * requests. A build sitting idle costs a little (timers, the paper chain's clock): the same for both,
 * it is in both figures.
 */
import { readFileSync } from "node:fs";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { buildMix, DEFAULT_MIX } from "../sandbox/loadtest/mix.ts";
import { runOpenLoop } from "../sandbox/loadtest/open-loop.ts";
import {
  type Child,
  descendantPids,
  freePort,
  pinProcesses,
  spawnWebhookBuild,
  treeCpuSeconds,
  waitForHttp,
} from "../tooling/processes.ts";

/** One build running as a process: its quote URL, the CPU figures measured on it, its answers. */
export interface ProcessBuild {
  name: string;
  url: URL;
  pid: number;
  statuses: Map<number, number>;
  /** Redis' CPU per request (µs) in each measured window of this build. */
  redisUs: number[];
  stop: () => Promise<void>;
}

/** Starts `root`'s build (tooling's `spawnWebhookBuild`) on Redis at `redisUrl`, and waits for /health. */
export async function startBuild(
  name: string,
  root: string,
  opts: { redisUrl: string; apiKey?: string | undefined; logPath: string; cpuList?: string | undefined },
): Promise<ProcessBuild> {
  const port = await freePort();
  const adminPort = await freePort();
  const child: Child = spawnWebhookBuild(
    root,
    name,
    {
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      REDIS_URL: opts.redisUrl,
      LEDGER: "off",
      WORKERS: "1",
      LOG_LEVEL: "warn",
      ...(opts.apiKey ? { API_KEY: opts.apiKey } : {}),
    },
    opts.logPath,
  );
  try {
    await waitForHttp(`http://127.0.0.1:${port}/health`, child);
  } catch (e) {
    await child.stop();
    throw e;
  }
  const pid = child.proc.pid as number;
  if (opts.cpuList) pinProcesses([pid, ...descendantPids(pid)], opts.cpuList);
  return {
    name,
    url: new URL(`http://127.0.0.1:${port}/quote`),
    pid,
    statuses: new Map(),
    redisUs: [],
    stop: () => child.stop(),
  };
}

/**
 * A window's measure for `takeTurns`: `seconds` of the load test's mix at `rate` (after half a second
 * unmeasured) to `b`; returns its process's CPU per measured request (µs) and records Redis'.
 */
export function openLoopWindow(opts: {
  rate: number;
  seconds: number;
  apiKey?: string | undefined;
  redisPid: number | undefined;
}): (b: ProcessBuild) => Promise<number> {
  const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")), DEFAULT_CONFIG_PATH);
  const warmupS = 0.5;
  let window = 0;
  const redisCpu = () => (opts.redisPid ? treeCpuSeconds(opts.redisPid) : Number.NaN);
  return async (b) => {
    const mix = buildMix(file, Math.ceil((warmupS + opts.seconds) * opts.rate), {
      ...DEFAULT_MIX,
      seed: `quote-ab:${window++}`,
    });
    let cpu0 = 0;
    let redis0 = 0;
    const res = await runOpenLoop(mix, {
      url: b.url,
      rate: opts.rate,
      durationS: opts.seconds,
      warmupS,
      budgetMs: 250,
      requestTimeoutMs: 2_000,
      maxSockets: 64,
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      onMeasureStart: () => {
        cpu0 = treeCpuSeconds(b.pid);
        redis0 = redisCpu();
      },
    });
    const n = res.status.length;
    const used = treeCpuSeconds(b.pid) - cpu0;
    b.redisUs.push(((redisCpu() - redis0) / n) * 1e6);
    for (const s of res.status) b.statuses.set(s, (b.statuses.get(s) ?? 0) + 1);
    return (used / n) * 1e6;
  };
}

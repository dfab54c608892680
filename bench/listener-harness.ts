/**
 * Drives a build's operator listener in-process, for the quote path's paired benchmarks
 * (`bench:quote-ab`, `bench:quote-parts`).
 *
 * The listener gets mock requests and responses shaped as Node's: headers, then the body in one
 * chunk; `writeHead`, then `end`. So Node's HTTP parser and socket writes are left out. They are
 * Node's, the same for every variant. What is left is the listener's own work, and the Redis
 * client's socket work when the build stores quotes in Redis.
 */
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { buildMix } from "../sandbox/loadtest/mix.ts";
import { percentile } from "../sandbox/loadtest/stats.ts";

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** One variant under measurement: a listener, the path it serves quotes on, its answers' statuses. */
export interface Build {
  name: string;
  listener: Listener;
  path: string;
  statuses: Map<number, number>;
  /** Stops what the variant started (the composed service's ports and Redis connections). */
  close?: () => Promise<void>;
}

/**
 * Composes the service from `root`'s build (`dist/`, its config and metrics) as `npm start` does,
 * and returns its operator listener. Quotes go to the Redis at `redisUrl`, or to the in-memory store
 * when it is undefined. No fill ledger, logs at warn.
 */
export async function composeBuild(
  name: string,
  root: string,
  redisUrl: string | undefined,
  apiKey?: string,
): Promise<Build> {
  const mod = (p: string) => import(pathToFileURL(join(root, "dist", p)).href);
  const load = await mod("config/load.js");
  const { composeService } = await mod("src/compose.js");
  const { requestListener } = await mod("src/http/listener.js");
  const { createLogger } = await mod("src/observability/logger.js");
  const { Metrics } = await mod("src/observability/metrics.js");
  const env = {
    LOG_LEVEL: "warn",
    LEDGER: "off",
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...(apiKey ? { API_KEY: apiKey } : {}),
  };
  // As `npm start` loads it: that build's own default config file, under this environment.
  const config = load.loadConfig(env);
  const service = await composeService(config, {
    log: createLogger("warn"),
    metrics: new Metrics({ defaultMetrics: false }),
  });
  return {
    name,
    listener: requestListener(service.app),
    path: `${config.file.basePath}/quote`,
    statuses: new Map(),
    close: () => service.close(),
  };
}

/** Node's IncomingMessage as the listener reads it: headers, then the body in one chunk. */
class MockRequest extends EventEmitter {
  readonly method = "POST";
  readableEnded = false;
  readonly headers: Record<string, string>;
  constructor(
    readonly url: string,
    body: Buffer,
    apiKey: string | undefined,
  ) {
    super();
    this.headers = {
      host: "127.0.0.1",
      connection: "keep-alive",
      "content-type": "application/json",
      "content-length": String(body.length),
      "x-request-timeout": "250",
      "x-request-start": String(Date.now()),
      ...(apiKey ? { "x-api-key": apiKey } : {}),
    };
    queueMicrotask(() => {
      this.emit("data", body);
      this.readableEnded = true;
      this.emit("end");
    });
  }
}

/** ServerResponse as the quote listener writes it: writeHead, then end with the body. */
class MockResponse {
  private status = 0;
  constructor(private readonly done: (status: number) => void) {}
  writeHead(status: number): this {
    this.status = status;
    return this;
  }
  setHeader(): void {}
  end(): void {
    this.done(this.status);
  }
}

/**
 * The load test's request mix (the default config's pairs), each request with a quoteId of its own,
 * as the load test sends them: `next()` gives the next body.
 */
export function requestBodies(): () => Buffer {
  const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
  const mix = buildMix(file, 20_000).map((m) => m.body.toString("utf8"));
  const salt = Math.random().toString(36).slice(2, 8);
  let seq = 0;
  return () => {
    const i = seq++;
    return Buffer.from(
      (mix[i % mix.length] as string).replace(/"quoteId":"[^"]+"/, `"quoteId":"ab-${salt}-${i}"`),
    );
  };
}

/**
 * This process's CPU (user + system) per request, µs, over `chunk` requests through `t`'s listener
 * with `concurrency` in flight. Each answer's status is counted in `t.statuses`.
 */
export async function cpuPerRequest(
  t: Build,
  next: () => Buffer,
  opts: { chunk: number; concurrency: number; apiKey?: string | undefined },
): Promise<number> {
  let left = opts.chunk;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (left-- > 0) {
        await new Promise<void>((resolve) =>
          t.listener(
            new MockRequest(t.path, next(), opts.apiKey) as unknown as IncomingMessage,
            new MockResponse((status) => {
              t.statuses.set(status, (t.statuses.get(status) ?? 0) + 1);
              resolve();
            }) as unknown as ServerResponse,
          ),
        );
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / opts.chunk;
}

/**
 * Each variant's CPU per request (µs), chunk by chunk: `warmups` rounds unrecorded (and their answers
 * not counted), then `rounds` rounds, every variant once per round, the order reversed every other
 * round so that no variant always runs right after a collection another caused. `out[v][i]` is
 * variant v's figure in round i: the same round's figures are seconds apart, and their ratios or
 * differences cancel the machine's drift.
 */
export async function takeTurns<T extends { statuses: Map<number, number> }>(
  variants: readonly T[],
  opts: { rounds: number; warmups: number },
  measure: (t: T) => Promise<number>,
): Promise<number[][]> {
  for (let i = 0; i < opts.warmups; i++) for (const t of variants) await measure(t);
  for (const t of variants) t.statuses.clear();
  const out = variants.map((): number[] => []);
  const order = variants.map((_, v) => v);
  for (let i = 0; i < opts.rounds; i++) {
    for (const v of i % 2 === 0 ? order : [...order].reverse())
      (out[v] as number[]).push(await measure(variants[v] as T));
  }
  return out;
}

/** "200: n, 404: m" for a build's answers. */
export function statusCounts(t: { statuses: Map<number, number> }): string {
  return [...t.statuses]
    .sort(([x], [y]) => x - y)
    .map(([s, n]) => `${s}: ${n}`)
    .join(", ");
}

/** The median of `values` (the load test's `percentile`, at 50). */
export function median(values: ArrayLike<number>): number {
  return percentile(Float64Array.from(values).sort(), 50);
}

/** B / A round by round (the rounds of `takeTurns`): "median m, quartiles q1-q3". */
export function pairedRatios(a: readonly number[], b: readonly number[]): string {
  const ratios = Float64Array.from(a, (v, i) => (b[i] as number) / v).sort();
  const at = (p: number) => percentile(ratios, p).toFixed(3);
  return `median ${at(50)}, quartiles ${at(25)}-${at(75)}`;
}

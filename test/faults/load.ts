/**
 * Operator-shaped quote load for the fault suite: requests at a constant arrival rate (open loop: a
 * request is sent when it is due, whatever happened to the ones before), each stamped with
 * `x-request-start` when it is written and `x-request-timeout: 250`, over keep-alive connections
 * that honour `Connection: close` (node:http's agent). Bounded in count (rate x duration) and time
 * (each request gives up after `timeoutMs`). Loopback only.
 */
import { Agent, request } from "node:http";
import { RawHttpPool } from "../../sandbox/loadtest/raw-http.ts";
import { API_KEY, quoteRequest } from "./stack.ts";

export const BUDGET_MS = 250;

export interface Answer {
  /** ms epoch: x-request-start (when the request was written). */
  startMs: number;
  /** ms epoch when the answer was complete (or the request failed). */
  endMs: number;
  /** 0 when there was no HTTP answer. */
  status: number;
  /** The 404 message, or the network error. */
  detail: string;
  /** How late the request went out against its schedule (this process's own lag), ms. */
  sendLagMs: number;
}

export interface LoadOptions {
  rate: number;
  durationMs: number;
  timeoutMs?: number;
  maxSockets?: number;
  /**
   * "raw": prebuilt bytes over raw keep-alive sockets (sandbox/loadtest/raw-http.ts), the cheapest
   * client, so the load generator does not take the webhook's CPU; "node": node:http's agent, which
   * honours `Connection: close` (the shutdown scenario needs that).
   */
  client?: "raw" | "node";
}

/** The quote rate the suite drives (FAULT_QUOTE_RATE, default 500/s). */
export const QUOTE_RATE = Number(process.env.FAULT_QUOTE_RATE ?? 500);

/** Runs the load; resolves once every request has an answer or has failed. */
export async function quoteLoad(url: string, o: LoadOptions): Promise<Answer[]> {
  const target = new URL("/quote", url);
  const agent = new Agent({ keepAlive: true, maxSockets: o.maxSockets ?? 64 });
  const total = Math.round((o.rate * o.durationMs) / 1000);
  const interval = 1000 / o.rate;
  const answers: Answer[] = [];
  const inflight: Promise<void>[] = [];
  const t0 = Date.now();

  const pool = o.client === "node" ? undefined : new RawHttpPool(target, o.maxSockets ?? 64);
  const rawHead = `POST /quote HTTP/1.1\r\nhost: ${target.host}\r\nconnection: keep-alive\r\ncontent-type: application/json\r\nx-api-key: ${API_KEY}\r\nx-request-timeout: ${BUDGET_MS}\r\n`;

  const oneRaw = (due: number, p: RawHttpPool) =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify(quoteRequest());
      const startMs = Date.now();
      const bytes = Buffer.from(
        `${rawHead}x-request-start: ${startMs}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      void p.request(bytes, o.timeoutMs ?? 30_000).then((r) => {
        const status = r.ok ? r.res.status : 0;
        const detail = r.ok ? (status === 200 ? "" : r.res.body.toString().slice(0, 120)) : r.error;
        answers.push({ startMs, endMs: Date.now(), status, detail, sendLagMs: startMs - due });
        resolve();
      });
    });

  const one = (due: number) =>
    pool
      ? oneRaw(due, pool)
      : new Promise<void>((resolve) => {
          const body = JSON.stringify(quoteRequest());
          const startMs = Date.now();
          const done = (status: number, detail: string) => {
            answers.push({ startMs, endMs: Date.now(), status, detail, sendLagMs: startMs - due });
            resolve();
          };
          const req = request(
            target,
            {
              method: "POST",
              agent,
              headers: {
                "content-type": "application/json",
                "content-length": Buffer.byteLength(body),
                "x-api-key": API_KEY,
                "x-request-start": String(startMs),
                "x-request-timeout": String(BUDGET_MS),
              },
              timeout: o.timeoutMs ?? 30_000,
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (c: Buffer) => chunks.push(c));
              res.on("end", () => {
                const text = Buffer.concat(chunks).toString();
                done(res.statusCode ?? 0, res.statusCode === 200 ? "" : text.slice(0, 120));
              });
              res.on("error", (e) => done(0, e.message));
            },
          );
          req.on("timeout", () => req.destroy(new Error("timeout")));
          req.on("error", (e: NodeJS.ErrnoException) => done(0, e.code ?? e.message));
          req.end(body);
        });

  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = Date.now();
      while (next < total && t0 + next * interval <= now) inflight.push(one(t0 + next++ * interval));
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await Promise.all(inflight);
  agent.destroy();
  pool?.close();
  return answers.sort((a, b) => a.startMs - b.startMs);
}

export interface Figures {
  sent: number;
  byStatus: Record<string, number>;
  /** Answers complete more than 250 ms after x-request-start. */
  late: number;
  /** The slowest answer after x-request-start, ms. */
  maxMs: number;
  p99Ms: number;
  /** 404s by message. */
  noQuote: Record<string, number>;
  maxSendLagMs: number;
}

export function figures(answers: readonly Answer[]): Figures {
  const byStatus: Record<string, number> = {};
  const noQuote: Record<string, number> = {};
  let late = 0;
  const lat: number[] = [];
  let maxSendLagMs = 0;
  for (const a of answers) {
    const key = a.status === 0 ? `error(${a.detail})` : String(a.status);
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    if (a.status === 404) {
      const m = /"message":"no quote: ([^":;(]*)/.exec(a.detail)?.[1]?.trim() ?? a.detail;
      noQuote[m] = (noQuote[m] ?? 0) + 1;
    }
    const ms = a.endMs - a.startMs;
    lat.push(ms);
    if (ms > BUDGET_MS) late++;
    maxSendLagMs = Math.max(maxSendLagMs, a.sendLagMs);
  }
  lat.sort((x, y) => x - y);
  return {
    sent: answers.length,
    byStatus,
    late,
    maxMs: lat.at(-1) ?? 0,
    p99Ms: lat[Math.floor(lat.length * 0.99)] ?? 0,
    noQuote,
    maxSendLagMs: Math.round(maxSendLagMs),
  };
}

/** Answers whose request went out in [fromMs, toMs). */
export const between = (answers: readonly Answer[], fromMs: number, toMs: number) =>
  answers.filter((a) => a.startMs >= fromMs && a.startMs < toMs);

/** Prints a scenario's figures as one block (the suite's report). */
export function report(title: string, rows: Record<string, unknown>): void {
  const lines = Object.entries(rows).map(
    ([k, v]) => `  ${k.padEnd(34)} ${typeof v === "string" ? v : JSON.stringify(v)}`,
  );
  console.log(`\n== ${title}\n${lines.join("\n")}`);
}

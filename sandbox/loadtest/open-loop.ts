/**
 * Open-loop sender: request i is due at t0 + i / rate whatever happened to the ones before it
 * (constant arrival rate, not a fixed number of connections), and its latency is measured from that
 * scheduled instant, so a stall anywhere (server, network, or this process) shows up in every request
 * it delayed instead of hiding (coordinated omission). `x-request-start` carries the scheduled
 * instant too, so the webhook's own deadline logic sees the same clock.
 *
 * Bodies are prebuilt buffers and connections come from a raw keep-alive pool (raw-http.ts), so per
 * request this process only writes bytes and reads an answer.
 */
import type { MixRequest } from "./mix.ts";
import { RawHttpPool } from "./raw-http.ts";

export const Outcome = {
  quoted: 0,
  noQuote: 1,
  /** 200 for a request that must 404. */
  unexpectedQuote: 2,
  /** 404 for a request expected to be quoted (never penalised by the operator, but not the mix's intent). */
  unexpectedNoQuote: 3,
  httpError: 4,
  timeout: 5,
  network: 6,
  /** 200 whose body does not echo the request. */
  badBody: 7,
} as const;
export type OutcomeName = keyof typeof Outcome;
export const OUTCOME_NAMES = Object.keys(Outcome) as OutcomeName[];

export interface OpenLoopOptions {
  url: URL;
  /**
   * Several instances (each a URL): request i goes to urls[i % n], as a load balancer spreads the
   * operator's fan-out. Default: `url` alone.
   */
  urls?: URL[];
  rate: number;
  durationS: number;
  /** Sent first at the same rate and left out of the results (connection pool, JIT). */
  warmupS: number;
  budgetMs: number;
  apiKey?: string;
  /** Gives up on an answer after this long (recorded as a timeout). */
  requestTimeoutMs: number;
  /** Connection cap; a request due while all are busy waits (and the wait counts). */
  maxSockets: number;
  /**
   * `x-request-start` is sent this many ms before the scheduled instant (default 0): every quote
   * arrives as one that already waited that long, so a webhook sheds it (src/http/shed.ts).
   */
  startSkewMs?: number;
  /** Called once, just before the first measured request (the end of the warm-up) is sent. */
  onMeasureStart?: () => void;
}

export interface OpenLoopResult {
  /** Per measured request: ms from the run's start to its scheduled send. */
  scheduledMs: Float64Array;
  /** ms from scheduled send to the end of the answer (NaN if none). */
  latencyMs: Float64Array;
  /** ms from scheduled send to the actual write (this process's own lag). */
  sendLagMs: Float64Array;
  outcome: Uint8Array;
  status: Uint16Array;
  /** Kinds of the measured requests (mix labels) and a few sample error details. */
  kinds: string[];
  errorSamples: string[];
  sent: number;
  wallMs: number;
  /** Epoch ms of the first measured request's scheduled send (the end of the warm-up). */
  measuredFromEpochMs: number;
}

/** Runs warm-up plus measurement; `mix` must hold at least (warmup + duration) x rate requests. */
export async function runOpenLoop(mix: MixRequest[], o: OpenLoopOptions): Promise<OpenLoopResult> {
  const warm = Math.round(o.warmupS * o.rate);
  const measured = Math.round(o.durationS * o.rate);
  const total = warm + measured;
  if (mix.length < total) throw new Error(`mix has ${mix.length} requests, ${total} needed`);
  const targets = o.urls?.length ? o.urls : [o.url];
  const pools = targets.map(
    (u) => new RawHttpPool(u, Math.max(1, Math.round(o.maxSockets / targets.length))),
  );
  const res: OpenLoopResult = {
    scheduledMs: new Float64Array(measured),
    latencyMs: new Float64Array(measured).fill(Number.NaN),
    sendLagMs: new Float64Array(measured),
    outcome: new Uint8Array(measured),
    status: new Uint16Array(measured),
    kinds: new Array(measured),
    errorSamples: [],
    sent: 0,
    wallMs: 0,
    measuredFromEpochMs: 0,
  };
  const intervalMs = 1000 / o.rate;
  const skewMs = o.startSkewMs ?? 0;
  // Request bytes: everything but x-request-start and the body is the same for every request.
  const heads = targets.map((u) =>
    Buffer.from(
      `POST ${u.pathname} HTTP/1.1\r\nhost: ${u.hostname}:${u.port || 80}\r\nconnection: keep-alive\r\ncontent-type: application/json\r\n` +
        `x-request-timeout: ${o.budgetMs}\r\n${o.apiKey ? `x-api-key: ${o.apiKey}\r\n` : ""}x-request-start: `,
      "latin1",
    ),
  );
  const sample = (s: string) => {
    if (res.errorSamples.length < 20) res.errorSamples.push(s);
  };

  const t0 = performance.now();
  const epoch0 = Date.now();
  res.measuredFromEpochMs = epoch0 + warm * intervalMs;
  let done = 0;
  let finish!: () => void;
  const allDone = new Promise<void>((r) => {
    finish = r;
  });

  const send = (i: number): void => {
    const req = mix[i] as MixRequest;
    const schedRel = i * intervalMs;
    const m = i - warm; // index in the results, negative during warm-up
    if (m === 0) o.onMeasureStart?.();
    const sentAt = performance.now();
    if (m >= 0) {
      res.scheduledMs[m] = schedRel;
      res.sendLagMs[m] = sentAt - (t0 + schedRel);
      res.kinds[m] = req.kind;
    }
    const record = (outcome: number, status: number, detail?: string) => {
      if (m >= 0) {
        res.latencyMs[m] = performance.now() - (t0 + schedRel);
        res.outcome[m] = outcome;
        res.status[m] = status;
        if (detail && outcome !== Outcome.quoted && outcome !== Outcome.noQuote)
          sample(`${req.kind}: ${detail}`);
      }
      if (++done === total) finish();
    };
    const to = i % targets.length;
    const bytes = Buffer.concat([
      heads[to] as Buffer,
      Buffer.from(
        `${Math.round(epoch0 + schedRel - skewMs)}\r\ncontent-length: ${req.body.length}\r\n\r\n`,
        "latin1",
      ),
      req.body,
    ]);
    void (pools[to] as RawHttpPool).request(bytes, o.requestTimeoutMs).then((r) => {
      if (!r.ok) return record(r.error === "timeout" ? Outcome.timeout : Outcome.network, 0, r.detail);
      const { status, body } = r.res;
      if (status === 200) {
        if (req.expect === "noQuote")
          return record(Outcome.unexpectedQuote, status, "200 for a request that must 404");
        let ok = false;
        try {
          const b = JSON.parse(body.toString()) as {
            quoteId?: string;
            requestId?: string;
            amountOut?: string;
          };
          ok = b.quoteId === req.quoteId && b.requestId === req.requestId && /^\d+$/.test(b.amountOut ?? "");
        } catch {}
        return record(
          ok ? Outcome.quoted : Outcome.badBody,
          status,
          ok ? undefined : "200 body does not echo the request",
        );
      }
      if (status === 404) {
        return record(
          req.expect === "noQuote" ? Outcome.noQuote : Outcome.unexpectedNoQuote,
          status,
          body.toString().slice(0, 160),
        );
      }
      record(Outcome.httpError, status, `status ${status}: ${body.toString().slice(0, 160)}`);
    });
    res.sent++;
  };

  // The scheduler wakes every millisecond and sends everything that has come due; a late wake-up
  // sends the backlog at once, and the latency of each still counts from its own due time.
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now() - t0;
      while (next < total && next * intervalMs <= now) send(next++);
      if (next < total) setTimeout(tick, Math.max(0, Math.min(1, next * intervalMs - now)));
      else resolve();
    };
    tick();
  });
  await allDone;
  res.wallMs = performance.now() - t0;
  for (const p of pools) p.close();
  return res;
}

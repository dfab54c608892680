/**
 * POST /quote on the Hono app: reads the operator's deadline from the headers, sheds past capacity
 * before the body is read (src/http/shed.ts: `DEADLINE` when the budget is spent, `OVERLOADED` once
 * the quote has waited too long in our queue; both fast 404s), parses the body (a 400 naming the
 * field), and writes what the quote's path (src/quote/path.ts) answers. Errors go to the app's error
 * handler, as every route's do, with the quote's ids on their line.
 *
 * Served on node:http, the shed decision is taken before Hono (`quoteGate`): past twice one worker's
 * rate most quotes are shed, and a shed 404 through the whole Hono stack cost 65 µs of CPU, 1.55x a
 * bare node:http answer, so at 3x the shedding alone filled the core and answers went late
 * (docs/capacity.md, "Past capacity"). The gate answers the same 404 with the same counters from the
 * raw request, and hands every other request to Hono with its decision taken (`QuoteAdmission`: each
 * quote is judged once, by the gate or, in-process, by the route).
 */
import type { IncomingMessage } from "node:http";
import type { Context, Hono } from "hono";
import { quoteRequestSchema } from "../contract/quote.ts";
import { apiKeyCheck } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
import { type Deadline, quoteDeadline } from "../http/deadline.ts";
import { type AppEnv, header } from "../http/env.ts";
import type { Gate } from "../http/listener.ts";
import { OVERLOADED_MESSAGE, StandingQueue, shedDecision } from "../http/shed.ts";
import type { Metrics } from "../observability/metrics.ts";
import { declineAnswer, type QuoteResult, quotePath } from "../quote/path.ts";
import { declined, PAST_DEADLINE, QuoteLog, type QuotePorts, sampler } from "../quote/steps/step.ts";

export interface QuoteRouteDeps extends QuotePorts {
  /** Every Nth quote's line also at info (LOG_QUOTE_SAMPLE; 0: none); the others at debug. */
  logSample: number;
  /** Shed (404 OVERLOADED) a quote that waited longer than this share of its budget (0: never). */
  shedShare: number;
}

type Handled = QuoteResult | { outcome: "bad_request" | "error"; error: unknown };

/** One quote's admission: its deadline, and the 404 it is shed with, if it is. */
export interface Admission {
  deadline: Deadline;
  shed?: QuoteResult;
}

/** Judges each quote once on its headers: its deadline, and whether it is shed (src/http/shed.ts). */
export class QuoteAdmission {
  readonly #queue = new StandingQueue();
  /** Decisions the gate took for the requests it handed on to Hono. */
  readonly #taken = new WeakMap<IncomingMessage, Admission>();

  constructor(private readonly deps: Pick<QuoteRouteDeps, "now" | "minBudgetMs" | "shedShare" | "metrics">) {}

  decide(startHeader: string | undefined, timeoutHeader: string | undefined): Admission {
    const { deps } = this;
    const arrival = deps.now();
    const deadline = quoteDeadline(startHeader, timeoutHeader, arrival);
    const queuedMs = arrival - deadline.startMs;
    const budgetMs = deadline.atMs - deadline.startMs;
    const shed = shedDecision({
      nowMs: arrival,
      deadlineAtMs: deadline.atMs,
      minBudgetMs: deps.minBudgetMs,
      queuedMs,
      budgetMs,
      shedShare: deps.shedShare > 0 ? this.#queue.shareFor(arrival, queuedMs, budgetMs, deps.shedShare) : 0,
    });
    if (shed === "DEADLINE") return { deadline, shed: declineAnswer(deps.metrics, PAST_DEADLINE) };
    if (shed === "OVERLOADED")
      return {
        deadline,
        shed: declineAnswer(deps.metrics, declined("OVERLOADED", OVERLOADED_MESSAGE, "shed")),
      };
    return { deadline };
  }

  /** Keeps the gate's decision for a request handed on (read back once by the route). */
  keep(req: IncomingMessage, a: Admission): void {
    this.#taken.set(req, a);
  }

  /** The gate's decision for this request, once; undefined when the gate did not see it (in-process). */
  take(req: IncomingMessage | undefined): Admission | undefined {
    if (!req) return undefined;
    const a = this.#taken.get(req);
    this.#taken.delete(req);
    return a;
  }
}

/** The incoming node:http request behind a Hono context (@hono/node-server's env), if any. */
const incomingOf = (c: Context<AppEnv>): IncomingMessage | undefined =>
  (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;

export function registerQuoteRoute(app: Hono<AppEnv>, deps: QuoteRouteDeps): QuoteAdmission {
  const quote = quotePath(deps);
  const admission = new QuoteAdmission(deps);
  const level = sampler(deps.logSample);

  const handle = async (c: Context<AppEnv>): Promise<Handled> => {
    const admitted =
      admission.take(incomingOf(c)) ??
      admission.decide(header(c, "x-request-start"), header(c, "x-request-timeout"));
    if (admitted.shed) return admitted.shed;
    const req = await parseJsonBody(c, quoteRequestSchema).catch((error: unknown) => ({ error }));
    if ("error" in req) return { outcome: "bad_request", error: req.error };
    const log = new QuoteLog(c.get("log"), { requestId: req.requestId, quoteId: req.quoteId }, level());
    try {
      return await quote(req, admitted.deadline.atMs, log);
    } catch (error) {
      // The error's line (an unexpected error) carries the quote's ids.
      c.set("log", log.line);
      return { outcome: "error", error };
    }
  };

  app.post("/quote", async (c) => {
    const started = performance.now();
    const r = await handle(c).catch((error: unknown): Handled => ({ outcome: "error", error }));
    deps.metrics.quoteLatency.observe({ outcome: r.outcome }, (performance.now() - started) / 1000);
    if ("error" in r) throw r.error;
    return c.json(r.body, r.status);
  });
  return admission;
}

export interface QuoteGateOptions {
  /** The route's full path (basePath + "/quote"), also its label on rfq_http_responses_total. */
  path: string;
  /** The operator's API key (API_KEY): a request without it is left to Hono, which answers 401. */
  apiKey: string | undefined;
  /** A request whose declared body is larger is left to Hono, which answers 413. */
  maxBodyBytes: number;
  metrics: Metrics;
}

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * The quote route's shedding in front of Hono: a POST to the route that Hono would let reach it
 * (its API key right, its declared body within the limit) is judged here; a shed one is answered
 * the route's 404 at once, counted as the route counts it, and every other request goes on to Hono.
 */
export function quoteGate(admission: QuoteAdmission, o: QuoteGateOptions): Gate {
  const keyRefused = apiKeyCheck(o.apiKey);
  return (next) => (req, res) => {
    const path = req.url?.split("?", 1)[0];
    if (req.method !== "POST" || path !== o.path) return next(req, res);
    const length = headerOf(req, "content-length");
    if (
      keyRefused(headerOf(req, "x-api-key")) ||
      (length !== undefined && Number.parseInt(length, 10) > o.maxBodyBytes)
    )
      return next(req, res);
    const started = performance.now();
    const admitted = admission.decide(headerOf(req, "x-request-start"), headerOf(req, "x-request-timeout"));
    const shed = admitted.shed;
    if (!shed) {
      admission.keep(req, admitted);
      return next(req, res);
    }
    const body = JSON.stringify(shed.body);
    res.writeHead(shed.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
    o.metrics.quoteLatency.observe({ outcome: shed.outcome }, (performance.now() - started) / 1000);
    o.metrics.responses.inc({ route: o.path, status: String(shed.status) });
  };
}

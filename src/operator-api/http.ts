/**
 * The operator's swap API over HTTP: GET {base}/ultra/v1/order and POST {base}/swap/v2/execute, with
 * `x-api-key` from the configuration (OPERATOR_API_KEY).
 *
 * Timeouts and retries only where a retry cannot double a trade:
 * - order: a GET that builds a transaction nobody has signed. A timeout, a connection failure or a
 *   5xx is retried (`orderAttempts` in all, with a short pause); a 4xx is not (it would only repeat).
 * - execute: the signed bytes are fixed, and the chain runs one transaction at most once, so sending
 *   the same bytes again cannot double the trade. A connection refused (the request never left) is
 *   retried as if it were the first attempt. A timeout or a reset after the request went out leaves
 *   the first attempt's fate unknown: the same bytes are sent once more to learn it, and only a
 *   `landed` or `failedOnChain` answer is believed; any refusal (the operator may refuse a repeated
 *   requestId, the maker a claimed quote) becomes `notRetrySafe`, because the first attempt may land.
 */
import type { ExecuteOutcomeKind } from "./codes.ts";
import { EXECUTE_CODES, outcomeOfCode } from "./codes.ts";
import type {
  ExecuteOutcome,
  ExecuteRequest,
  OperatorSwapApi,
  OrderParams,
  OrderResult,
} from "./interface.ts";
import { executeErrorSchema, executeResultSchema, simpleErrorSchema, swapOrderSchema } from "./wire.ts";

export interface HttpOperatorSwapApiOptions {
  /** e.g. https://api.example.com (the paths /ultra/v1/order and /swap/v2/execute are appended). */
  baseUrl: string;
  apiKey?: string;
  orderTimeoutMs?: number;
  /** The operator waits for the transaction to land before it answers: give it the blockhash's life. */
  executeTimeoutMs?: number;
  /** Order attempts in all (1 = no retry). */
  orderAttempts?: number;
  /** Sends of the same bytes after a refused connection, in all. */
  executeAttempts?: number;
  retryPauseMs?: number;
  fetch?: typeof fetch;
}

type Transport =
  | { ok: true; status: number; body: string }
  /** `sent`: whether the request may have reached the operator (anything but a refused connection). */
  | { ok: false; sent: boolean; error: string };

const errorCode = (e: unknown): string | undefined => {
  const cause = (e as { cause?: { code?: unknown } })?.cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
};

/** A refused connection or an unresolvable host: the request never left this machine. */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH"]);

const zodIssues = (issues: readonly { path: PropertyKey[]; message: string }[]) =>
  issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join(".") || "body"}: ${i.message}`)
    .join("; ");

export class HttpOperatorSwapApi implements OperatorSwapApi {
  readonly #base: string;
  readonly #headers: Record<string, string>;
  readonly #orderTimeoutMs: number;
  readonly #executeTimeoutMs: number;
  readonly #orderAttempts: number;
  readonly #executeAttempts: number;
  readonly #pauseMs: number;
  readonly #fetch: typeof fetch;

  constructor(opts: HttpOperatorSwapApiOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, "");
    this.#headers = opts.apiKey ? { "x-api-key": opts.apiKey } : {};
    this.#orderTimeoutMs = opts.orderTimeoutMs ?? 5_000;
    this.#executeTimeoutMs = opts.executeTimeoutMs ?? 90_000;
    this.#orderAttempts = Math.max(1, opts.orderAttempts ?? 3);
    this.#executeAttempts = Math.max(1, opts.executeAttempts ?? 3);
    this.#pauseMs = opts.retryPauseMs ?? 250;
    this.#fetch = opts.fetch ?? fetch;
  }

  async #request(url: string, init: RequestInit, timeoutMs: number): Promise<Transport> {
    try {
      const res = await this.#fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      return { ok: true, status: res.status, body: await res.text() };
    } catch (e) {
      const code = errorCode(e);
      const name = (e as Error).name;
      const error =
        name === "TimeoutError"
          ? `no answer within ${timeoutMs} ms`
          : `${(e as Error).message}${code ? ` (${code})` : ""}`;
      return { ok: false, sent: !(code && NOT_SENT_CODES.has(code)), error };
    }
  }

  #pause(): Promise<void> {
    return new Promise((r) => setTimeout(r, this.#pauseMs));
  }

  async order(p: OrderParams): Promise<OrderResult> {
    const query = new URLSearchParams({
      inputMint: p.inputMint,
      outputMint: p.outputMint,
      amount: p.amount.toString(),
    });
    if (p.taker) query.set("taker", p.taker);
    if (p.excludeRouters?.length) query.set("excludeRouters", p.excludeRouters.join(","));
    const url = `${this.#base}/ultra/v1/order?${query}`;
    let last: OrderResult = { ok: false, kind: "unavailable", error: "not attempted", attempts: 0 };
    for (let attempt = 1; attempt <= this.#orderAttempts; attempt++) {
      if (attempt > 1) await this.#pause();
      const t = await this.#request(url, { method: "GET", headers: this.#headers }, this.#orderTimeoutMs);
      if (!t.ok) {
        last = { ok: false, kind: "unavailable", error: t.error, attempts: attempt };
        continue;
      }
      if (t.status === 200) {
        let raw: unknown;
        try {
          raw = JSON.parse(t.body);
        } catch {
          return { ok: false, kind: "malformed", error: "body: not JSON", attempts: attempt };
        }
        const parsed = swapOrderSchema.safeParse(raw);
        if (!parsed.success)
          return { ok: false, kind: "malformed", error: zodIssues(parsed.error.issues), attempts: attempt };
        return { ok: true, order: parsed.data, attempts: attempt };
      }
      const err = simpleErrorSchema.safeParse(safeJson(t.body));
      const error = err.success ? err.data.error : `status ${t.status}: ${t.body.slice(0, 200)}`;
      last = { ok: false, kind: "refused", status: t.status, error, attempts: attempt };
      if (t.status < 500) return last;
    }
    return last;
  }

  async execute(req: ExecuteRequest): Promise<ExecuteOutcome> {
    const init: RequestInit = {
      method: "POST",
      headers: { ...this.#headers, "content-type": "application/json" },
      body: JSON.stringify({
        signedTransaction: req.signedTransaction,
        requestId: req.requestId,
        lastValidBlockHeight: req.lastValidBlockHeight.toString(),
      }),
    };
    const url = `${this.#base}/swap/v2/execute`;
    let attempts = 0;
    let ambiguous: string | undefined;
    for (;;) {
      attempts++;
      const t = await this.#request(url, init, this.#executeTimeoutMs);
      if (t.ok) {
        const outcome = readExecuteAnswer(t.status, t.body, attempts);
        if (ambiguous && outcome.kind !== "landed" && outcome.kind !== "failedOnChain") {
          return {
            ...outcome,
            kind: "notRetrySafe",
            meaning: `${outcome.meaning}, after an earlier attempt whose fate is unknown (${ambiguous})`,
          };
        }
        return outcome;
      }
      if (t.sent) {
        // The first attempt may be on its way to the chain: ask once more with the same bytes.
        if (ambiguous) return unknown(`${ambiguous}; again: ${t.error}`, attempts);
        ambiguous = t.error;
        await this.#pause();
        continue;
      }
      if (ambiguous) return unknown(`${ambiguous}; then: ${t.error}`, attempts);
      if (attempts >= this.#executeAttempts) {
        // Never sent at all: nothing can land, a new order is safe.
        return { kind: "retrySafe", meaning: `not sent: ${t.error}`, error: t.error, attempts };
      }
      await this.#pause();
    }
  }
}

function unknown(error: string, attempts: number): ExecuteOutcome {
  return { kind: "notRetrySafe", meaning: `no answer: ${error}`, error, attempts };
}

function safeJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** One execute answer (any status) as an outcome. */
function readExecuteAnswer(status: number, body: string, attempts: number): ExecuteOutcome {
  const raw = safeJson(body);
  const result = executeResultSchema.safeParse(raw);
  if (result.success) {
    const r = result.data;
    const info = EXECUTE_CODES[r.code];
    let kind: ExecuteOutcomeKind = outcomeOfCode(r.code, r.slot);
    // Status and code must agree; an answer that contradicts itself says nothing safe.
    if ((r.status === "Success") !== (r.code === 0)) kind = "notRetrySafe";
    return {
      kind,
      code: r.code,
      meaning: info ? info.meaning : `unmapped code ${r.code}`,
      ...(r.signature ? { signature: r.signature } : {}),
      ...(r.slot ? { slot: r.slot } : {}),
      ...(r.error ? { error: r.error } : {}),
      result: r,
      attempts,
    };
  }
  const err = executeErrorSchema.safeParse(raw);
  if (err.success) {
    const e = err.data;
    if ("code" in e && typeof e.code === "number") {
      const info = EXECUTE_CODES[e.code];
      return {
        kind: outcomeOfCode(e.code, undefined),
        code: e.code,
        meaning: info ? info.meaning : `unmapped code ${e.code}`,
        error: e.error,
        attempts,
      };
    }
    // `{signature, error}`: it was sent under that signature, and nothing says what became of it.
    return {
      kind: "notRetrySafe",
      meaning: `status ${status} with a signature and no code`,
      ...("signature" in e && typeof e.signature === "string" ? { signature: e.signature } : {}),
      error: e.error,
      attempts,
    };
  }
  if (status === 401 || status === 403) {
    // Refused at the door: the operator never looked at the transaction.
    return {
      kind: "retrySafe",
      meaning: `status ${status} (API key refused)`,
      error: body.slice(0, 200),
      attempts,
    };
  }
  return {
    kind: "notRetrySafe",
    meaning: `status ${status} with an unreadable body`,
    error: body.slice(0, 200),
    attempts,
  };
}

/** The configured client, or undefined when OPERATOR_API_URL is not set. */
export function makeOperatorSwapApi(
  env: { OPERATOR_API_URL?: string | undefined; OPERATOR_API_KEY?: string | undefined },
  opts: Omit<HttpOperatorSwapApiOptions, "baseUrl" | "apiKey"> = {},
): OperatorSwapApi | undefined {
  if (!env.OPERATOR_API_URL) return undefined;
  return new HttpOperatorSwapApi({
    ...opts,
    baseUrl: env.OPERATOR_API_URL,
    ...(env.OPERATOR_API_KEY ? { apiKey: env.OPERATOR_API_KEY } : {}),
  });
}

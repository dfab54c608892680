/**
 * The operator's quote fan-out: one POST /quote to every eligible maker at once, each with
 * `x-request-start` (ms epoch at send) and `x-request-timeout: 250`; answers after the deadline are
 * dropped, malformed ones are ignored, and the best wins: the highest amountOut for exactIn, the lowest
 * amountIn for exactOut, ties to the faster answer.
 */
import { createHash, randomUUID } from "node:crypto";
import { z } from "zod";
import type { QuoteType } from "../../pricing/book.ts";
import { base58Pubkey, positiveU64 } from "../../src/contract/common.ts";
import type { QuoteResponse } from "../../src/contract/quote.ts";
import type { FillRateTracker } from "./fill-rate.ts";
import type { HttpClient } from "./http-client.ts";
import { endpointUrl, type Webhook, type WebhookRegistry } from "./webhooks.ts";

/** The operator's quote budget, sent as x-request-timeout. */
export const QUOTE_TIMEOUT_MS = 250;

export interface QuoteIntent {
  inputMint: string;
  outputMint: string;
  amount: bigint;
  quoteType: QuoteType;
  feeBps: number;
  taker?: string;
  receiver?: string;
  suggestedPrioritizationFees?: number;
  isWsol?: boolean;
}

/**
 * Deterministic request id: a hash of the request's parameters, so identical requests repeat it
 * (docs/contract.md, "POST /quote"). Shaped as a UUID, as the operator's ids are.
 */
export function requestIdFor(intent: QuoteIntent): string {
  const canonical = [
    intent.inputMint,
    intent.outputMint,
    intent.amount.toString(),
    intent.quoteType,
    intent.feeBps,
    intent.taker ?? "",
    intent.receiver ?? "",
    intent.isWsol ? "wsol" : "",
  ].join("|");
  const h = createHash("sha256").update(canonical).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A maker's answer, validated and ready to compare. */
export interface MakerQuote {
  webhook: Webhook;
  quoteId: string;
  response: QuoteResponse;
  amountIn: bigint;
  amountOut: bigint;
  /** From send to the full answer, ms. */
  latencyMs: number;
}

export type AttemptOutcome = "quoted" | "noQuote" | "late" | "error" | "invalid";

export interface FanoutAttempt {
  webhook: string;
  outcome: AttemptOutcome;
  status?: number;
  detail?: string;
  latencyMs: number;
}

export interface FanoutResult {
  requestId: string;
  /** Valid in-time quotes, best first. */
  quotes: MakerQuote[];
  attempts: FanoutAttempt[];
}

const makerAnswerSchema = z.object({
  requestId: z.string(),
  quoteId: z.string(),
  tokenIn: z.string(),
  tokenOut: z.string(),
  quoteType: z.string(),
  protocol: z.literal("v1"),
  amountIn: positiveU64,
  amountOut: positiveU64,
  maker: base58Pubkey,
  taker: z.string().nullish(),
  receiver: z.string().nullish(),
  prioritizationFeeToUse: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullish(),
});

/** Checks a 200 body against what was asked; undefined plus a reason when it does not match. */
export function validateMakerAnswer(
  body: string,
  sent: { requestId: string; quoteId: string; intent: QuoteIntent },
): { ok: true; response: QuoteResponse } | { ok: false; detail: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return { ok: false, detail: "body is not JSON" };
  }
  const parsed = makerAnswerSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      detail: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
    };
  }
  const r = parsed.data;
  const { intent } = sent;
  const mismatch = (field: string) => ({ ok: false as const, detail: `${field} does not echo the request` });
  if (r.requestId !== sent.requestId) return mismatch("requestId");
  if (r.quoteId !== sent.quoteId) return mismatch("quoteId");
  if (r.tokenIn !== intent.inputMint) return mismatch("tokenIn");
  if (r.tokenOut !== intent.outputMint) return mismatch("tokenOut");
  const quoteType = r.quoteType.toLowerCase().replace("_", "");
  if (quoteType !== intent.quoteType.toLowerCase()) return mismatch("quoteType");
  const fixed = intent.quoteType === "exactIn" ? r.amountIn : r.amountOut;
  if (BigInt(fixed) !== intent.amount) {
    return mismatch(intent.quoteType === "exactIn" ? "amountIn" : "amountOut");
  }
  return {
    ok: true,
    response: {
      requestId: r.requestId,
      quoteId: r.quoteId,
      tokenIn: r.tokenIn,
      tokenOut: r.tokenOut,
      quoteType: intent.quoteType,
      protocol: "v1",
      amountIn: r.amountIn,
      amountOut: r.amountOut,
      maker: r.maker,
      ...(r.taker ? { taker: r.taker } : {}),
      ...(r.receiver ? { receiver: r.receiver } : {}),
      ...(r.prioritizationFeeToUse != null ? { prioritizationFeeToUse: r.prioritizationFeeToUse } : {}),
    },
  };
}

/** Best first: more out for exactIn, less in for exactOut; ties to the faster answer. */
export function compareQuotes(quoteType: QuoteType): (a: MakerQuote, b: MakerQuote) => number {
  return (a, b) => {
    if (quoteType === "exactIn") {
      if (a.amountOut !== b.amountOut) return a.amountOut > b.amountOut ? -1 : 1;
    } else if (a.amountIn !== b.amountIn) {
      return a.amountIn < b.amountIn ? -1 : 1;
    }
    return a.latencyMs - b.latencyMs;
  };
}

export interface FanoutDeps {
  http: HttpClient;
  registry: WebhookRegistry;
  fillRate: FillRateTracker;
  timeoutMs?: number;
}

/** Asks every eligible (supporting, not suspended) maker at once and ranks the in-time answers. */
export async function fanOutQuote(deps: FanoutDeps, intent: QuoteIntent): Promise<FanoutResult> {
  const timeoutMs = deps.timeoutMs ?? QUOTE_TIMEOUT_MS;
  const requestId = requestIdFor(intent);
  const makers = deps.registry
    .supporting(intent.inputMint, intent.outputMint)
    .filter((h) => !deps.fillRate.isSuspended(h.name));

  const ask = async (hook: Webhook): Promise<{ attempt: FanoutAttempt; quote?: MakerQuote }> => {
    // The webhook's internal quote id is unique per answer even for a repeated requestId.
    const quoteId = randomUUID();
    const body = JSON.stringify({
      requestId,
      quoteId,
      tokenIn: intent.inputMint,
      tokenOut: intent.outputMint,
      amount: intent.amount.toString(),
      quoteType: intent.quoteType,
      protocol: "v1",
      feeBps: intent.feeBps,
      ...(intent.taker ? { taker: intent.taker } : {}),
      ...(intent.receiver ? { receiver: intent.receiver } : {}),
      ...(intent.suggestedPrioritizationFees !== undefined
        ? { suggestedPrioritizationFees: intent.suggestedPrioritizationFees }
        : {}),
      ...(intent.isWsol !== undefined ? { isWsol: intent.isWsol } : {}),
    });
    const sentAt = Date.now();
    const started = performance.now();
    const res = await deps.http.request(endpointUrl(hook.baseUrl, "/quote"), {
      method: "POST",
      headers: {
        ...deps.registry.headersFor(hook),
        "x-request-start": String(sentAt),
        "x-request-timeout": String(timeoutMs),
      },
      body,
      // The operator stops listening at the deadline: a late answer is as good as none.
      timeoutMs,
    });
    const latencyMs = performance.now() - started;
    const base = { webhook: hook.name, latencyMs };
    if (!res.ok) {
      return {
        attempt: { ...base, outcome: res.error === "timeout" ? "late" : "error", detail: res.detail },
      };
    }
    if (Date.now() > sentAt + timeoutMs) return { attempt: { ...base, outcome: "late", status: res.status } };
    if (res.status === 404) return { attempt: { ...base, outcome: "noQuote", status: 404 } };
    if (res.status !== 200) {
      return { attempt: { ...base, outcome: "error", status: res.status, detail: res.body.slice(0, 200) } };
    }
    const v = validateMakerAnswer(res.body, { requestId, quoteId, intent });
    if (!v.ok) return { attempt: { ...base, outcome: "invalid", status: 200, detail: v.detail } };
    return {
      attempt: { ...base, outcome: "quoted", status: 200 },
      quote: {
        webhook: hook,
        quoteId,
        response: v.response,
        amountIn: BigInt(v.response.amountIn),
        amountOut: BigInt(v.response.amountOut),
        latencyMs,
      },
    };
  };

  const answers = await Promise.all(makers.map(ask));
  const quotes = answers.flatMap((a) => (a.quote ? [a.quote] : [])).sort(compareQuotes(intent.quoteType));
  return { requestId, quotes, attempts: answers.map((a) => a.attempt) };
}

/** POST /quote: the operator's request and our answer (docs/contract.md, "POST /quote"). */
import { z } from "zod";
import type { QuoteType } from "../../pricing/book.ts";
import { base58Pubkey, positiveU64, wireId } from "./common.ts";

/** The toolkit accepts several spellings; we normalise to the camelCase form we echo back. */
const QUOTE_TYPE_ALIASES: Record<string, QuoteType> = {
  exactIn: "exactIn",
  ExactIn: "exactIn",
  exact_in: "exactIn",
  EXACT_IN: "exactIn",
  exactOut: "exactOut",
  ExactOut: "exactOut",
  exact_out: "exactOut",
  EXACT_OUT: "exactOut",
};
const quoteTypeSchema = z
  .string({ error: "must be a string" })
  // Own keys only: `in` would also take Object.prototype's ("toString", "constructor") and turn the
  // quote type into a function.
  .refine((s) => Object.hasOwn(QUOTE_TYPE_ALIASES, s), "must be exactIn or exactOut")
  .transform((s) => QUOTE_TYPE_ALIASES[s] as QuoteType)
  .meta({ enum: Object.keys(QUOTE_TYPE_ALIASES), description: "answered as exactIn or exactOut" });

const optionalPubkey = base58Pubkey.nullish().transform((v) => v ?? undefined);

/**
 * A mint as the operator names it. Only its type is structural: any string we do not trade, a valid
 * key or not, is declined with 404 "not supported" by the quote service (docs/contract.md: the acceptance
 * suite's unknown mint is a 46-character string that is no public key, and it expects 404).
 */
const mintId = z
  .string({ error: "must be a string (a mint address)" })
  .min(1, "must not be empty")
  .meta({ description: "a mint address (base58); one we do not trade is answered 404" });

export const quoteRequestSchema = z
  .object({
    requestId: wireId,
    quoteId: wireId,
    tokenIn: mintId,
    tokenOut: mintId,
    amount: positiveU64,
    quoteType: quoteTypeSchema,
    protocol: z.literal("v1", { error: 'must be "v1"' }),
    feeBps: z.number({ error: "must be an integer" }).int("must be an integer").min(0).max(10_000),
    taker: optionalPubkey,
    suggestedPrioritizationFees: z
      .number({ error: "must be an integer" })
      .int("must be an integer")
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .nullish()
      .transform((v) => v ?? undefined),
    isWsol: z
      .boolean({ error: "must be a boolean" })
      .nullish()
      .transform((v) => v ?? undefined),
    receiver: optionalPubkey,
  })
  .superRefine((q, ctx) => {
    if (q.tokenIn === q.tokenOut) {
      ctx.addIssue({ code: "custom", path: ["tokenOut"], message: "must differ from tokenIn" });
    }
  });

type ParsedQuoteRequest = z.output<typeof quoteRequestSchema>;
type OptionalKeys = "taker" | "suggestedPrioritizationFees" | "isWsol" | "receiver";
/** The parsed request; absent and null optional fields both come out as absent. */
export type QuoteRequest = Omit<ParsedQuoteRequest, OptionalKeys> &
  Partial<Pick<ParsedQuoteRequest, OptionalKeys>>;

/** Our 200 answer: the request echoed, both amounts in smallest units, and the maker that will sign. */
export const quoteResponseSchema = z.object({
  requestId: z.string(),
  quoteId: z.string(),
  tokenIn: z.string(),
  tokenOut: z.string(),
  quoteType: z.enum(["exactIn", "exactOut"]),
  protocol: z.literal("v1"),
  amountIn: z.string().regex(/^\d+$/).describe("smallest units of tokenIn, u64, the taker pays it"),
  amountOut: z.string().regex(/^\d+$/).describe("smallest units of tokenOut, u64, before the operator fee"),
  maker: z.string().describe("the maker's public key (base58): the fill's fee payer"),
  taker: z.string().optional(),
  receiver: z.string().optional(),
  prioritizationFeeToUse: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("compute-unit price (micro-lamports) the maker agrees to pay as fee payer"),
});
export type QuoteResponse = z.output<typeof quoteResponseSchema>;

/**
 * Our 200 answer to `req`: the request echoed (ids, mints, quote type, and the taker and receiver when
 * given) with what we add: both amounts, the maker, the compute-unit price. The quote path answers
 * with it (src/quote/service.ts).
 */
export function quoteAnswer(
  req: QuoteRequest,
  amountIn: string,
  amountOut: string,
  maker: string,
  prioritizationFeeToUse: number | undefined,
): QuoteResponse {
  const answer: QuoteResponse = {
    requestId: req.requestId,
    quoteId: req.quoteId,
    tokenIn: req.tokenIn,
    tokenOut: req.tokenOut,
    quoteType: req.quoteType,
    protocol: "v1",
    amountIn,
    amountOut,
    maker,
  };
  // The optional fields only when present (an absent one is no key at all), in this order.
  if (prioritizationFeeToUse !== undefined) answer.prioritizationFeeToUse = prioritizationFeeToUse;
  if (req.taker) answer.taker = req.taker;
  if (req.receiver) answer.receiver = req.receiver;
  return answer;
}

/**
 * The operator's swap order and execute answers (docs/contract.md, "The operator's order and execute
 * API"), as zod schemas: every field the contract lists, required ones required, optional ones
 * optional. Extra fields are tolerated and kept (`looseObject`): the operator adds fields without
 * notice, and a client that broke on one would stop rebalancing for nothing.
 *
 * Amounts stay strings of digits here and become bigint where they are compared or signed.
 */
import { z } from "zod";
import { ROUTER_NAMES } from "../../config/schema.ts";

const digits = z.string().regex(/^\d+$/, "must be a string of digits");

/** `swapInfo` of a route step: all strings, all required. */
const swapInfoSchema = z.looseObject({
  ammKey: z.string(),
  label: z.string(),
  inputMint: z.string(),
  outputMint: z.string(),
  inAmount: z.string(),
  outAmount: z.string(),
});

const routeStepSchema = z.looseObject({
  swapInfo: swapInfoSchema,
  percent: z.number(),
  bps: z.number(),
  usdValue: z.number().optional(),
});

const ROUTERS = ROUTER_NAMES;
export type Router = (typeof ROUTERS)[number];

/** GET /ultra/v1/order, 200. */
export const swapOrderSchema = z.looseObject({
  mode: z.string(),
  inputMint: z.string(),
  outputMint: z.string(),
  inAmount: digits,
  outAmount: digits,
  inUsdValue: z.number().optional(),
  outUsdValue: z.number().optional(),
  priceImpact: z.number().optional(),
  swapUsdValue: z.number().optional(),
  otherAmountThreshold: z.string(),
  swapMode: z.string(),
  slippageBps: z.number(),
  /** Deprecated (use priceImpact); still required by the contract. */
  priceImpactPct: z.string(),
  routePlan: z.array(routeStepSchema),
  referralAccount: z.string().optional(),
  feeMint: z.string().optional(),
  feeBps: z.number(),
  platformFee: z.looseObject({ amount: z.string().optional(), feeBps: z.number() }),
  signatureFeeLamports: z.number(),
  signatureFeePayer: z.string().nullable(),
  prioritizationFeeLamports: z.number(),
  prioritizationFeePayer: z.string().nullable(),
  rentFeeLamports: z.number(),
  rentFeePayer: z.string().nullable(),
  /** Deprecated in favour of router. */
  swapType: z.string(),
  router: z.enum(ROUTERS),
  /** Unsigned base64 transaction; null without a taker; "" when an error code applies. */
  transaction: z.string().nullable(),
  gasless: z.boolean(),
  requestId: z.string().min(1),
  totalTime: z.number(),
  taker: z.string().nullable(),
  quoteId: z.string().optional(),
  maker: z.string().optional(),
  expireAt: z.string().optional(),
  /** Present when a taker was given and the transaction is empty: 1, 2 or 3. */
  errorCode: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional(),
  /** Display only: parameterised, never matched on. */
  errorMessage: z.string().optional(),
});
export type SwapOrder = z.output<typeof swapOrderSchema>;

/** 400 and 500 of GET /order: `{error}`. */
export const simpleErrorSchema = z.looseObject({ error: z.string() });

const swapEventSchema = z.looseObject({
  inputMint: z.string(),
  inputAmount: z.string(),
  outputMint: z.string(),
  outputAmount: z.string(),
});

/** POST /swap/v2/execute: the swap execute result. */
export const executeResultSchema = z.looseObject({
  status: z.enum(["Success", "Failed"]),
  signature: z.string().optional(),
  slot: z.string().optional(),
  error: z.string().optional(),
  code: z.number().int(),
  totalInputAmount: digits.optional(),
  totalOutputAmount: digits.optional(),
  inputAmountResult: digits.optional(),
  outputAmountResult: digits.optional(),
  swapEvents: z.array(swapEventSchema).optional(),
});
export type ExecuteResult = z.output<typeof executeResultSchema>;

/** The execute endpoint's error bodies: `{error, code}`, or `{signature, error}`. */
export const executeErrorSchema = z.union([
  z.looseObject({ error: z.string(), code: z.number().int() }),
  z.looseObject({ signature: z.string(), error: z.string() }),
]);
export type ExecuteError = z.output<typeof executeErrorSchema>;

/**
 * GET /ultra/v1/order: fan the quote out to the makers, take the best in-time answer, build its fill
 * transaction (falling back to the next-best maker when a simulation fails) and answer with the seed's
 * swap-order fields.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import type { QuoteType } from "../../pricing/book.ts";
import { type SmartAccountConfig, wrapFillForSmartAccount } from "../fill/smart-account.ts";
import {
  type BuildOptions,
  type BuildResult,
  buildOrder,
  DEFAULT_BUILD_OPTIONS,
  type OperatorChain,
  ORDER_LIFETIME_S,
} from "./build-order.ts";
import { type FanoutAttempt, fanOutQuote, type MakerQuote, type QuoteIntent } from "./fanout.ts";
import { type FeeSide, feeSideFor, makerAmountFor, orderAmountsFor } from "./fee-mint.ts";
import type { FillRateTracker } from "./fill-rate.ts";
import type { HttpClient } from "./http-client.ts";
import type { OrderBook } from "./order-book.ts";
import type { WebhookRegistry } from "./webhooks.ts";
import type { SwapOrder } from "./wire.ts";

/** Mainnet USDC and USDT: stable-to-stable swaps carry no operator fee. */
export const DEFAULT_STABLE_MINTS: ReadonlySet<string> = new Set([
  "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
]);

export interface OrderQuery {
  inputMint: string;
  outputMint: string;
  amount: bigint;
  swapMode: "ExactIn" | "ExactOut";
  taker?: string;
  /** Keep the SOL side as wrapped SOL (the taker's wSOL account) instead of native SOL. */
  isWsol?: boolean;
  /** The client's `mode` (`manual` is a flat 2 bps fee); echoed. Default "ultra". */
  mode?: string;
}

/** docs/contract.md, "Fees": manual mode is a flat 2 bps. */
export const MANUAL_MODE_FEE_BPS = 2;

export interface OrderDeps {
  http: HttpClient;
  registry: WebhookRegistry;
  fillRate: FillRateTracker;
  chain: OperatorChain;
  orders: OrderBook;
  /** The operator's fee on non-stable pairs, bps. */
  feeBps: number;
  stableMints: ReadonlySet<string>;
  /** Suggested compute-unit price sent to makers (micro-lamports per CU). */
  suggestedPrioritizationFees?: number;
  quoteTimeoutMs?: number;
  build?: Partial<BuildOptions>;
  now: () => number;
  /** Fan-out details of the last order, for logs and tests. */
  onFanout?: (attempts: FanoutAttempt[]) => void;
  /**
   * Tests only: tells the simulator to build a dishonest transaction (an operator gone wrong), e.g.
   * one that moves more than the order's inAmount or another of the taker's tokens. Read at each
   * order, so a test can switch it on and off.
   */
  tamper?: { build?: (tx: VersionedTransaction, order: TamperContext) => VersionedTransaction };
  /**
   * Takers that are smart accounts (Squads vaults, keyed by the vault): their fill is wrapped as the
   * operator's toolkit wraps it (sandbox/fill/smart-account.ts), its members signing it.
   */
  smartAccounts?: ReadonlyMap<string, SmartAccountConfig>;
}

export interface TamperContext {
  taker: string;
  maker: string;
  inputMint: string;
  outputMint: string;
}

export type OrderAnswer = { status: 200; body: SwapOrder } | { status: 400 | 500; body: { error: string } };

/** The operator's fee for a pair: none between stablecoins; manual mode a flat 2 bps. */
export function feeBpsFor(
  deps: Pick<OrderDeps, "feeBps" | "stableMints">,
  a: string,
  b: string,
  mode?: string,
): number {
  if (deps.stableMints.has(a) && deps.stableMints.has(b)) return 0;
  return mode === "manual" ? MANUAL_MODE_FEE_BPS : deps.feeBps;
}

/** What one order is, beyond what makers are asked: the amount asked, the fee's side, the mode. */
interface OrderPlan {
  orderAmount: bigint;
  feeSide: FeeSide;
  feeMint: string;
  mode: string;
  /** Unix seconds: when an order built now expires (the fill's expire_at when one is built). */
  expireAt: bigint;
}

function isPermissioned(quote: MakerQuote, intent: QuoteIntent): boolean {
  return (
    quote.webhook.permissioned.has(intent.inputMint) || quote.webhook.permissioned.has(intent.outputMint)
  );
}

/** Answers one order request. */
export async function placeOrder(deps: OrderDeps, q: OrderQuery): Promise<OrderAnswer> {
  const started = performance.now();
  const quoteType: QuoteType = q.swapMode === "ExactOut" ? "exactOut" : "exactIn";
  const feeBps = feeBpsFor(deps, q.inputMint, q.outputMint, q.mode);
  const feeSide = feeSideFor(q.inputMint, q.outputMint, deps.stableMints);
  const plan: OrderPlan = {
    orderAmount: q.amount,
    feeSide,
    feeMint: feeSide === "input" ? q.inputMint : q.outputMint,
    mode: q.mode ?? "ultra",
    expireAt: BigInt(Math.floor(deps.now() / 1000)) + ORDER_LIFETIME_S,
  };
  const intent: QuoteIntent = {
    inputMint: q.inputMint,
    outputMint: q.outputMint,
    // Makers quote without the fee: asked for the amount that leaves the order's amount exact.
    amount: makerAmountFor(feeSide, quoteType, q.amount, feeBps),
    quoteType,
    feeBps,
    ...(q.taker ? { taker: q.taker } : {}),
    ...(deps.suggestedPrioritizationFees !== undefined
      ? { suggestedPrioritizationFees: deps.suggestedPrioritizationFees }
      : {}),
    ...(q.isWsol ? { isWsol: true } : {}),
  };
  const fan = await fanOutQuote(
    { http: deps.http, registry: deps.registry, fillRate: deps.fillRate, timeoutMs: deps.quoteTimeoutMs },
    intent,
  );
  deps.onFanout?.(fan.attempts);
  if (fan.quotes.length === 0) {
    const asked = fan.attempts.length;
    return {
      status: 400,
      body: {
        error: asked
          ? `Failed to get quotes (${asked} makers asked, none quoted in time)`
          : "Failed to get quotes (no maker supports this pair)",
      },
    };
  }

  const totalTime = () => Math.round(performance.now() - started);
  if (!q.taker)
    return {
      status: 200,
      body: orderBody(fan.requestId, fan.quotes[0] as MakerQuote, intent, plan, undefined, null, totalTime()),
    };

  const withTaker = { ...intent, taker: q.taker };
  const buildOpts = { ...DEFAULT_BUILD_OPTIONS, now: deps.now, ...deps.build };
  let last: BuildResult | undefined;
  for (const quote of fan.quotes) {
    const permissioned = isPermissioned(quote, intent);
    const amounts = orderAmountsFor(feeSide, quoteType, q.amount, quote, feeBps);
    const built = await buildOrder(deps.chain, quote, withTaker, permissioned, buildOpts, {
      side: feeSide,
      amounts,
    });
    const smartAccount = deps.smartAccounts?.get(q.taker);
    if (built.ok && smartAccount) {
      const tx = wrapFillForSmartAccount(built.order.tx, smartAccount);
      built.order.tx = tx;
      built.order.messageBytes = tx.message.serialize();
    }
    if (built.ok && deps.tamper?.build) {
      const tx = deps.tamper.build(built.order.tx, {
        taker: q.taker,
        maker: quote.response.maker,
        inputMint: q.inputMint,
        outputMint: q.outputMint,
      });
      built.order.tx = tx;
      built.order.messageBytes = tx.message.serialize();
    }
    last = built;
    if (built.ok) {
      deps.orders.add({
        requestId: fan.requestId,
        quote,
        intent: withTaker,
        built: built.order,
        permissioned,
        createdAtMs: deps.now(),
      });
      return {
        status: 200,
        body: orderBody(fan.requestId, quote, intent, plan, built, q.taker, totalTime()),
      };
    }
    const f = built.failure;
    if (f.kind === "insufficientFunds" || f.kind === "topUpSol") {
      return {
        status: 200,
        body: orderBody(fan.requestId, quote, intent, plan, built, q.taker, totalTime()),
      };
    }
    // A failed simulation drops this maker's quote silently; the next best gets its chance.
  }
  const detail = last && !last.ok && "detail" in last.failure ? last.failure.detail : "no buildable quote";
  return { status: 400, body: { error: `Failed to build a transaction: ${detail}` } };
}

function orderBody(
  requestId: string,
  quote: MakerQuote,
  intent: QuoteIntent,
  plan: OrderPlan,
  built: BuildResult | undefined,
  taker: string | null,
  totalTime: number,
): SwapOrder {
  const order = built?.ok ? built.order : undefined;
  // Without a built transaction the amounts are what one would carry (same arithmetic).
  const amounts =
    order ?? orderAmountsFor(plan.feeSide, intent.quoteType, plan.orderAmount, quote, intent.feeBps);
  const inAmount = amounts.inputAmount.toString();
  const outAmount = amounts.outputAmount.toString();
  const swapMode = intent.quoteType === "exactOut" ? "ExactOut" : "ExactIn";
  const maker = quote.response.maker;
  const body: SwapOrder = {
    mode: plan.mode,
    inputMint: intent.inputMint,
    outputMint: intent.outputMint,
    inAmount,
    outAmount,
    priceImpact: 0,
    // An RFQ fill is exact both ways: the threshold is the amount itself.
    otherAmountThreshold: swapMode === "ExactIn" ? outAmount : inAmount,
    swapMode,
    slippageBps: 0,
    priceImpactPct: "0",
    routePlan: [
      {
        swapInfo: {
          ammKey: maker,
          label: `RFQ ${quote.webhook.name}`,
          inputMint: intent.inputMint,
          outputMint: intent.outputMint,
          inAmount: quote.amountIn.toString(),
          outAmount: quote.amountOut.toString(),
        },
        percent: 100,
        bps: 10_000,
      },
    ],
    feeMint: plan.feeMint,
    feeBps: intent.feeBps,
    platformFee: { amount: amounts.fee.toString(), feeBps: intent.feeBps },
    signatureFeeLamports: order ? Number(order.signatureFeeLamports) : 0,
    signatureFeePayer: order ? maker : null,
    prioritizationFeeLamports: order ? Number(order.prioritizationFeeLamports) : 0,
    prioritizationFeePayer: order ? maker : null,
    rentFeeLamports: order ? Number(order.rentLamports) : 0,
    rentFeePayer: order?.createsTakerOutputAta ? (taker as string) : null,
    swapType: "rfq",
    router: "router_2",
    transaction: taker === null ? null : order ? Buffer.from(order.tx.serialize()).toString("base64") : "",
    // The maker pays the network fees of an RFQ fill; the taker pays at most an ATA's rent.
    gasless: true,
    requestId,
    totalTime,
    taker,
    quoteId: quote.quoteId,
    maker,
    expireAt: (order?.expireAt ?? plan.expireAt).toString(),
  };
  if (
    built &&
    !built.ok &&
    (built.failure.kind === "insufficientFunds" || built.failure.kind === "topUpSol")
  ) {
    body.errorCode = built.failure.errorCode;
    body.errorMessage = built.failure.errorMessage;
  }
  return body;
}

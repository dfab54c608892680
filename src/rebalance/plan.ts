/**
 * What one rebalancing pass would trade, and why: pure, from the maker's holdings, the configured
 * targets, the maker's own mids (USD through the configured pairs) and what was already traded today.
 *
 * A token whose free balance (balance minus reservations) is below `target - band` is bought back
 * toward `target`, paying the `against` token; above `target + band` it is sold toward `target` for
 * the `against` token. Orders are ExactIn (the amount asked is what the maker pays): buying, the
 * deficit is converted to the `against` token at the maker's mids.
 */
import { compareRatio, formatRatio, mulDivCeil, parseDecimal, type Ratio } from "../../amounts/decimal.ts";
import type { UsdValues } from "../../amounts/usd.ts";
import type { Config } from "../../config/load.ts";
import type { RebalanceTarget, TokenConfig } from "../../config/schema.ts";
import type { Holding } from "../../inventory/interface.ts";

export interface TokenTradeState {
  /** When the last trade of this token was attempted (ms epoch); undefined: never. */
  lastTradeAtMs?: number;
  /** USD moved today (UTC) by this token's trades. */
  notionalTodayUsd: Ratio;
}

export interface PlannedTrade {
  symbol: string;
  side: "buy" | "sell";
  /** What the maker pays (ExactIn) and receives. */
  inputMint: string;
  outputMint: string;
  inputSymbol: string;
  outputSymbol: string;
  /** The ExactIn amount, `inputMint` smallest units. */
  amount: bigint;
  /** The trade's value at the maker's mids (of what is paid). */
  notionalUsd: Ratio;
  /** The least the order must deliver: the value paid, less `maxSlippageBps`, in `outputMint` units. */
  minOut: bigint;
  target: RebalanceTarget;
  why: string;
}

export interface SkippedToken {
  symbol: string;
  why: string;
}

export interface Plan {
  trades: PlannedTrade[];
  /** Tokens with a target that need no trade now, or cannot have one, each with the reason. */
  skipped: SkippedToken[];
}

const units = (n: bigint, decimals: number) =>
  formatRatio({ num: n, den: 10n ** BigInt(decimals) }, decimals);

/** What one pass reads: the configuration, the maker's holdings and mids, and today's trades. */
export interface PlanInputs {
  config: Config;
  holdings: readonly Holding[];
  usd: UsdValues;
  state: (symbol: string) => TokenTradeState;
  now: number;
}

/** The plan of one pass: each target's trade, or why it has none. */
export function planRebalance(args: PlanInputs): Plan {
  const held = new Map(args.holdings.map((h) => [h.mint, h]));
  const plan: Plan = { trades: [], skipped: [] };
  for (const [symbol, target] of Object.entries(args.config.file.rebalance.targets)) {
    const planned = planToken(args, held, symbol, target);
    if (typeof planned === "string") plan.skipped.push({ symbol, why: planned });
    else plan.trades.push(planned);
  }
  return plan;
}

/** One target's trade, or (a string) why it has none. */
function planToken(
  args: PlanInputs,
  held: ReadonlyMap<string, Holding>,
  symbol: string,
  target: RebalanceTarget,
): PlannedTrade | string {
  const { usd } = args;
  const bySymbol = args.config.tokensBySymbol;
  // The configuration's load refuses a target whose tokens are not configured.
  const token = bySymbol.get(symbol) as TokenConfig;
  const other = bySymbol.get(target.against) as TokenConfig;
  const h = held.get(token.mint);
  const ho = held.get(other.mint);
  if (!h || !ho || h.problem || ho.problem)
    return `no usable balance of ${!h || h.problem ? symbol : target.against}${h?.problem ? `: ${h.problem}` : ""}`;
  const free = h.balance - h.reserved;
  const goal = BigInt(target.target);
  const band = BigInt(target.band);
  const show = (n: bigint) => units(n, token.decimals);
  if (free >= goal - band && free <= goal + band)
    return `${show(free)} free, inside ${show(goal - band)}..${show(goal + band)}`;
  const st = args.state(symbol);
  if (st.lastTradeAtMs !== undefined && args.now - st.lastTradeAtMs < target.cooldownMs)
    return `outside its band (${show(free)} free, target ${show(goal)}) but cooling down for ${target.cooldownMs - (args.now - st.lastTradeAtMs)} ms more`;
  const side: "buy" | "sell" = free < goal ? "buy" : "sell";
  const size = side === "buy" ? goal - free : free - goal;
  const input = side === "buy" ? other : token;
  const output = side === "buy" ? token : other;
  const sized = cutToTodaysNotional(usd, symbol, token, target, st, size);
  if (typeof sized === "string") return sized;
  const { tokenAmount, capped } = sized;
  const amount = side === "sell" ? tokenAmount : paidForBuying(usd, token, other, target, tokenAmount);
  if (typeof amount === "string") return amount;
  if (amount === 0n) return "outside its band but the trade rounds to zero";
  const payer = side === "buy" ? ho : h;
  const paidFree = payer.balance - payer.reserved;
  if (amount > paidFree)
    return `needs ${units(amount, input.decimals)} ${input.symbol} to trade, only ${units(paidFree, input.decimals)} free`;
  const limit = leastAcceptableOutput(usd, input, output, target, amount);
  if (typeof limit === "string") return limit;
  const { notionalUsd, minOut } = limit;
  return {
    symbol,
    side,
    inputMint: input.mint,
    outputMint: output.mint,
    inputSymbol: input.symbol,
    outputSymbol: output.symbol,
    amount,
    notionalUsd,
    minOut,
    target,
    why:
      `${symbol} ${show(free)} free is ${side === "buy" ? "below" : "above"} its band ` +
      `${show(goal - band)}..${show(goal + band)} (target ${show(goal)}): ${side} ${show(tokenAmount)} ${symbol}` +
      `${size > BigInt(target.maxTrade) ? ` (maxTrade ${show(BigInt(target.maxTrade))})` : ""}${capped}, ` +
      `paying ${units(amount, input.decimals)} ${input.symbol} (${formatRatio(notionalUsd, 2)} USD at the maker's mids), ` +
      `accepting no less than ${units(minOut, output.decimals)} ${output.symbol} (${target.maxSlippageBps} bps)`,
  };
}

/**
 * The token amount to trade: the distance to target, at most `maxTrade`, shrunk to what is left of
 * today's notional (`capped` says so in the trade's reason); or why there is none.
 */
function cutToTodaysNotional(
  usd: UsdValues,
  symbol: string,
  token: TokenConfig,
  target: RebalanceTarget,
  st: TokenTradeState,
  size: bigint,
): { tokenAmount: bigint; capped: string } | string {
  let tokenAmount = size < BigInt(target.maxTrade) ? size : BigInt(target.maxTrade);
  const cap = parseDecimal(target.dailyNotionalUsd);
  const left: Ratio = {
    num: cap.num * st.notionalTodayUsd.den - st.notionalTodayUsd.num * cap.den,
    den: cap.den * st.notionalTodayUsd.den,
  };
  if (left.num <= 0n)
    return `outside its band but today's notional cap of ${target.dailyNotionalUsd} USD is used up`;
  const tokenValue = usd.value(token.mint, tokenAmount);
  if (!tokenValue) return `outside its band but no fresh mid prices ${symbol} in USD`;
  let capped = "";
  if (compareRatio(tokenValue, left) > 0) {
    tokenAmount = usd.unitsFor(token.mint, left) ?? 0n;
    capped = ` (cut to today's remaining notional, ${formatRatio(left, 2)} USD)`;
  }
  return { tokenAmount, capped };
}

/** Buying: the `against` token paid for `tokenAmount`, converted at the maker's mids; or why not. */
function paidForBuying(
  usd: UsdValues,
  token: TokenConfig,
  other: TokenConfig,
  target: RebalanceTarget,
  tokenAmount: bigint,
): bigint | string {
  const v = usd.value(token.mint, tokenAmount);
  const a = v && usd.unitsFor(other.mint, v);
  if (a === undefined || !v) return `outside its band but no fresh mid prices ${target.against} in USD`;
  return a;
}

/**
 * The trade's value at the mids and the least the order must deliver: that value less
 * `maxSlippageBps`, in output units; or why either cannot be priced.
 */
function leastAcceptableOutput(
  usd: UsdValues,
  input: TokenConfig,
  output: TokenConfig,
  target: RebalanceTarget,
  amount: bigint,
): { notionalUsd: Ratio; minOut: bigint } | string {
  const notionalUsd = usd.value(input.mint, amount);
  if (!notionalUsd) return `outside its band but no fresh mid prices ${input.symbol} in USD`;
  const worst: Ratio = {
    num: notionalUsd.num * BigInt(10_000 - target.maxSlippageBps),
    den: notionalUsd.den * 10_000n,
  };
  const outPrice = usd.price(output.mint);
  if (!outPrice || outPrice.num === 0n)
    return `outside its band but no fresh mid prices ${output.symbol} in USD`;
  // Rounded up: the limit is never looser than the bps say (rounding in the maker's favour).
  const minOut = mulDivCeil(
    worst.num * outPrice.den,
    10n ** BigInt(output.decimals),
    worst.den * outPrice.num,
  );
  return { notionalUsd, minOut };
}

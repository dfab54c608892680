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

/** The plan of one pass. */
export function planRebalance(args: {
  config: Config;
  holdings: readonly Holding[];
  usd: UsdValues;
  state: (symbol: string) => TokenTradeState;
  now: number;
}): Plan {
  const { config, usd } = args;
  const bySymbol = config.tokensBySymbol;
  const held = new Map(args.holdings.map((h) => [h.mint, h]));
  const trades: PlannedTrade[] = [];
  const skipped: SkippedToken[] = [];
  const skip = (symbol: string, why: string) => skipped.push({ symbol, why });

  for (const [symbol, target] of Object.entries(config.file.rebalance.targets)) {
    // The configuration's load refuses a target whose tokens are not configured.
    const token = bySymbol.get(symbol) as TokenConfig;
    const other = bySymbol.get(target.against) as TokenConfig;
    const h = held.get(token.mint);
    const ho = held.get(other.mint);
    if (!h || !ho || h.problem || ho.problem) {
      skip(
        symbol,
        `no usable balance of ${!h || h.problem ? symbol : target.against}${h?.problem ? `: ${h.problem}` : ""}`,
      );
      continue;
    }
    const free = h.balance - h.reserved;
    const goal = BigInt(target.target);
    const band = BigInt(target.band);
    const show = (n: bigint) => units(n, token.decimals);
    if (free >= goal - band && free <= goal + band) {
      skip(symbol, `${show(free)} free, inside ${show(goal - band)}..${show(goal + band)}`);
      continue;
    }
    const st = args.state(symbol);
    if (st.lastTradeAtMs !== undefined && args.now - st.lastTradeAtMs < target.cooldownMs) {
      skip(
        symbol,
        `outside its band (${show(free)} free, target ${show(goal)}) but cooling down for ${target.cooldownMs - (args.now - st.lastTradeAtMs)} ms more`,
      );
      continue;
    }
    const side: "buy" | "sell" = free < goal ? "buy" : "sell";
    const size = side === "buy" ? goal - free : free - goal;
    let tokenAmount = size < BigInt(target.maxTrade) ? size : BigInt(target.maxTrade);
    const input = side === "buy" ? other : token;
    const output = side === "buy" ? token : other;

    // Daily cap: shrink the trade to what is left of today's notional.
    const cap = parseDecimal(target.dailyNotionalUsd);
    const left: Ratio = {
      num: cap.num * st.notionalTodayUsd.den - st.notionalTodayUsd.num * cap.den,
      den: cap.den * st.notionalTodayUsd.den,
    };
    if (left.num <= 0n) {
      skip(symbol, `outside its band but today's notional cap of ${target.dailyNotionalUsd} USD is used up`);
      continue;
    }
    const tokenValue = usd.value(token.mint, tokenAmount);
    if (!tokenValue) {
      skip(symbol, `outside its band but no fresh mid prices ${symbol} in USD`);
      continue;
    }
    let capped = "";
    if (compareRatio(tokenValue, left) > 0) {
      tokenAmount = usd.unitsFor(token.mint, left) ?? 0n;
      capped = ` (cut to today's remaining notional, ${formatRatio(left, 2)} USD)`;
    }
    let amount: bigint;
    if (side === "sell") amount = tokenAmount;
    else {
      const v = usd.value(token.mint, tokenAmount);
      const a = v && usd.unitsFor(other.mint, v);
      if (a === undefined || !v) {
        skip(symbol, `outside its band but no fresh mid prices ${target.against} in USD`);
        continue;
      }
      amount = a;
    }
    if (amount === 0n) {
      skip(symbol, "outside its band but the trade rounds to zero");
      continue;
    }
    const paidFree = (side === "buy" ? ho : h).balance - (side === "buy" ? ho : h).reserved;
    if (amount > paidFree) {
      skip(
        symbol,
        `needs ${units(amount, input.decimals)} ${input.symbol} to trade, only ${units(paidFree, input.decimals)} free`,
      );
      continue;
    }
    const notionalUsd = usd.value(input.mint, amount);
    if (!notionalUsd) {
      skip(symbol, `outside its band but no fresh mid prices ${input.symbol} in USD`);
      continue;
    }
    // The least acceptable output: the value paid at the mids, less maxSlippageBps, in output units.
    const worst: Ratio = {
      num: notionalUsd.num * BigInt(10_000 - target.maxSlippageBps),
      den: notionalUsd.den * 10_000n,
    };
    const outPrice = usd.price(output.mint);
    if (!outPrice || outPrice.num === 0n) {
      skip(symbol, `outside its band but no fresh mid prices ${output.symbol} in USD`);
      continue;
    }
    // Rounded up: the limit is never looser than the bps say (rounding in the maker's favour).
    const minOut = mulDivCeil(
      worst.num * outPrice.den,
      10n ** BigInt(output.decimals),
      worst.den * outPrice.num,
    );
    trades.push({
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
    });
  }
  return { trades, skipped };
}

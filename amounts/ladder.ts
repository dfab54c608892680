/**
 * One model of size for every channel: a side's levels are swept one by one (a marginal ladder), each
 * at a whole number of quote atoms per lot. The RFQ v2 program walks the streamed levels this way
 * (whole lots, each level's lots at its price per lot); `/quote` prices any size with the same levels,
 * the base inside a level at its price per lot pro rata, and rounds once at the end in the maker's
 * favour. So at every whole number of lots the two give the same amounts exactly, and between two lots
 * `/quote` is the straight line between them, rounded the maker's way.
 */

/** One level: the base from the previous level's bound up to `upToBase` (base atoms) at `perLot`. */
export interface Band {
  /** Cumulative bound, base atoms; ascending; every bound but the last is a whole number of lots. */
  upToBase: bigint;
  /** Quote atoms per lot (`lot` base atoms), positive. */
  perLot: bigint;
}

export interface SweptAmounts {
  amountIn: bigint;
  amountOut: bigint;
  /** Base atoms traded. */
  baseAmount: bigint;
}

/**
 * The quote atoms `base` atoms cost along `bands`, times `lot` (so exact: no rounding yet); undefined
 * when `base` is beyond the last band.
 */
export function costTimesLot(bands: readonly Band[], base: bigint): bigint | undefined {
  let before = 0n;
  let cost = 0n;
  for (const b of bands) {
    if (base <= b.upToBase) return cost + (base - before) * b.perLot;
    cost += (b.upToBase - before) * b.perLot;
    before = b.upToBase;
  }
  return undefined;
}

/**
 * The least base (exact, as `before + num / perLot` of the band it falls in) whose cost times `lot`
 * reaches `target`; undefined when the whole ladder costs less.
 */
function baseFor(
  bands: readonly Band[],
  target: bigint,
): { before: bigint; rest: bigint; perLot: bigint } | undefined {
  let before = 0n;
  let cost = 0n;
  for (const b of bands) {
    const full = (b.upToBase - before) * b.perLot;
    if (cost + full >= target) return { before, rest: target - cost, perLot: b.perLot };
    cost += full;
    before = b.upToBase;
  }
  return undefined;
}

/**
 * Amounts of one trade swept along a side's bands. `takerSide` "sell": the taker gives base and
 * receives quote (the maker's bids); "buy": the taker gives quote and receives base (the maker's
 * asks). `amount` is what `type` fixes (exactIn: the taker's input, exactOut: its output). What the
 * taker receives is floored and what it pays is ceiled; undefined when the trade is beyond the last band.
 */
export function sweptAmounts(
  takerSide: "buy" | "sell",
  type: "exactIn" | "exactOut",
  amount: bigint,
  bands: readonly Band[],
  lot: bigint,
): SweptAmounts | undefined {
  const baseFixed = (takerSide === "sell") === (type === "exactIn");
  if (baseFixed) {
    const n = costTimesLot(bands, amount);
    if (n === undefined) return undefined;
    // sell exactIn: the taker receives the quote, floored; buy exactOut: it pays it, ceiled.
    return takerSide === "sell"
      ? { amountIn: amount, amountOut: n / lot, baseAmount: amount }
      : { amountIn: (n + lot - 1n) / lot, amountOut: amount, baseAmount: amount };
  }
  const at = baseFor(bands, amount * lot);
  if (!at) return undefined;
  if (takerSide === "sell") {
    // exactOut: the least base whose proceeds, floored, reach `amount` (the taker pays it, ceiled).
    const base = at.before + (at.rest + at.perLot - 1n) / at.perLot;
    return { amountIn: base, amountOut: amount, baseAmount: base };
  }
  // buy exactIn: the most base whose cost, ceiled, is within `amount` (the taker receives it, floored).
  const base = at.before + at.rest / at.perLot;
  return { amountIn: amount, amountOut: base, baseAmount: base };
}

/** Quote atoms per lot at `price` (quote atoms per base atom, exact): the maker's bids down, asks up. */
export function perLotAt(price: { num: bigint; den: bigint }, lot: bigint, makerSide: "bid" | "ask"): bigint {
  const exact = price.num * lot;
  return makerSide === "bid" ? exact / price.den : (exact + price.den - 1n) / price.den;
}

/**
 * A lot for a pair whose configuration names none: the smallest power of ten, at least
 * 10^(base decimals - quote decimals), at which one quote atom per lot is at most 1 bps of the mid
 * (`midPerBaseAtom`: quote atoms per base atom), so rounding a level to whole quote atoms per lot costs
 * the taker under 1 bps; at most 10^(base decimals + 2).
 */
export function lotSizeFor(
  midPerBaseAtom: { num: bigint; den: bigint },
  baseDecimals: number,
  quoteDecimals: number,
): bigint {
  let lot = 10n ** BigInt(Math.max(0, baseDecimals - quoteDecimals));
  const cap = 10n ** BigInt(baseDecimals + 2);
  while (midPerBaseAtom.num * lot < 10_000n * midPerBaseAtom.den && lot < cap) lot *= 10n;
  return lot;
}

/**
 * Exact decimal prices as rationals of bigints. A price string such as "180.25" becomes 18025/100; no
 * float is ever involved in an amount we sign.
 */

export interface Ratio {
  num: bigint;
  den: bigint;
}

/** Parses a non-negative decimal string ("180.25", "0.0045", "1") into an exact ratio. */
export function parseDecimal(s: string): Ratio {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) throw new Error(`not a decimal number: ${s}`);
  const frac = m[2] ?? "";
  return { num: BigInt(m[1]! + frac), den: 10n ** BigInt(frac.length) };
}

/** floor(a * num / den) for non-negative values. */
export function mulDivFloor(a: bigint, num: bigint, den: bigint): bigint {
  return (a * num) / den;
}

/** ceil(a * num / den) for non-negative values. */
export function mulDivCeil(a: bigint, num: bigint, den: bigint): bigint {
  const p = a * num;
  return (p + den - 1n) / den;
}

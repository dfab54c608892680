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

/** Formats an exact ratio as a decimal string with `places` digits, rounded down (for logs and tables). */
export function formatRatio(r: Ratio, places = 6): string {
  const scaled = (r.num * 10n ** BigInt(places)) / r.den;
  const s = scaled.toString().padStart(places + 1, "0");
  return places === 0 ? s : `${s.slice(0, -places)}.${s.slice(-places)}`;
}

/** `units` smallest units of a token with `decimals` decimals, exactly, without trailing zeros ("0.001"). */
export function formatUnits(units: bigint, decimals: number): string {
  const s = formatRatio({ num: units, den: 10n ** BigInt(decimals) }, decimals);
  return decimals === 0 ? s : s.replace(/\.?0+$/, "");
}

/** a < b, a = b, a > b as -1, 0, 1, for non-negative ratios. */
export function compareRatio(a: Ratio, b: Ratio): -1 | 0 | 1 {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** The u64 bounds of every on-chain amount (the order engine's `fill` takes u64 input and output). */

export const U64_MAX = (1n << 64n) - 1n;

/** Whether `n` is a valid u64 (0 to 2^64 - 1). */
export function fitsU64(n: bigint): boolean {
  return n >= 0n && n <= U64_MAX;
}

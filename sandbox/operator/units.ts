/**
 * Amounts as a person reads them: tokens with their symbol ("-9.99139 USDC", "+0.1 SOL"), converted
 * exactly from smallest units with each token's decimals (amounts/decimal.ts `formatUnits`, no float).
 * What the demo prints; the raw smallest units stay in the checks themselves.
 */
import { formatUnits } from "../../amounts/decimal.ts";

export interface TokenInfo {
  symbol: string;
  decimals: number;
}

/** The key of a wallet's native SOL in the taker client's balances (lamports). */
export const NATIVE = "lamports";

export class TokenUnits {
  private readonly byMint = new Map<string, TokenInfo>();

  constructor(tokens: Iterable<{ mint: string; symbol: string; decimals: number }>) {
    for (const t of tokens) this.byMint.set(t.mint, { symbol: t.symbol, decimals: t.decimals });
  }

  /** The token of a mint, or native SOL for `lamports`; undefined for a mint not configured. */
  info(key: string): TokenInfo | undefined {
    return key === NATIVE ? { symbol: "SOL (native)", decimals: 9 } : this.byMint.get(key);
  }

  /** "SOL", "USDC", "SOL (native)"; the mint itself when unknown. */
  label(key: string): string {
    return this.info(key)?.symbol ?? key;
  }

  /** `units` in tokens with the symbol, e.g. "25 USDC"; smallest units named as such when unknown. */
  amount(key: string, units: bigint | string): string {
    const v = BigInt(units);
    const t = this.info(key);
    if (!t) return `${v} smallest units of ${key}`;
    const sign = v < 0n ? "-" : "";
    return `${sign}${formatUnits(v < 0n ? -v : v, t.decimals)} ${t.symbol}`;
  }

  /** A change, always signed: "+0.1 SOL", "-9.99139 USDC", "0 USDC". */
  delta(key: string, units: bigint): string {
    return `${units > 0n ? "+" : ""}${this.amount(key, units)}`;
  }
}

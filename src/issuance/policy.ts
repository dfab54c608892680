/**
 * The issuance policies of the configuration (`issuance`, config/schema.ts) as the quote and swap
 * paths use them: which mints the maker issues, who may hold them, and how much may still be minted
 * or burned under the caps. In memory only: the quote path calls it.
 */
import type { Config } from "../../config/load.ts";
import type { IssuanceConfig, TokenConfig } from "../../config/schema.ts";
import type { IssuanceDirection, IssuanceUsage } from "../../inventory/issuance/interface.ts";
import { utcDay } from "../../inventory/issuance/interface.ts";
import type { IssuanceRefusalCode, Refused } from "../refusal/codes.ts";

export interface IssuedToken {
  token: TokenConfig;
  policy: IssuanceConfig;
  maxPerFill: bigint;
  maxPerDay: bigint;
  tipLamports: bigint;
  allowlist: ReadonlySet<string> | undefined;
}

/** What one trade asks of the issuer: mint the output (taker buys) or burn the input (taker sells). */
export interface IssuanceNeed {
  issued: IssuedToken;
  direction: IssuanceDirection;
  amount: bigint;
}

export type IssuanceCheck = { ok: true; need: IssuanceNeed | undefined } | Refused<IssuanceRefusalCode>;

export class IssuancePolicies {
  private readonly byMint = new Map<string, IssuedToken>();

  constructor(config: Config) {
    for (const [symbol, policy] of Object.entries(config.file.issuance)) {
      const token = config.tokensBySymbol.get(symbol);
      if (!token) continue;
      this.byMint.set(token.mint, {
        token,
        policy,
        maxPerFill: BigInt(policy.maxPerFill),
        maxPerDay: BigInt(policy.maxPerDay),
        tipLamports: BigInt(policy.tipLamports),
        allowlist: policy.holders.allowlist ? new Set(policy.holders.allowlist) : undefined,
      });
    }
  }

  get size(): number {
    return this.byMint.size;
  }

  of(mint: string): IssuedToken | undefined {
    return this.byMint.get(mint);
  }

  tokens(): IssuedToken[] {
    return [...this.byMint.values()];
  }

  /** A refusal when `wallet` may not hold an issued token of this trade. */
  holderRefusal(tokenIn: string, tokenOut: string, wallet: string): IssuanceCheck | undefined {
    for (const mint of [tokenIn, tokenOut]) {
      const issued = this.byMint.get(mint);
      if (issued?.allowlist && !issued.allowlist.has(wallet)) {
        return {
          ok: false,
          code: "HOLDER_NOT_ALLOWED",
          context: `${wallet} is not an allowed holder of ${issued.token.symbol} (holder rules of its issuance policy)`,
        };
      }
    }
    return undefined;
  }

  /**
   * The issuer's part of a trade: undefined need when neither side is issued; a refusal when the
   * direction is switched off or the amount would cross the per-fill cap or (as `book` last saw it)
   * the daily one.
   */
  check(
    trade: { tokenIn: string; tokenOut: string; amountIn: bigint; amountOut: bigint },
    book: Pick<IssuanceUsage, "used"> | undefined,
    nowMs: number,
  ): IssuanceCheck {
    const out = this.byMint.get(trade.tokenOut);
    const inn = this.byMint.get(trade.tokenIn);
    const need: IssuanceNeed | undefined = out
      ? { issued: out, direction: "mint", amount: trade.amountOut }
      : inn
        ? { issued: inn, direction: "burn", amount: trade.amountIn }
        : undefined;
    if (!need) return { ok: true, need: undefined };
    const { issued, direction, amount } = need;
    const symbol = issued.token.symbol;
    if (direction === "mint" ? !issued.policy.mintOnBuy : !issued.policy.burnOnSell) {
      return {
        ok: false,
        code: "ISSUANCE_DISABLED",
        context: `${symbol} is not ${direction === "mint" ? "minted for a buy" : "burned for a sell"} (issuance.${symbol}.${direction === "mint" ? "mintOnBuy" : "burnOnSell"})`,
      };
    }
    if (amount > issued.maxPerFill) {
      return {
        ok: false,
        code: "ISSUANCE_CAP_EXCEEDED",
        context: `${direction} of ${amount} ${symbol} is above the per-fill cap of ${issued.maxPerFill}`,
      };
    }
    if (book) {
      const day = utcDay(nowMs);
      const used = book.used(issued.token.mint, direction, day);
      if (used + amount > issued.maxPerDay) {
        // Stryker disable next-line EqualityOperator: at maxPerDay = used both branches give 0
        const left = issued.maxPerDay > used ? issued.maxPerDay - used : 0n;
        return {
          ok: false,
          code: "ISSUANCE_CAP_EXCEEDED",
          context: `${direction} of ${amount} ${symbol} would cross the daily cap of ${issued.maxPerDay} (${left} left on ${day} UTC)`,
        };
      }
    }
    return { ok: true, need };
  }
}

/**
 * The maker's rules over one trade, whichever channel offers it: the webhook's /swap (src/swap/), the
 * RFQ v2 swap stream (src/rfq-v2/service.ts), the signer service (src/signer/service/policy.ts) and,
 * where a rule applies to its own orders, the rebalancer. Each channel reads its facts from its own
 * bytes (a fill's quote and accounts, a v2 leg's walk of its levels) and asks these functions; a
 * refusal carries the same code on every channel. docs/architecture.md ("One rule book") has the
 * rule x channel table and the test that shows each cell.
 *
 * The rules here need no chain and no clock beyond `nowMs`: the taker's standing (toxic-flow flags and
 * the deny list), the issued token's holder rules, and the issuer's switches and caps (per fill, and
 * the day's as `usage` last saw it; the channel's own atomic reservation holds the day's cap).
 * One landable signature per message is messages.ts.
 */
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import type { IssuanceNeed, IssuancePolicies } from "../issuance/policy.ts";
import { type Refused, SwapRefusalCode as S } from "../refusal/codes.ts";
import type { Standing, TakerStanding } from "../toxicity/interface.ts";

/** What every channel knows of a trade it is asked to sign, in the maker's terms. */
export interface TradeFacts {
  /** The wallet that receives what the maker pays out (the fill's taker, the v2 leg's taker). */
  taker: string;
  /** What the taker pays in (the maker receives it): mint and smallest units. */
  tokenIn: string;
  amountIn: bigint;
  /** What the maker pays out: mint and smallest units. */
  tokenOut: string;
  amountOut: bigint;
}

export type RuleCode =
  | typeof S.BOT_ACTIVITY_DETECTED
  | typeof S.HOLDER_NOT_ALLOWED
  | typeof S.ISSUANCE_DISABLED
  | typeof S.ISSUANCE_CAP_EXCEEDED;

export type RuleRefusal = Refused<RuleCode>;

/**
 * A flagged or denied taker filling prices it was not quoted for by name (an indicative /quote, a
 * streamed level set: priced blind, the same for every taker). An allowed taker is never refused.
 */
export function blindFillStanding(
  takers: Pick<TakerStanding, "standing">,
  taker: string,
  nowMs: number,
): (RuleRefusal & { standing: Extract<Standing, { kind: "flagged" | "denied" }> }) | undefined {
  const standing = takers.standing(taker, nowMs);
  if (standing.kind !== "flagged" && standing.kind !== "denied") return undefined;
  return {
    ok: false,
    code: S.BOT_ACTIVITY_DETECTED,
    context: `taker ${taker} is ${standing.kind === "flagged" ? "flagged for toxic flow" : "on the deny list"}`,
    standing,
  };
}

/** The holder rules of every issued token the trade moves, either way (buying or selling it). */
export function holderRule(
  policies: IssuancePolicies,
  trade: Pick<TradeFacts, "taker" | "tokenIn" | "tokenOut">,
): RuleRefusal | undefined {
  const refused = policies.holderRefusal(trade.tokenIn, trade.tokenOut, trade.taker);
  // holderRefusal refuses with one reason only: HOLDER_NOT_ALLOWED.
  // Stryker disable next-line ConditionalExpression: holderRefusal answers a refusal (ok: false) or undefined, never ok: true
  return refused && !refused.ok
    ? { ok: false, code: S.HOLDER_NOT_ALLOWED, context: refused.context }
    : undefined;
}

/**
 * An issued token's part of the trade: the taker an allowed holder, the direction switched on, the
 * amount under the per-fill cap and (with `usage`: as it last saw the day) the daily one. `need` is
 * what the issuer's daily cap counts (undefined: no issued token in the trade).
 */
export function issuedTrade(
  policies: IssuancePolicies,
  trade: TradeFacts,
  usage: Pick<IssuanceUsage, "used"> | undefined,
  nowMs: number,
): { ok: true; need: IssuanceNeed | undefined } | RuleRefusal {
  const holder = holderRule(policies, trade);
  if (holder) return holder;
  const checked = policies.check(trade, usage, nowMs);
  // check refuses ISSUANCE_DISABLED or ISSUANCE_CAP_EXCEEDED (ISSUANCE_UNAVAILABLE is the caller's).
  if (!checked.ok) return { ok: false, code: checked.code as RuleCode, context: checked.context };
  return { ok: true, need: checked.need };
}

/** The rules a channel holds, as it holds them (an absent part: the feature is off in the configuration). */
export interface TradeRules {
  /** toxicity.enabled: the takers' standing. */
  takers?: Pick<TakerStanding, "standing">;
  /** issuance configured: the policies, and the day's usage when the channel can read it. */
  issuance?: { policies: IssuancePolicies; usage?: Pick<IssuanceUsage, "used"> };
}

/**
 * Every trade rule for a trade at prices not quoted to this taker by name, in one order on every
 * channel: the taker's standing, then the issued token's holders, switches and caps.
 */
export function judgeBlindTrade(
  trade: TradeFacts,
  rules: TradeRules,
  nowMs: number,
): { ok: true; need: IssuanceNeed | undefined } | RuleRefusal {
  const standing = rules.takers ? blindFillStanding(rules.takers, trade.taker, nowMs) : undefined;
  if (standing) return { ok: false, code: standing.code, context: standing.context };
  if (!rules.issuance) return { ok: true, need: undefined };
  return issuedTrade(rules.issuance.policies, trade, rules.issuance.usage, nowMs);
}

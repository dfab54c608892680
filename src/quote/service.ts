/**
 * From a parsed quote request to an answer we are prepared to fill, or the reason we decline.
 * In-memory only (pricing and inventory hold their state in memory); the caller stores and answers.
 */
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import type { QuotingBook } from "../../pricing/book.ts";
import { type QuoteRequest, quoteAnswer } from "../contract/quote.ts";
import type { FillPathHealth } from "../health/fill-path.ts";
import type { IssuancePolicies } from "../issuance/policy.ts";
import { type StoredQuote, storedQuoteOf } from "../quote-store/interface.ts";
import type { QuoteDeclineCode, Refused } from "../refusal/codes.ts";
import type { TakerStanding } from "../toxicity/interface.ts";

export type QuoteDecision =
  | {
      ok: true;
      stored: StoredQuote;
      /** Set when the toxic-flow controls widened this quote: by how many bps, and why. */
      widened?: { bps: number; reason: "TAKER_FLAGGED" };
    }
  | Refused<QuoteDeclineCode>;

export interface QuoteServiceDeps {
  config: Config;
  /** Prices (pause, pair switches, fresh price, levels, skew, size, notional). */
  book: QuotingBook;
  /**
   * Asked after the book, for what the book priced: cover, exposure, SOL for fees, fresh balances.
   * Without it every priced quote is answered (pure pricing setups and tests).
   */
  inventory?: Pick<Inventory, "check">;
  maker: string;
  /**
   * The toxic-flow controls (toxicity.enabled): the takers' standing, read in memory, and what a
   * flagged taker's quote gets. Unset: a taker's standing is never consulted.
   */
  toxicity?: { takers: Pick<TakerStanding, "standing">; action: "widen" | "refuse"; widenBps: number };
  /**
   * Permissioned tokens the maker mints or burns just in time: what it can deliver of one is the
   * issuance left under its caps (as `usage` last saw it), not held inventory, and only an allowed
   * holder is quoted when the taker is given.
   */
  issuance?: {
    policies: IssuancePolicies;
    usage: Pick<IssuanceUsage, "used">;
    /** Set when there is no bundle engine: an issued token cannot be filled, so it is not quoted. */
    unavailable?: string;
  };
  /** Whether the swap path can fill right now (src/health/fill-path.ts); unset: always. */
  fillPath?: Pick<FillPathHealth, "refusal">;
}

/** Any mint we do not trade, whatever its form (a valid key or not): 404, never 400. */
function notSupported(field: "tokenIn" | "tokenOut", mint: string): QuoteDecision {
  const shown = mint.length > 64 ? `${mint.slice(0, 64)}...` : mint;
  return {
    ok: false,
    code: "TOKEN_NOT_SUPPORTED",
    context: `${field} ${shown} is not supported (not traded)`,
  };
}

export class QuoteService {
  private readonly ttlMs: number;
  private readonly defaultCuPrice: number;
  private readonly maxCuPrice: number;

  constructor(private readonly deps: QuoteServiceDeps) {
    const limits = deps.config.file.limits;
    this.ttlMs = limits.quoteTtlMs;
    this.defaultCuPrice = limits.defaultComputeUnitPriceMicroLamports;
    this.maxCuPrice = limits.maxComputeUnitPriceMicroLamports;
  }

  decide(req: QuoteRequest, nowMs: number): QuoteDecision {
    const { config, book } = this.deps;
    const tokenIn = config.tokensByMint.get(req.tokenIn);
    const tokenOut = config.tokensByMint.get(req.tokenOut);
    if (!tokenIn) return notSupported("tokenIn", req.tokenIn);
    if (!tokenOut) return notSupported("tokenOut", req.tokenOut);
    const unfillable = this.deps.fillPath?.refusal();
    if (unfillable) return unfillable;
    if (req.taker === this.deps.maker) {
      return {
        ok: false,
        code: "SELF_TRADE",
        context: `taker ${req.taker} is this maker's own wallet (no self-trade)`,
      };
    }
    if (req.receiver && req.receiver !== req.taker) {
      return {
        ok: false,
        code: "RECEIVER_NOT_TAKER",
        context: `receiver ${req.receiver} is not the taker ${req.taker ?? "(none given)"}: a fill pays only its taker`,
      };
    }
    let widenBps = 0;
    const tox = this.deps.toxicity;
    if (tox && req.taker) {
      const standing = tox.takers.standing(req.taker, nowMs);
      if (standing.kind === "denied") {
        return {
          ok: false,
          code: "TAKER_DENIED",
          context: `TAKER_DENIED: taker ${req.taker} is on the deny list (${standing.entry.reason})`,
        };
      }
      if (standing.kind === "flagged") {
        if (tox.action === "refuse") {
          return {
            ok: false,
            code: "TAKER_FLAGGED",
            context: `TAKER_FLAGGED: taker ${req.taker} is flagged for toxic flow (${standing.entry.reason})`,
          };
        }
        widenBps = tox.widenBps;
      }
    }
    const issuance = this.deps.issuance;
    if (issuance && req.taker) {
      const holder = issuance.policies.holderRefusal(req.tokenIn, req.tokenOut, req.taker);
      if (holder && !holder.ok) return holder;
    }
    const priced = book.price({
      tokenIn: req.tokenIn,
      tokenOut: req.tokenOut,
      amount: BigInt(req.amount),
      quoteType: req.quoteType,
      // 0 when not widened: the book adds nothing.
      extraSpreadBps: widenBps,
    });
    if (!priced.ok) return priced;
    const issued = issuance?.policies.check(
      {
        tokenIn: req.tokenIn,
        tokenOut: req.tokenOut,
        amountIn: priced.amountIn,
        amountOut: priced.amountOut,
      },
      issuance.usage,
      nowMs,
    );
    if (issued && !issued.ok) return issued;
    if (issued?.need && issuance?.unavailable) {
      return { ok: false, code: "ISSUANCE_UNAVAILABLE", context: issuance.unavailable };
    }
    // A mint or burn goes out in one bundle with the fill: the block engine is on this fill's path.
    const unbundled = issued?.need ? this.deps.fillPath?.refusal({ bundled: true }) : undefined;
    if (unbundled) return unbundled;
    // A minted output is not held: the inventory still checks freshness, SOL for fees and the input leg.
    const minted = issued?.need?.direction === "mint";
    if (this.deps.inventory) {
      const cover = this.deps.inventory.check({
        outMint: req.tokenOut,
        outAmount: minted ? 0n : priced.amountOut,
        inMint: req.tokenIn,
        inAmount: priced.amountIn,
      });
      if (!cover.ok) return cover;
    }
    // The maker pays the priority fee as fee payer: take the operator's suggestion, within our cap.
    const cuPrice = Math.min(req.suggestedPrioritizationFees ?? this.defaultCuPrice, this.maxCuPrice);
    const response = quoteAnswer(
      req,
      priced.amountIn.toString(),
      priced.amountOut.toString(),
      this.deps.maker,
      cuPrice,
    );
    const stored = storedQuoteOf(
      req,
      response,
      tokenIn.permissioned || tokenOut.permissioned,
      nowMs,
      nowMs + this.ttlMs,
    );
    return widenBps > 0
      ? { ok: true, widened: { bps: widenBps, reason: "TAKER_FLAGGED" }, stored }
      : { ok: true, stored };
  }
}

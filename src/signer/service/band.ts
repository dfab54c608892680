/**
 * The signer's price band: a fill is judged against the signer's OWN price for its pair (its own
 * price source, SIGNER_LIMITS `priceSources`), never against the stored quote's figures alone. The
 * maker pays out `amountOut` of the output token and takes in `amountIn` of the input token (the
 * quote's figures, which the fill rules bound the fill to); against the signer's mid (quote units per
 * one base unit), that trade may be at most `bandBps` worse for the maker:
 *   the maker sells base:  amountIn(quote) >= amountOut(base) x mid x (1 - band)
 *   the maker buys base:   amountOut(quote) <= amountIn(base) x mid x (1 + band)
 * Exact integer arithmetic. The loss is what the maker pays out beyond the fair value of what it
 * takes in, in the output token's smallest units, the fair value rounded down (so the loss is
 * rounded up): 0 when the trade is at or better than mid.
 */
import type { PriceSource } from "../../../pricing/interface.ts";
import { type Refused, SignerRefusalCode } from "../../refusal/codes.ts";
import type { PairBand } from "./limits.ts";

export type BandVerdict =
  | { ok: true; loss: bigint; mid: string }
  | Refused<typeof SignerRefusalCode.SIGNER_NO_PRICE | typeof SignerRefusalCode.SIGNER_PRICE_BAND>;

export interface BandTrade {
  /** The mint the maker receives, and how much (smallest units). */
  mintIn: string;
  amountIn: bigint;
  /** The mint the maker pays out, and how much. */
  mintOut: string;
  amountOut: bigint;
}

const pow10 = (n: number) => 10n ** BigInt(n);

export function judgeBand(
  band: PairBand,
  source: PriceSource | undefined,
  trade: BandTrade,
  nowMs: number,
): BandVerdict {
  const point = source?.price(band.pair);
  if (!source || !point) {
    return {
      ok: false,
      code: SignerRefusalCode.SIGNER_NO_PRICE,
      context: `the signer's price source ${band.priceSource} has no price for ${band.pair}`,
    };
  }
  const age = nowMs - point.updatedAtMs;
  if (age > source.maxAgeMs) {
    return {
      ok: false,
      code: SignerRefusalCode.SIGNER_NO_PRICE,
      context: `the signer's price for ${band.pair} (${band.priceSource}) is ${age} ms old, over its ${source.maxAgeMs} ms`,
    };
  }
  const { num, den } = point.mid;
  const mid = `${num}/${den}`;
  const bd = pow10(band.base.decimals);
  const qd = pow10(band.quote.decimals);
  const B = 10_000n;
  const bps = BigInt(band.bandBps);
  const sellsBase = trade.mintOut === band.base.mint && trade.mintIn === band.quote.mint;
  const buysBase = trade.mintIn === band.base.mint && trade.mintOut === band.quote.mint;
  if (!sellsBase && !buysBase) {
    return {
      ok: false,
      code: SignerRefusalCode.SIGNER_NO_PRICE,
      context: `the fill does not trade ${band.pair}`,
    };
  }
  if (sellsBase) {
    // quote_in / qd >= base_out / bd x num/den x (B - bps)/B
    const have = trade.amountIn * bd * den * B;
    const need = trade.amountOut * qd * num * (B - bps);
    if (have < need) {
      return {
        ok: false,
        code: SignerRefusalCode.SIGNER_PRICE_BAND,
        context: `selling ${trade.amountOut} ${band.base.symbol} units for ${trade.amountIn} ${band.quote.symbol} units is more than ${band.bandBps} bps below the signer's mid ${mid} for ${band.pair}`,
      };
    }
    // Fair base for the quote taken in: quote_in x bd x den / (qd x num), rounded down.
    const fair = num === 0n ? 0n : (trade.amountIn * bd * den) / (qd * num);
    // Stryker disable next-line EqualityOperator: at amountOut === fair both sides give a loss of 0
    return { ok: true, loss: trade.amountOut > fair ? trade.amountOut - fair : 0n, mid };
  }
  // quote_out / qd <= base_in / bd x num/den x (B + bps)/B
  const pay = trade.amountOut * bd * den * B;
  const most = trade.amountIn * qd * num * (B + bps);
  if (pay > most) {
    return {
      ok: false,
      code: SignerRefusalCode.SIGNER_PRICE_BAND,
      context: `paying ${trade.amountOut} ${band.quote.symbol} units for ${trade.amountIn} ${band.base.symbol} units is more than ${band.bandBps} bps above the signer's mid ${mid} for ${band.pair}`,
    };
  }
  const fair = (trade.amountIn * qd * num) / (bd * den);
  // Stryker disable next-line EqualityOperator: at amountOut === fair both sides give a loss of 0
  return { ok: true, loss: trade.amountOut > fair ? trade.amountOut - fair : 0n, mid };
}

/** The band that covers a trade of these two mints, whichever way round the pair is written. */
export function bandFor(
  bands: ReadonlyMap<string, PairBand>,
  mintA: string,
  mintB: string,
): PairBand | undefined {
  for (const b of bands.values()) {
    if (
      (b.base.mint === mintA && b.quote.mint === mintB) ||
      (b.base.mint === mintB && b.quote.mint === mintA)
    )
      return b;
  }
  return undefined;
}

/**
 * The signer's own reading of an RFQ v2 swap (the webhook's channel: src/rfq-v2/), beside the structure
 * that src/rfq-v2/swap-checks.ts's checkV2Route judges for both: which top-level programs an offered swap may
 * run, how far ahead its expire_at may be, whether its levels lie within the set the webhook claims it
 * streamed (a consistency check: the claim is the webhook's word, so it never sets the price), and
 * what the maker pays and receives by the program's own walk of the swap's levels (what the band and
 * the limits judge).
 */
import { ASSOCIATED_TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { type PublicKey, SystemProgram } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../../config/schema.ts";
import { COMPUTE_BUDGET_PROGRAM_ID } from "../../program/layout.ts";
import { AGGREGATOR_PROGRAM, sweep } from "../../program/rfq-v2.ts";
import type { V2Leg, V2Pair } from "../../rfq-v2/swap-checks.ts";
import type { ClaimedLevelsWire } from "../../signing/protocol.ts";
import type { PairBand } from "./limits.ts";

/**
 * The top-level programs an offered swap holds (RFQ-V2 samples: compute budget, the SOL wrap, ATA
 * create, token close, the tip transfer, the route): anything else is refused, whatever it names.
 */
export const V2_ALLOWED_PROGRAMS: ReadonlySet<string> = new Set([
  COMPUTE_BUDGET_PROGRAM_ID.toBase58(),
  SystemProgram.programId.toBase58(),
  TOKEN_PROGRAM,
  TOKEN_2022_PROGRAM,
  ASSOCIATED_TOKEN_PROGRAM_ID.toBase58(),
  AGGREGATOR_PROGRAM,
]);

/** The first top-level instruction whose program is not an allowed one, or undefined. */
export function unexpectedProgram(
  programIds: readonly PublicKey[],
): { index: number; program: string } | undefined {
  for (const [index, p] of programIds.entries()) {
    const program = p.toBase58();
    if (!V2_ALLOWED_PROGRAMS.has(program)) return { index, program };
  }
  return undefined;
}

/**
 * The signer's v2 pairs: every band's pair, either way round (a v2 leg names base and quote as the
 * webhook streams them), keyed "baseMint/quoteMint" as checkV2Route looks them up.
 */
export function v2PairsOf(bands: ReadonlyMap<string, PairBand>): Map<string, V2Pair> {
  const out = new Map<string, V2Pair>();
  for (const b of bands.values()) {
    out.set(`${b.base.mint}/${b.quote.mint}`, { pairKey: b.pair, base: b.base, quote: b.quote });
    const reverse = `${b.quote.symbol}/${b.base.symbol}`;
    out.set(`${b.quote.mint}/${b.base.mint}`, { pairKey: reverse, base: b.quote, quote: b.base });
  }
  return out;
}

/**
 * Why the swap's expire_at is unacceptable, or undefined: past, or later than now plus the
 * configuration's level validity (rfqV2.quoteExpirySeconds) and a grace, so no signature outlives the
 * prices it was judged at by more than the levels themselves would.
 */
export function expiryProblem(
  expireAt: bigint,
  nowMs: number,
  validitySeconds: number,
  graceSeconds: number,
): string | undefined {
  const nowS = BigInt(Math.floor(nowMs / 1000));
  if (expireAt <= nowS) return `expire_at ${expireAt} is past (now ${nowS})`;
  const latest = nowS + BigInt(validitySeconds + graceSeconds);
  if (expireAt > latest)
    return `expire_at ${expireAt} is more than ${validitySeconds + graceSeconds} s ahead (latest ${latest}): longer than levels stay valid`;
  return undefined;
}

/**
 * Whether the swap lies within the claimed set: the same lot, no more levels, each level no larger and
 * no better for the taker than the claimed one, and expire_at within the set's validity. A mismatch
 * means the webhook matched the swap to a set it does not lie in: a fault on the webhook's side.
 */
export function claimProblem(leg: V2Leg, claimed: ClaimedLevelsWire): string | undefined {
  if (BigInt(claimed.lotSizeBase) !== leg.lotSizeBase)
    return `the swap's lot ${leg.lotSizeBase} is not the claimed set's ${claimed.lotSizeBase}`;
  if (leg.levels.length > claimed.levels.length)
    return `the swap has ${leg.levels.length} levels, the claimed set ${claimed.levels.length}`;
  for (const [i, l] of leg.levels.entries()) {
    const c = claimed.levels[i];
    // Stryker disable next-line StringLiteral: unreachable (more levels than the claimed set's are refused above); kept for the type
    if (!c) return `level ${i} is not in the claimed set`;
    const lots = BigInt(c.lots);
    const perLot = BigInt(c.perLot);
    const better = leg.takerSide === "bid" ? l.perLot < perLot : l.perLot > perLot;
    if (l.lots > lots || better)
      return `level ${i} (${l.lots} lots at ${l.perLot}) is larger or better for the taker than the claimed ${lots} at ${perLot}`;
  }
  if (leg.expireAt * 1000n > BigInt(claimed.validUntilMs))
    return `expire_at ${leg.expireAt} is later than the claimed set's validity (${claimed.validUntilMs} ms)`;
  return undefined;
}

/** What the maker receives and pays by the program's walk of the swap's own levels. */
export interface V2MakerTrade {
  mintIn: string;
  amountIn: bigint;
  mintOut: string;
  amountOut: bigint;
  lots: bigint;
}

export function makerTrade(leg: V2Leg): V2MakerTrade {
  const walked = sweep(leg.takerSide, leg.inAmount, leg.levels, leg.lotSizeBase);
  const base = leg.baseMint.toBase58();
  const quote = leg.quoteMint.toBase58();
  // A Bid taker pays quote and takes base from the maker; an Ask taker the other way round.
  const [mintIn, mintOut] = leg.takerSide === "bid" ? [quote, base] : [base, quote];
  return { mintIn, amountIn: walked.spent, mintOut, amountOut: walked.out, lots: walked.lots };
}

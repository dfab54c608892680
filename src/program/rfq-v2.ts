/**
 * The on-chain layouts of an RFQ v2 fill: the aggregator's `route_v2` instruction carrying one RFQ v2
 * leg, alone or beside other legs (Borsh, little-endian; the plan read step by step by route-plan.ts),
 * the programs and fixed accounts, and the RFQ v2 program's walk of a level list. Read by the maker's checks (src/rfq-v2/swap-checks.ts) and by the local chain's stand-in for the
 * programs (src/chain/local/rfq-v2-emulation.ts).
 *
 * route_v2 = discriminator, in_amount u64, quoted_out_amount u64, slippage_bps u16, platform_fee_bps
 * u16, positive_slippage_bps u16, u32 step count, then per step a u8 tag (120 = JupiterRfqV2), u8 side
 * (0 Bid: the taker pays quote; 1 Ask: the taker pays base), u32 length and fill data, u16 bps, u8 input
 * index, u8 output index. Fill data = expire_at u64 (Unix s), tick_size_qpb u64, lot_size_base u64, u32
 * level count, per level px_ticks u64 and qty_lots u64. Accounts: 10 of the route, the RFQ v2 program,
 * the 11 of fill_exact_in, one more.
 */

import { JUPITER_RFQ_V2_TAG, type PlanStep, Reader, readPlan, UnreadableStep } from "./route-plan.ts";

export const AGGREGATOR_PROGRAM = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
export const AGGREGATOR_EVENT_AUTHORITY = "D8cy77BBepLMngZx6ZukaTff5hCt1HrWyKk3Hnd9oitf";
export const RFQ_V2_PROGRAM = "fd3nMFYTQjX1yr5ER8u7tPdHJB7qt8RpDpNtLQX2Br5";
export const INSTRUCTIONS_SYSVAR = "Sysvar1nstructions1111111111111111111111111";
export const ROUTE_V2_DISCRIMINATOR = Uint8Array.from([187, 100, 250, 204, 49, 196, 175, 20]);
export const RFQ_V2_LEG_TAG = JUPITER_RFQ_V2_TAG;
/** Accounts of route_v2 before the legs (before the platform fee account, when there is one). */
export const ROUTE_FIXED_ACCOUNTS = 10;
/** An RFQ v2 leg's block: the RFQ v2 program, then the 11 accounts of fill_exact_in. */
export const RFQ_BLOCK_ACCOUNTS = 12;
/** A lone RFQ v2 leg's accounts after the route's fixed ones: its block and the route's last account. */
export const RFQ_LEG_ACCOUNTS = RFQ_BLOCK_ACCOUNTS + 1;

/** The data of a route_v2 instruction and its one RFQ v2 step. */
export interface RouteV2Data {
  /** "bid": the taker pays quote for base (takes the maker's asks); "ask": it pays base for quote. */
  takerSide: "bid" | "ask";
  /** The route's in_amount (the whole input of the route, not necessarily the leg's). */
  inAmount: bigint;
  quotedOutAmount: bigint;
  platformFeeBps: number;
  bps: number;
  inputIndex: number;
  outputIndex: number;
  expireAt: bigint;
  tickSizeQpb: bigint;
  lotSizeBase: bigint;
  /** As the program walks them: price per lot = px_ticks x tick_size_qpb. */
  levels: ProgramLevel[];
  /** Every step of the plan, in order; `rfqStep` is the RFQ v2 one's index. */
  steps: PlanStep[];
  rfqStep: number;
}

/** A level as the program walks it: whole lots at a price per lot (quote atoms). */
export interface ProgramLevel {
  lots: bigint;
  perLot: bigint;
}

/**
 * Why route data is not a route with one RFQ v2 leg: `malformed`, the bytes end early or run on;
 * `unreadable`, a step the maker cannot read (a tag outside the published enum, a value Borsh refuses);
 * `not-found`, readable but not route_v2 with exactly one RFQ v2 step.
 */
export type RouteV2Problem = "malformed" | "unreadable" | "not-found";

export function decodeRouteV2(
  data: Uint8Array,
): { ok: true; leg: RouteV2Data } | { ok: false; problem: RouteV2Problem; detail: string } {
  const no = (problem: RouteV2Problem, detail: string) => ({ ok: false as const, problem, detail });
  let steps: PlanStep[];
  let head: { inAmount: bigint; quotedOutAmount: bigint; platformFeeBps: number };
  try {
    const r = new Reader(data);
    if (!startsWith(r.bytes(8), ROUTE_V2_DISCRIMINATOR)) return no("not-found", "not route_v2");
    const inAmount = r.u64();
    const quotedOutAmount = r.u64();
    r.u16(); // slippage_bps
    const platformFeeBps = r.u16();
    r.u16(); // positive_slippage_bps
    head = { inAmount, quotedOutAmount, platformFeeBps };
    steps = readPlan(r, r.u32());
    if (!r.done()) return no("malformed", "route data continues after its last step");
  } catch (err) {
    if (err instanceof UnreadableStep) return no("unreadable", `route plan: ${err.message}`);
    return no("malformed", `route data: ${(err as Error).message}`);
  }
  const rfq = steps.flatMap((s, i) => (s.rfq ? [i] : []));
  if (rfq.length !== 1)
    return no(
      "not-found",
      `the route's ${steps.length} step(s) hold ${rfq.length} RFQ v2 legs (swap ${JUPITER_RFQ_V2_TAG}): exactly one is signed`,
    );
  const rfqStep = rfq[0] as number;
  const step = steps[rfqStep] as PlanStep & { rfq: NonNullable<PlanStep["rfq"]> };
  try {
    const fill = new Reader(step.rfq.fillData);
    const expireAt = fill.u64();
    const tickSizeQpb = fill.u64();
    const lotSizeBase = fill.u64();
    const count = fill.u32();
    const levels: ProgramLevel[] = [];
    for (let i = 0; i < count; i++) {
      const px = fill.u64();
      const qty = fill.u64();
      levels.push({ perLot: px * tickSizeQpb, lots: qty });
    }
    if (!fill.done()) return no("malformed", "fill data continues after its levels");
    return {
      ok: true,
      leg: {
        takerSide: step.rfq.side === 0 ? "bid" : "ask",
        ...head,
        bps: step.bps,
        inputIndex: step.inputIndex,
        outputIndex: step.outputIndex,
        expireAt,
        tickSizeQpb,
        lotSizeBase,
        levels,
        steps,
        rfqStep,
      },
    };
  } catch (err) {
    return no("malformed", `fill data: ${(err as Error).message}`);
  }
}

/**
 * The program's walk of a level list (fill_exact_in): whole lots, every division floored, stopping when
 * the input is spent or the levels end. `takerSide` "bid": the taker pays quote and takes the maker's
 * asks; "ask": the taker pays base and takes the maker's bids. Returns the input spent and the output.
 */
export function sweep(
  takerSide: "bid" | "ask",
  amountIn: bigint,
  levels: readonly ProgramLevel[],
  lotSizeBase: bigint,
): { spent: bigint; out: bigint; lots: bigint } {
  let remaining = amountIn;
  let spent = 0n;
  let out = 0n;
  let lots = 0n;
  for (const l of levels) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: spent input leaves 0 (never less); walking on buys 0 lots at every level, the same result
    if (remaining <= 0n) break;
    const unit = takerSide === "bid" ? l.perLot : lotSizeBase;
    if (unit <= 0n) break;
    const affordable = remaining / unit;
    // Stryker disable next-line EqualityOperator: at equal values either one is the answer
    const n = affordable < l.lots ? affordable : l.lots;
    const pay = n * unit;
    remaining -= pay;
    spent += pay;
    out += takerSide === "bid" ? n * lotSizeBase : n * l.perLot;
    lots += n;
  }
  return { spent, out, lots };
}

export function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  // Stryker disable next-line ConditionalExpression: a shorter data's missing bytes (undefined) never equal the prefix's, so the loop returns false too
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

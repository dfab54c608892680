/**
 * The on-chain layouts of an RFQ v2 fill: the aggregator's `route_v2` instruction carrying one RFQ v2
 * leg (Borsh, little-endian), the programs and fixed accounts, and the RFQ v2 program's walk of a level
 * list. Read by the maker's checks (src/rfq-v2/fill.ts) and by the local chain's stand-in for the
 * programs (src/chain/local/rfq-v2-emulation.ts).
 *
 * route_v2 = discriminator, in_amount u64, quoted_out_amount u64, slippage_bps u16, platform_fee_bps
 * u16, positive_slippage_bps u16, u32 step count, then per step a u8 tag (120 = JupiterRfqV2), u8 side
 * (0 Bid: the taker pays quote; 1 Ask: the taker pays base), u32 length and fill data, u16 bps, u8 input
 * index, u8 output index. Fill data = expire_at u64 (Unix s), tick_size_qpb u64, lot_size_base u64, u32
 * level count, per level px_ticks u64 and qty_lots u64. Accounts: 10 of the route, the RFQ v2 program,
 * the 11 of fill_exact_in, one more.
 */

export const AGGREGATOR_PROGRAM = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
export const AGGREGATOR_EVENT_AUTHORITY = "D8cy77BBepLMngZx6ZukaTff5hCt1HrWyKk3Hnd9oitf";
export const RFQ_V2_PROGRAM = "fd3nMFYTQjX1yr5ER8u7tPdHJB7qt8RpDpNtLQX2Br5";
export const INSTRUCTIONS_SYSVAR = "Sysvar1nstructions1111111111111111111111111";
export const ROUTE_V2_DISCRIMINATOR = Uint8Array.from([187, 100, 250, 204, 49, 196, 175, 20]);
export const RFQ_V2_LEG_TAG = 120;
/** Accounts of route_v2 before the legs, and of an RFQ v2 leg block (program, 11 fill accounts, 1 more). */
export const ROUTE_FIXED_ACCOUNTS = 10;
export const RFQ_LEG_ACCOUNTS = 13;

/** Little-endian reads with bounds. */
class Reader {
  private at = 0;
  constructor(private readonly b: Uint8Array) {}
  private need(n: number): void {
    if (this.at + n > this.b.length)
      throw new Error(`data ends at byte ${this.b.length}, ${n} more needed at ${this.at}`);
  }
  u8(): number {
    this.need(1);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, 1).readUInt8(0);
    this.at += 1;
    return v;
  }
  u16(): number {
    this.need(2);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, 2).readUInt16LE(0);
    this.at += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, 4).readUInt32LE(0);
    this.at += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, 8).readBigUInt64LE(0);
    this.at += 8;
    return v;
  }
  bytes(n: number): Uint8Array {
    this.need(n);
    const v = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  done(): boolean {
    return this.at === this.b.length;
  }
}

/** The data of a route_v2 instruction with its one RFQ v2 step. */
export interface RouteV2Data {
  /** "bid": the taker pays quote for base (takes the maker's asks); "ask": it pays base for quote. */
  takerSide: "bid" | "ask";
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
}

/** A level as the program walks it: whole lots at a price per lot (quote atoms). */
export interface ProgramLevel {
  lots: bigint;
  perLot: bigint;
}

export function decodeRouteV2(
  data: Uint8Array,
): { ok: true; leg: RouteV2Data } | { ok: false; malformed: boolean; detail: string } {
  // malformed: unreadable bytes; otherwise readable, but not a lone RFQ v2 leg.
  const no = (malformed: boolean, detail: string) => ({ ok: false as const, malformed, detail });
  try {
    const r = new Reader(data);
    if (!startsWith(r.bytes(8), ROUTE_V2_DISCRIMINATOR)) return no(false, "not route_v2");
    const inAmount = r.u64();
    const quotedOutAmount = r.u64();
    r.u16(); // slippage_bps
    const platformFeeBps = r.u16();
    r.u16(); // positive_slippage_bps
    const steps = r.u32();
    if (steps !== 1) return no(false, `the route has ${steps} steps: only a lone RFQ v2 leg is signed`);
    const tag = r.u8();
    if (tag !== RFQ_V2_LEG_TAG)
      return no(false, `the route's step is swap ${tag}, not an RFQ v2 leg (${RFQ_V2_LEG_TAG})`);
    const side = r.u8();
    if (side > 1) return no(true, `leg side ${side}`);
    const fill = new Reader(r.bytes(r.u32()));
    const bps = r.u16();
    const inputIndex = r.u8();
    const outputIndex = r.u8();
    if (!r.done()) return no(true, "route data continues after its one step");
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
    if (!fill.done()) return no(true, "fill data continues after its levels");
    return {
      ok: true,
      leg: {
        takerSide: side === 0 ? "bid" : "ask",
        inAmount,
        quotedOutAmount,
        platformFeeBps,
        bps,
        inputIndex,
        outputIndex,
        expireAt,
        tickSizeQpb,
        lotSizeBase,
        levels,
      },
    };
  } catch (err) {
    return no(true, `route data: ${(err as Error).message}`);
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
    if (remaining <= 0n) break;
    const unit = takerSide === "bid" ? l.perLot : lotSizeBase;
    if (unit <= 0n) break;
    const affordable = remaining / unit;
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
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

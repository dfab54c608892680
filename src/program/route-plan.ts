/**
 * The aggregator's route plan read exactly, step by step: every step's `Swap` variant and payload as the
 * published enum lays them out (jup-ag/rfq-v2-sdk, `fill-decoder/src/aggregator.rs`: tags 0-125, Borsh),
 * then the step's bps u16, input index u8 and output index u8. A tag the enum does not list, or a value
 * Borsh would not accept (a bool other than 0/1, an enum or Option tag out of range), makes the plan
 * unreadable: the step's length is then unknown, so nothing after it can be located. The plan is never
 * searched for byte patterns: the program runs what the plan says, and bytes inside one step's payload
 * can imitate another step.
 */

/** Little-endian reads with bounds. */
export class Reader {
  private at = 0;
  constructor(private readonly b: Uint8Array) {}
  private need(n: number): void {
    if (this.at + n > this.b.length)
      throw new Error(`data ends at byte ${this.b.length}, ${n} more needed at ${this.at}`);
  }
  private view(n: number): Buffer {
    this.need(n);
    const v = Buffer.from(this.b.buffer, this.b.byteOffset + this.at, n);
    this.at += n;
    return v;
  }
  u8(): number {
    return this.view(1).readUInt8(0);
  }
  u16(): number {
    return this.view(2).readUInt16LE(0);
  }
  u32(): number {
    return this.view(4).readUInt32LE(0);
  }
  u64(): bigint {
    return this.view(8).readBigUInt64LE(0);
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

/** A value the maker cannot read (not a truncation: the bytes are there but mean nothing it knows). */
export class UnreadableStep extends Error {}

/**
 * Payload fields, Borsh: bool (0/1), side (JupSide enum: 0 Bid, 1 Ask), fixed-width integers, `rai`
 * (RemainingAccountsInfo: u32 count of {u8, u8} slices), `opt-rai` (Option of it), `bytes` (u32 length
 * then bytes), `candidates` (Vec<CandidateSwap>), `opt-u8`.
 */
type Field =
  | "bool"
  | "side"
  | "u8"
  | "u32"
  | "u64"
  | "u128"
  | "rai"
  | "opt-rai"
  | "opt-u8"
  | "bytes"
  | "candidates";

/** The tag of the RFQ v2 step: JupiterRfqV2 { side, fill_data: Vec<u8> }. */
export const JUPITER_RFQ_V2_TAG = 120;
/** The highest tag of the published enum. */
const LAST_PUBLISHED_TAG = 125;

/** Every variant with a payload; the other tags 0-125 carry none. */
const PAYLOADS: ReadonlyMap<number, readonly Field[]> = new Map<number, readonly Field[]>([
  [8, ["bool"]], // Crema
  [12, ["side"]], // Serum
  [15, ["side"]], // Aldrin
  [16, ["side"]], // AldrinV2
  [17, ["bool"]], // Whirlpool
  [18, ["bool"]], // Invariant
  [21, ["bool"]], // DeltaFi
  [23, ["bool"]], // MarcoPolo
  [24, ["side"]], // Dradex
  [27, ["side"]], // Openbook
  [28, ["side"]], // Phoenix
  [29, ["u64", "u64"]], // Symmetry
  [33, ["u32"]], // StakeDexSwapViaStake
  [39, ["side"]], // OpenBookV2
  [41, ["u32"]], // StakeDexPrefundWithdrawStakeAndDepositStake
  [42, ["u8", "bool", "bool"]], // Clone
  [43, ["u8", "u8", "u32", "u32"]], // SanctumS
  [44, ["u8", "u32"]], // SanctumSAddLiquidity
  [45, ["u8", "u32"]], // SanctumSRemoveLiquidity
  [47, ["bool", "opt-rai"]], // WhirlpoolSwapV2
  [58, ["bool"]], // Obric
  [60, ["bool"]], // FoxClaimPartial
  [61, ["bool"]], // SolFi
  [64, ["side"]], // TokenMill
  [71, ["u8", "u8"]], // Perena
  [75, ["rai"]], // MeteoraDlmmSwapV2
  [81, ["u64"]], // RaydiumLaunchlabBuy
  [82, ["u64"]], // RaydiumLaunchlabSell
  [85, ["side"]], // Plasma
  [86, ["bool", "u8"]], // GoonFi
  [87, ["u64", "bool"]], // HumidiFi
  [89, ["side"]], // TesseraV
  [94, ["bool"]], // Heaven
  [95, ["bool"]], // SolFiV2
  [103, ["bool", "opt-rai"]], // DefiTuna
  [104, ["bool"]], // AlphaQ
  [106, ["bool"]], // SarosDlmm
  [107, ["side"]], // Futarchy
  [110, ["side"]], // WhaleStreet
  [111, ["candidates", "opt-u8"]], // DynamicV1
  [116, ["side"]], // Manifest
  [117, ["bool"]], // BisonFi
  [118, ["u64", "bool"]], // HumidiFiV2
  [119, ["bool"]], // PerenaStar
  [JUPITER_RFQ_V2_TAG, ["side", "bytes"]], // JupiterRfqV2
  [121, ["bool"]], // GoonFiV2
  [122, ["u128"]], // Scorch
  [123, ["u64", "u64", "u64", "u64", "u64", "u64"]], // VaultLiquidUnstake: [u64; 5], seed u64
  [125, ["side"]], // Quantum
]);

/** CandidateSwap (inside DynamicV1): 0 HumidiFi {u64, bool}, 1 TesseraV {side}, 2 HumidiFiV2 {u64, bool}. */
const CANDIDATES: readonly (readonly Field[])[] = [["u64", "bool"], ["side"], ["u64", "bool"]];

/** One step of a route_v2 plan. */
export interface PlanStep {
  tag: number;
  bps: number;
  inputIndex: number;
  outputIndex: number;
  /** The JupiterRfqV2 step's side (0 Bid, 1 Ask) and fill data; absent on other steps. */
  rfq?: { side: number; fillData: Uint8Array };
}

function oneOf(r: Reader, what: string, n: number): number {
  const v = r.u8();
  if (v >= n) throw new UnreadableStep(`${what} ${v} is not a value Borsh reads (0-${n - 1})`);
  return v;
}

function readField(r: Reader, f: Field): number | Uint8Array | undefined {
  switch (f) {
    case "bool":
      return oneOf(r, "bool", 2);
    case "side":
      return oneOf(r, "side", 2);
    case "u8":
      return r.u8();
    case "u32":
      r.u32();
      return;
    case "u64":
      r.u64();
      return;
    case "u128":
      r.bytes(16);
      return;
    case "rai":
      r.bytes(2 * r.u32());
      return;
    case "opt-rai":
      if (oneOf(r, "Option", 2) === 1) r.bytes(2 * r.u32());
      return;
    case "opt-u8":
      if (oneOf(r, "Option", 2) === 1) r.u8();
      return;
    case "bytes":
      return r.bytes(r.u32());
    case "candidates": {
      const n = r.u32();
      for (let i = 0; i < n; i++) {
        const fields = CANDIDATES[oneOf(r, "candidate swap", CANDIDATES.length)] as readonly Field[];
        for (const c of fields) readField(r, c);
      }
      return;
    }
  }
}

/**
 * Reads `count` steps. Throws UnreadableStep for a tag outside the published enum or a value Borsh
 * would refuse, and a plain Error when the bytes end first.
 */
export function readPlan(r: Reader, count: number): PlanStep[] {
  const steps: PlanStep[] = [];
  for (let i = 0; i < count; i++) {
    const tag = r.u8();
    if (tag > LAST_PUBLISHED_TAG)
      throw new UnreadableStep(
        `step ${i} is swap ${tag}, not in the published enum (0-${LAST_PUBLISHED_TAG}): its length is unknown`,
      );
    // Stryker disable next-line ArrayDeclaration: a field readField does not know reads nothing, the same as no field
    const values = (PAYLOADS.get(tag) ?? []).map((f) => readField(r, f));
    const bps = r.u16();
    const inputIndex = r.u8();
    const outputIndex = r.u8();
    const step: PlanStep = { tag, bps, inputIndex, outputIndex };
    if (tag === JUPITER_RFQ_V2_TAG)
      step.rfq = { side: values[0] as number, fillData: values[1] as Uint8Array };
    steps.push(step);
  }
  return steps;
}

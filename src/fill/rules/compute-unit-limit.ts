/**
 * The compute-unit limit must let the fill land, and stay within what the contract allows.
 *
 * Floor: a limit below what the transaction's shape consumes fails on-chain with
 * ComputationalBudgetExceeded after the maker has paid its fee, and counts against the fill rate.
 * The need per shape (the two legs' kinds, each ATA creation by token program, each Lighthouse
 * assertion) is measured on the local chain and kept as data in src/fill/compute-units.ts
 * (`npm run bench:compute-units` re-measures it); the floor is that sum plus the table's margin.
 *
 * Ceiling: the runtime's 1,400,000, and 200,000 for permissioned pairs (docs/contract.md, "Permissioned
 * tokens": no quote-time simulation, the fill must fit in the default maximum). A fill wrapped for a
 * smart-account taker carries the limit the operator's wrapper sets, the inner limit times its
 * multiplier and at most its cap (`SMART_ACCOUNT_WRAP`), so its ceiling is the inner ceiling wrapped
 * the same way: a member of the smart account pays that fee, not the maker, whose fee is capped on its
 * own (compute-budget.ts `makerFeeWithinCap`).
 */
import type { PublicKey } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID } from "../../program/layout.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { COMPUTE_UNITS, type ComputeUnitTable, type LegKind, legKey } from "../compute-units.ts";
import { type FillCheck, type FillRule, refuse } from "./check.ts";

/** The runtime's largest compute-unit limit. */
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;
/** The contract's compute-unit limit for permissioned pairs. */
export const PERMISSIONED_COMPUTE_UNIT_LIMIT = 200_000;
/**
 * What the operator's smart-account wrapper does to the fill's compute-unit limit: the toolkit's
 * squads-sdk (jup-ag/rfq-webhook-toolkit, squads-sdk/src/config.rs `WrapOptions::default()`:
 * `cu_multiplier: 2`, `cu_cap: 1_400_000`; wrap.rs: `cu_limit.saturating_mul(cu_multiplier).min(cu_cap)`).
 */
export const SMART_ACCOUNT_WRAP = { cuMultiplier: 2, cuCap: 1_400_000 } as const;

/** What decides a fill's compute need. */
export interface FillShape {
  input: LegKind;
  output: LegKind;
  /** One entry per ATA creation: the token program of the account it creates. */
  ataCreations: ("token" | "token2022")[];
  lighthouseAssertions: number;
}

/** ceil((legs + ATA creations + assertions) x (1 + margin)), from the measured table. */
export function computeUnitFloor(shape: FillShape, table: ComputeUnitTable = COMPUTE_UNITS): number {
  const legs = table.legs[legKey(shape.input, shape.output)];
  if (!legs) throw new RangeError(`no compute-unit measurement for ${legKey(shape.input, shape.output)}`);
  let need = legs.measured;
  for (const program of shape.ataCreations) need += table.ataCreation[program]?.measured ?? 0;
  need += shape.lighthouseAssertions * (table.lighthouseAssertion?.measured ?? 0);
  return Math.ceil(need * (1 + table.margin));
}

/**
 * The ceiling for this quote: 200,000 for a permissioned pair, the runtime's 1,400,000 otherwise; for a
 * fill wrapped for a smart account, that ceiling as the wrapper raises a limit (x 2, at most 1,400,000).
 */
export function computeUnitCeiling(permissioned: boolean, wrapped: boolean): number {
  const inner = permissioned ? PERMISSIONED_COMPUTE_UNIT_LIMIT : MAX_COMPUTE_UNIT_LIMIT;
  return wrapped ? Math.min(inner * SMART_ACCOUNT_WRAP.cuMultiplier, SMART_ACCOUNT_WRAP.cuCap) : inner;
}

/** The shape of a fill whose token programs are known (both mints traded). */
export function shapeOf(c: FillCheck, inputProgram: PublicKey, outputProgram: PublicKey): FillShape {
  const kind = (native: boolean, program: PublicKey): LegKind =>
    native ? "nativeSol" : program.equals(TOKEN_2022_PROGRAM_ID) ? "token2022" : "token";
  return {
    input: kind(c.nativeSolIn, inputProgram),
    output: kind(c.nativeSolOut, outputProgram),
    ataCreations: c.ataCreations.map((a) =>
      a.tokenProgram.equals(TOKEN_2022_PROGRAM_ID) ? "token2022" : "token",
    ),
    lighthouseAssertions: c.instructions.filter((ix) => ix.kind === "lighthouse").length,
  };
}

export const computeUnitLimitWithinCeiling: FillRule = (c) => {
  const limit = c.computeUnitLimit;
  const wrapped = c.envelope !== undefined;
  const ceiling = computeUnitCeiling(c.quote.permissioned, wrapped);
  return limit !== undefined && limit > ceiling
    ? refuse(
        FillRejectCode.COMPUTE_UNIT_LIMIT_EXCEEDED,
        `the compute-unit limit ${limit} is above the ${ceiling} allowed${c.quote.permissioned ? " for a permissioned pair" : ""}${wrapped ? " wrapped for a smart account" : ""}`,
      )
    : undefined;
};

export const computeUnitLimitCoversShape: FillRule = (c) => {
  const { computeUnitLimit: limit, inputTokenProgram, outputTokenProgram } = c;
  if (limit === undefined || !inputTokenProgram || !outputTokenProgram) return undefined;
  const shape = shapeOf(c, inputTokenProgram, outputTokenProgram);
  const floor = computeUnitFloor(shape, c.computeUnits);
  return limit < floor
    ? refuse(
        FillRejectCode.COMPUTE_UNIT_LIMIT_TOO_LOW,
        `the compute-unit limit ${limit} is below the ${floor} a ${legKey(shape.input, shape.output)} fill with ${shape.ataCreations.length} ATA creation(s) and ${shape.lighthouseAssertions} Lighthouse assertion(s) needs; it would fail on-chain`,
      )
    : undefined;
};

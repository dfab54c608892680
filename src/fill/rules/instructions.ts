/**
 * Which instructions a fill may contain, in what order: ComputeBudget and ATA creations, then exactly
 * one order-engine `fill`, then only Lighthouse assertions. No other program, no other order-engine
 * instruction. Each instruction's own rules live beside it (compute-budget.ts, ata-creation.ts,
 * lighthouse.ts); what the walk has seen so far is its own, never the check's.
 */

import type { DecodedInstruction } from "../../program/decode.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { ataInstruction } from "./ata-creation.ts";
import { type FillCheck, type FillRule, type Refusal, refuse } from "./check.ts";
import { computeBudgetInstruction } from "./compute-budget.ts";
import { lighthouseAssertion } from "./lighthouse.ts";

/** What the walk has passed so far, for the rules of order and of repetition. */
export interface Walk {
  lighthouseSeen: boolean;
  fillSeen: boolean;
  limitSeen: boolean;
  priceSeen: boolean;
}

export const onlyAllowedInstructionsInOrder: FillRule = (c) => {
  const walk: Walk = { lighthouseSeen: false, fillSeen: false, limitSeen: false, priceSeen: false };
  for (const ix of c.instructions) {
    const refusal = instruction(c, ix, walk);
    if (refusal) return refusal;
  }
  return undefined;
};

function instruction(c: FillCheck, ix: DecodedInstruction, walk: Walk): Refusal | undefined {
  const where =
    ix.inner === undefined
      ? `instruction ${ix.position}`
      : `inner instruction ${ix.inner} of the smart-account execute (instruction ${ix.position})`;
  if (ix.kind === "other") {
    return refuse(
      FillRejectCode.INVALID_PROGRAM,
      `${where} calls program ${ix.programId.toBase58()}, which a fill may not contain`,
    );
  }
  if (ix.kind === "orderEngineOther") {
    return refuse(FillRejectCode.INVALID_PROGRAM, `${where} is an order-engine instruction other than fill`);
  }
  if (ix.kind === "lighthouse") {
    const refusal = lighthouseAssertion(walk.fillSeen, ix, where);
    walk.lighthouseSeen = true;
    return refusal;
  }
  if (walk.lighthouseSeen) {
    return refuse(
      FillRejectCode.INVALID_INSTRUCTION_ORDER,
      `${where} follows a Lighthouse assertion; only Lighthouse assertions may follow them`,
    );
  }
  if (ix.kind === "fill") {
    if (walk.fillSeen)
      return refuse(FillRejectCode.MULTIPLE_FILLS, `${where} is a second fill; exactly one is allowed`);
    walk.fillSeen = true;
    return undefined;
  }
  if (walk.fillSeen) {
    return refuse(
      FillRejectCode.INVALID_INSTRUCTION_ORDER,
      `${where} (${ix.kind}) follows the fill; only Lighthouse assertions may`,
    );
  }
  if (ix.kind === "ataOther" || ix.kind === "ataCreateIdempotent") return ataInstruction(c, ix, where);
  return computeBudgetInstruction(ix, where, walk);
}

export const exactlyOneFill: FillRule = ({ fill }) =>
  fill
    ? undefined
    : refuse(FillRejectCode.FILL_NOT_FOUND, "the transaction has no order-engine fill instruction");

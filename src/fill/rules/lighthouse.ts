/**
 * Lighthouse: only account and token-account assertions (tags 5, 6, 9, 10), only after the fill.
 * (Assertions check the outcome; before the fill they would check nothing, and any other Lighthouse
 * instruction writes memory or moves nothing the maker agreed to.) An assertion may name the maker's
 * wallet: these four only read their account (no write, no CPI), and the operator's own client
 * asserts the maker's lamports (toolkit tests/suites/integration/swap.ts).
 */

import type { LighthouseIx } from "../../program/decode.ts";
import { LIGHTHOUSE_ALLOWED_DISCRIMINATORS } from "../../program/layout.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { type Refusal, refuse } from "./check.ts";

/** One Lighthouse instruction; `afterFill`: the walk has passed the fill. */
export function lighthouseAssertion(
  afterFill: boolean,
  ix: LighthouseIx,
  where: string,
): Refusal | undefined {
  if (!afterFill) {
    return refuse(
      FillRejectCode.INVALID_INSTRUCTION_ORDER,
      `${where} is a Lighthouse assertion before the fill`,
    );
  }
  if (ix.discriminator === undefined || !LIGHTHOUSE_ALLOWED_DISCRIMINATORS.has(ix.discriminator)) {
    return refuse(
      FillRejectCode.INVALID_LIGHTHOUSE_INSTRUCTION,
      `${where} is Lighthouse instruction ${ix.discriminator ?? "(empty)"}; only assertions 5, 6, 9 and 10 are allowed`,
    );
  }
  return undefined;
}

/**
 * Every rule a fill transaction must pass before the maker co-signs it, in the order they are
 * judged (docs/contract.md, "The fill transaction"). The first broken rule names the refusal. Rules are
 * listed one per line so that a rule removed or reordered shows in review, and each has an attack
 * test named after it (test/fill/rules.attacks.test.ts and the attack table, test/fill/tamper.ts).
 *
 * Decisions beyond the contract's letter, each because the maker pays the fee of any transaction it
 * signs, even one that fails on-chain, are explained in the rule's own file.
 */
import { AMOUNT_RULES } from "./amounts.ts";
import type { FillRule } from "./check.ts";
import { COMPUTE_BUDGET_RULES } from "./compute-budget.ts";
import { computeUnitLimitCoversShape } from "./compute-unit-limit.ts";
import {
  fillAccountCount,
  fillDataReadable,
  fillMakerIsOurs,
  fillSystemProgram,
  fillTakerIsKeyOne,
  makerWalletOnlyAsMaker,
  temporaryWsolAccountIffNativeOut,
} from "./fill-accounts.ts";
import { exactlyOneFill, onlyAllowedInstructionsInOrder } from "./instructions.ts";
import { MESSAGE_RULES } from "./message.ts";
import { MINT_RULES } from "./mints.ts";
import {
  makerInputAccountIsMakersAta,
  makerOutputAccountIsMakersAta,
  takerInputAccountIsTakers,
  takerOutputAccountIsTakers,
  tokenAccountsWritable,
} from "./token-accounts.ts";

export const FILL_RULES: readonly FillRule[] = [
  // The message and its two fixed keys (message.ts).
  ...MESSAGE_RULES,
  // Which instructions, in what order; each instruction's own rules (instructions.ts and beside it).
  onlyAllowedInstructionsInOrder,
  exactlyOneFill,
  // What the maker pays (compute-budget.ts).
  ...COMPUTE_BUDGET_RULES,
  // The fill's accounts (fill-accounts.ts, mints.ts, token-accounts.ts).
  fillDataReadable,
  fillAccountCount,
  fillTakerIsKeyOne,
  fillMakerIsOurs,
  makerWalletOnlyAsMaker,
  ...MINT_RULES,
  fillSystemProgram,
  makerInputAccountIsMakersAta,
  makerOutputAccountIsMakersAta,
  takerInputAccountIsTakers,
  takerOutputAccountIsTakers,
  temporaryWsolAccountIffNativeOut,
  tokenAccountsWritable,
  // Enough compute units for this shape to land (compute-unit-limit.ts).
  computeUnitLimitCoversShape,
  // The fill's terms against the quote (amounts.ts).
  ...AMOUNT_RULES,
];

export type { AtaCreation, FillCheck, FillRule, Refusal } from "./check.ts";

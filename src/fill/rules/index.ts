/**
 * Every rule a fill transaction must pass before the maker co-signs it, in the order they are
 * judged (docs/contract.md, "The fill transaction"). The first broken rule names the refusal. Rules are
 * listed one per line so that a rule removed or reordered shows in review, and each has an attack
 * test named after it (test/fill/validate.attacks.test.ts and the attack table, test/fill/tamper.ts).
 *
 * Decisions beyond the contract's letter, each because the maker pays the fee of any transaction it
 * signs, even one that fails on-chain, are explained in the rule's own file.
 */
import * as amounts from "./amounts.ts";
import { AMOUNT_RULES } from "./amounts.ts";
import * as ataCreation from "./ata-creation.ts";
import type { FillRule } from "./check.ts";
import * as computeBudget from "./compute-budget.ts";
import { COMPUTE_BUDGET_RULES } from "./compute-budget.ts";
import * as computeUnitLimit from "./compute-unit-limit.ts";
import { computeUnitLimitCoversShape } from "./compute-unit-limit.ts";
import * as fillAccounts from "./fill-accounts.ts";
import {
  fillAccountCount,
  fillDataReadable,
  fillMakerIsOurs,
  fillSystemProgram,
  fillTakerIsKeyOne,
  makerWalletOnlyAsMaker,
  temporaryWsolAccountIffNativeOut,
} from "./fill-accounts.ts";
import * as instructions from "./instructions.ts";
import { exactlyOneFill, onlyAllowedInstructionsInOrder } from "./instructions.ts";
import * as lighthouse from "./lighthouse.ts";
import * as message from "./message.ts";
import {
  makerAndTakerSign,
  makerPaysTheFee,
  messageIsV0,
  noLookupTables,
  quoteAnsweredByThisMaker,
  takerIsTheQuotedTaker,
  takerWritable,
} from "./message.ts";
import * as mints from "./mints.ts";
import { MINT_RULES } from "./mints.ts";
import * as smartAccount from "./smart-account.ts";
import { SMART_ACCOUNT_RULES } from "./smart-account.ts";
import * as tokenAccounts from "./token-accounts.ts";
import {
  makerInputAccountIsMakersAta,
  makerOutputAccountIsMakersAta,
  takerInputAccountIsTakers,
  takerOutputAccountIsTakers,
  tokenAccountsWritable,
} from "./token-accounts.ts";

export const FILL_RULES: readonly FillRule[] = [
  // The message and its two fixed keys (message.ts); a smart-account envelope's own rules
  // (smart-account.ts) as soon as the message is known to be v0 without lookup tables.
  messageIsV0,
  noLookupTables,
  ...SMART_ACCOUNT_RULES,
  makerAndTakerSign,
  makerPaysTheFee,
  quoteAnsweredByThisMaker,
  takerWritable,
  takerIsTheQuotedTaker,
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

/**
 * Each rule's name, for logs and for the attack tests named after a rule: the name it is exported
 * under from its file (stable, unlike a function's inferred `name`).
 */
export const RULE_NAMES: ReadonlyMap<unknown, string> = new Map(
  [
    amounts,
    ataCreation,
    computeBudget,
    computeUnitLimit,
    fillAccounts,
    instructions,
    lighthouse,
    message,
    mints,
    smartAccount,
    tokenAccounts,
  ]
    .flatMap((m) => Object.entries(m))
    .map(([name, value]) => [value, name]),
);

export type { AtaCreation, FillCheck, FillRule, Refusal } from "./check.ts";

/**
 * The smart-account (Squads) envelope's own rules (docs/contract.md, "Smart-account takers"; the
 * envelope is read by ../smart-account.ts). Outside: only the compute budget and the one
 * `executeTransactionSyncV2`, whose second account is the smart-account program; the fee payer is a
 * member, the maker is not one, and the transaction's signers are exactly the members listed and the
 * maker (whose signer flag the program passes on to every inner instruction: hence every other fill
 * rule judges the inner instructions, and none of them may be a compute-budget instruction). The
 * fill's taker is the vault of the settings account and account index (fill-accounts.ts checks it
 * against `takerIndex`). A plain fill passes each of these untouched.
 */

import { describeAccount } from "../../program/decode.ts";
import { SMART_ACCOUNT_PROGRAM_ID } from "../../program/smart-account.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { type FillRule, isMaker, keyOf, refuse } from "./check.ts";

const ENVELOPE = FillRejectCode.INVALID_SMART_ACCOUNT;

export const envelopeOutsideOnlyComputeBudget: FillRule = ({ envelope, d }) => {
  if (!envelope) return undefined;
  for (const ix of d.instructions) {
    if (ix.position === envelope.position) continue;
    if (
      ix.kind !== "computeUnitLimit" &&
      ix.kind !== "computeUnitPrice" &&
      ix.kind !== "computeBudgetOther"
    ) {
      return refuse(
        ENVELOPE,
        `instruction ${ix.position} calls ${ix.programId.toBase58()} beside the smart-account execute; only the compute budget may`,
      );
    }
  }
  return undefined;
};

export const envelopeInsideNoComputeBudget: FillRule = ({ envelope }) => {
  const cb = envelope?.inner.find(
    (ix) =>
      ix.kind === "computeUnitLimit" || ix.kind === "computeUnitPrice" || ix.kind === "computeBudgetOther",
  );
  return cb
    ? refuse(
        ENVELOPE,
        `inner instruction ${cb.inner} is a compute-budget instruction; the budget is set outside`,
      )
    : undefined;
};

export const envelopeNamesTheProgram: FillRule = (c) => {
  const e = c.envelope;
  if (!e) return undefined;
  if (!keyOf(e.program).equals(SMART_ACCOUNT_PROGRAM_ID)) {
    return refuse(
      ENVELOPE,
      `the execute's second account is ${describeAccount(e.program)}, not the smart-account program`,
    );
  }
  if (e.padding !== 0) return refuse(ENVELOPE, `the execute's padding byte is ${e.padding}, not 0`);
  return isMaker(c, e.settings)
    ? refuse(FillRejectCode.INVALID_MAKER_ACCOUNT_USE, "the execute names the maker's wallet as its settings")
    : undefined;
};

export const feePayerIsAMember: FillRule = ({ envelope, maker, d }) => {
  if (!envelope) return undefined;
  const feePayer = d.staticKeys[0];
  if (feePayer?.equals(maker)) {
    return refuse(
      FillRejectCode.INVALID_FEE_PAYER,
      "the maker pays the fee of a smart-account fill; a member does",
    );
  }
  return envelope.members.some((m) => m.index === 0)
    ? undefined
    : refuse(
        FillRejectCode.INVALID_FEE_PAYER,
        `the fee payer ${feePayer?.toBase58()} is not one of the smart account's members listed`,
      );
};

export const makerIsNotAMember: FillRule = (c) =>
  c.envelope?.members.some((m) => isMaker(c, m))
    ? refuse(
        FillRejectCode.INVALID_SMART_ACCOUNT_MEMBERS,
        "the maker is listed as a member of the smart account",
      )
    : undefined;

/** Every member listed signs, once; the maker signs; nobody else does. */
export const signersAreTheMembersAndTheMaker: FillRule = (c) => {
  const e = c.envelope;
  if (!e) return undefined;
  const required = c.d.header.numRequiredSignatures;
  const members = new Set(e.members.map((m) => m.index));
  if (members.size !== e.numSigners) {
    return refuse(FillRejectCode.INVALID_SMART_ACCOUNT_MEMBERS, "the execute lists a member twice");
  }
  const notSigning = e.members.find((m) => !m.signer);
  if (notSigning) {
    return refuse(
      FillRejectCode.INVALID_SMART_ACCOUNT_MEMBERS,
      `member ${describeAccount(notSigning)} does not sign the transaction`,
    );
  }
  if (c.makerIndex < 0 || c.makerIndex >= required) {
    return refuse(FillRejectCode.INVALID_SIGNER_COUNT, "the maker is not one of the transaction's signers");
  }
  return required !== e.numSigners + 1
    ? refuse(
        FillRejectCode.INVALID_SIGNER_COUNT,
        `the transaction has ${required} signers, but the execute lists ${e.numSigners} member(s) and the maker makes ${e.numSigners + 1}`,
      )
    : undefined;
};

export const vaultInTheMessage: FillRule = ({ envelope, takerIndex, taker }) =>
  envelope && takerIndex < 0
    ? refuse(
        FillRejectCode.INVALID_TAKER,
        `the smart account's vault ${taker.toBase58()} is not in the message`,
      )
    : undefined;

export const SMART_ACCOUNT_RULES: readonly FillRule[] = [
  envelopeOutsideOnlyComputeBudget,
  envelopeInsideNoComputeBudget,
  envelopeNamesTheProgram,
  feePayerIsAMember,
  makerIsNotAMember,
  signersAreTheMembersAndTheMaker,
  vaultInTheMessage,
];

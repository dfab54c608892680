/**
 * The fill instruction itself: readable data, 11 accounts (12 for a native-SOL output, the 12th
 * being the maker's temporary wSOL PDA), the transaction's taker (key 1) as its taker, our maker as
 * its maker and nowhere else, the System program where it belongs.
 */

import { type AccountRef, describeAccount } from "../../program/decode.ts";
import { SYSTEM_PROGRAM_ID, temporaryWsolAccount } from "../../program/layout.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { type FillRule, isMaker, keyOf, refuse } from "./check.ts";

// decode.ts always says why it could not read the arguments.
export const fillDataReadable: FillRule = ({ fill }) =>
  fill && !fill.args ? refuse(FillRejectCode.MALFORMED_FILL_DATA, String(fill.dataProblem)) : undefined;

export const fillAccountCount: FillRule = ({ fill }) =>
  fill && !fill.named
    ? refuse(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `the fill names ${fill.accounts.length} accounts; it takes 11, or 12 for a native-SOL output`,
      )
    : undefined;

/** Key 1 in a plain fill; in a smart-account envelope, the vault of its settings and account index. */
export const fillTakerIsKeyOne: FillRule = ({ accounts, taker, takerIndex, envelope }) =>
  accounts && accounts.taker.index !== takerIndex
    ? refuse(
        FillRejectCode.INVALID_TAKER,
        `the fill's taker is ${describeAccount(accounts.taker)}, not the transaction's taker (${envelope ? "the smart account's vault" : "key 1"}) ${taker.toBase58()}`,
      )
    : undefined;

export const fillMakerIsOurs: FillRule = (c) =>
  c.accounts && !isMaker(c, c.accounts.maker)
    ? refuse(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `the fill's maker is ${describeAccount(c.accounts.maker)}, not the maker ${c.maker.toBase58()}`,
      )
    : undefined;

export const makerWalletOnlyAsMaker: FillRule = (c) => {
  const n = c.accounts;
  if (!n) return undefined;
  for (const [name, a] of Object.entries(n) as [string, AccountRef][]) {
    if (a !== n.maker && isMaker(c, a)) {
      return refuse(
        FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
        `the fill passes the maker's wallet as its ${name}`,
      );
    }
  }
  return undefined;
};

export const fillSystemProgram: FillRule = ({ accounts }) =>
  accounts && !keyOf(accounts.systemProgram).equals(SYSTEM_PROGRAM_ID)
    ? refuse(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `the fill's system program is ${describeAccount(accounts.systemProgram)}, not ${SYSTEM_PROGRAM_ID.toBase58()}`,
      )
    : undefined;

/** A native-SOL output needs the maker's temporary wSOL PDA as 12th account; any other fill has none. */
export const temporaryWsolAccountIffNativeOut: FillRule = ({ accounts, nativeSolOut, maker }) => {
  if (!accounts) return undefined;
  const pda = accounts.temporaryWsolTokenAccount;
  if (nativeSolOut) {
    const expected = temporaryWsolAccount(maker);
    return pda && keyOf(pda).equals(expected)
      ? undefined
      : refuse(
          FillRejectCode.INVALID_FILL_ACCOUNTS,
          `a native-SOL output needs the temporary wSOL account ${expected.toBase58()} as the fill's 12th account, got ${pda ? describeAccount(pda) : "none"}`,
        );
  }
  return pda
    ? refuse(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `the fill has a 12th account ${describeAccount(pda)} but its output is not native SOL`,
      )
    : undefined;
};

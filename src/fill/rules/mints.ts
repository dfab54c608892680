/**
 * The fill's mints are the quote's, both traded here, each with its configured token program.
 */

import { describeAccount } from "../../program/decode.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { type FillRule, keyOf, refuse } from "./check.ts";

export const inputMintIsQuoted: FillRule = ({ accounts, inputMint, quote }) =>
  accounts && !keyOf(accounts.inputMint).equals(inputMint)
    ? refuse(
        FillRejectCode.INVALID_MINT,
        `the fill's input mint is ${describeAccount(accounts.inputMint)}, but the quote's tokenIn is ${quote.request.tokenIn}`,
      )
    : undefined;

export const outputMintIsQuoted: FillRule = ({ accounts, outputMint, quote }) =>
  accounts && !keyOf(accounts.outputMint).equals(outputMint)
    ? refuse(
        FillRejectCode.INVALID_MINT,
        `the fill's output mint is ${describeAccount(accounts.outputMint)}, but the quote's tokenOut is ${quote.request.tokenOut}`,
      )
    : undefined;

export const inputMintTraded: FillRule = ({ inputToken, quote }) =>
  inputToken
    ? undefined
    : refuse(FillRejectCode.INVALID_MINT, `the input mint ${quote.request.tokenIn} is not traded`);

export const outputMintTraded: FillRule = ({ outputToken, quote }) =>
  outputToken
    ? undefined
    : refuse(FillRejectCode.INVALID_MINT, `the output mint ${quote.request.tokenOut} is not traded`);

export const inputTokenProgramConfigured: FillRule = ({ accounts, inputTokenProgram, inputToken }) =>
  accounts && inputTokenProgram && inputToken && !keyOf(accounts.inputTokenProgram).equals(inputTokenProgram)
    ? refuse(
        FillRejectCode.INVALID_TOKEN_PROGRAM,
        `the input token program is ${describeAccount(accounts.inputTokenProgram)}, but ${inputToken.symbol} uses ${inputToken.tokenProgram}`,
      )
    : undefined;

export const outputTokenProgramConfigured: FillRule = ({ accounts, outputTokenProgram, outputToken }) =>
  accounts &&
  outputTokenProgram &&
  outputToken &&
  !keyOf(accounts.outputTokenProgram).equals(outputTokenProgram)
    ? refuse(
        FillRejectCode.INVALID_TOKEN_PROGRAM,
        `the output token program is ${describeAccount(accounts.outputTokenProgram)}, but ${outputToken.symbol} uses ${outputToken.tokenProgram}`,
      )
    : undefined;

export const MINT_RULES: readonly FillRule[] = [
  inputMintIsQuoted,
  outputMintIsQuoted,
  inputMintTraded,
  outputMintTraded,
  inputTokenProgramConfigured,
  outputTokenProgramConfigured,
];

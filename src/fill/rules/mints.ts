/**
 * The fill's mints are the quote's, both traded here, each with its configured token program.
 */
import { PublicKey } from "@solana/web3.js";
import { FillRejectCode } from "../../refusal/codes.ts";
import { describeAccount } from "../decode.ts";
import { type FillRule, keyOf, refuse } from "./check.ts";

export const inputMintIsQuoted: FillRule = ({ accounts, inputMint, quote }) =>
  keyOf(accounts!.inputMint).equals(inputMint)
    ? undefined
    : refuse(
        FillRejectCode.INVALID_MINT,
        `the fill's input mint is ${describeAccount(accounts!.inputMint)}, but the quote's tokenIn is ${quote.request.tokenIn}`,
      );

export const outputMintIsQuoted: FillRule = ({ accounts, outputMint, quote }) =>
  keyOf(accounts!.outputMint).equals(outputMint)
    ? undefined
    : refuse(
        FillRejectCode.INVALID_MINT,
        `the fill's output mint is ${describeAccount(accounts!.outputMint)}, but the quote's tokenOut is ${quote.request.tokenOut}`,
      );

export const inputMintTraded: FillRule = (c) => {
  c.inputToken = c.tokens.get(c.quote.request.tokenIn);
  if (!c.inputToken) {
    return refuse(FillRejectCode.INVALID_MINT, `the input mint ${c.quote.request.tokenIn} is not traded`);
  }
  c.inputTokenProgram = new PublicKey(c.inputToken.tokenProgram);
  return undefined;
};

export const outputMintTraded: FillRule = (c) => {
  c.outputToken = c.tokens.get(c.quote.request.tokenOut);
  if (!c.outputToken) {
    return refuse(FillRejectCode.INVALID_MINT, `the output mint ${c.quote.request.tokenOut} is not traded`);
  }
  c.outputTokenProgram = new PublicKey(c.outputToken.tokenProgram);
  return undefined;
};

export const inputTokenProgramConfigured: FillRule = ({ accounts, inputTokenProgram, inputToken }) =>
  keyOf(accounts!.inputTokenProgram).equals(inputTokenProgram!)
    ? undefined
    : refuse(
        FillRejectCode.INVALID_TOKEN_PROGRAM,
        `the input token program is ${describeAccount(accounts!.inputTokenProgram)}, but ${inputToken!.symbol} uses ${inputToken!.tokenProgram}`,
      );

export const outputTokenProgramConfigured: FillRule = ({ accounts, outputTokenProgram, outputToken }) =>
  keyOf(accounts!.outputTokenProgram).equals(outputTokenProgram!)
    ? undefined
    : refuse(
        FillRejectCode.INVALID_TOKEN_PROGRAM,
        `the output token program is ${describeAccount(accounts!.outputTokenProgram)}, but ${outputToken!.symbol} uses ${outputToken!.tokenProgram}`,
      );

export const MINT_RULES: readonly FillRule[] = [
  inputMintIsQuoted,
  outputMintIsQuoted,
  inputMintTraded,
  outputMintTraded,
  inputTokenProgramConfigured,
  outputTokenProgramConfigured,
];

/**
 * The four token accounts the fill moves funds between: the maker's are the maker's ATAs; the
 * taker's are the taker's ATAs, or the order-engine id standing for a native-SOL leg on the wSOL
 * mint. Every one that holds tokens (and the temporary wSOL PDA) must be writable, or the fill fails
 * on-chain after the maker has paid its fee.
 */
import type { PublicKey } from "@solana/web3.js";
import { type AccountRef, describeAccount } from "../../program/decode.ts";
import { NATIVE_MINT, ORDER_ENGINE_PROGRAM_ID } from "../../program/layout.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { associatedTokenAddress } from "../ata.ts";
import { type FillRule, keyOf, refuse } from "./check.ts";

export const makerInputAccountIsMakersAta: FillRule = ({
  accounts,
  makerInputTokenAccount: ata,
  inputToken,
}) =>
  accounts && ata && inputToken && !keyOf(accounts.makerInputTokenAccount).equals(ata)
    ? refuse(
        FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
        `the maker input token account is ${describeAccount(accounts.makerInputTokenAccount)}, not the maker's ${inputToken.symbol} ATA ${ata.toBase58()}`,
      )
    : undefined;

export const makerOutputAccountIsMakersAta: FillRule = ({
  accounts,
  makerOutputTokenAccount: ata,
  outputToken,
}) =>
  accounts && ata && outputToken && !keyOf(accounts.makerOutputTokenAccount).equals(ata)
    ? refuse(
        FillRejectCode.INVALID_MAKER_TOKEN_ACCOUNT,
        `the maker output token account is ${describeAccount(accounts.makerOutputTokenAccount)}, not the maker's ${outputToken.symbol} ATA ${ata.toBase58()}`,
      )
    : undefined;

/** Whether `account` is the native-SOL placeholder on a wSOL leg; otherwise whether it is the taker's ATA. */
function takerLeg(account: PublicKey, mint: PublicKey, taker: PublicKey, program: PublicKey) {
  const native = account.equals(ORDER_ENGINE_PROGRAM_ID) && mint.equals(NATIVE_MINT);
  const ata = associatedTokenAddress(mint, taker, program);
  return { ata, ok: native || account.equals(ata) };
}

const placeholderNote = (mint: PublicKey) =>
  mint.equals(NATIVE_MINT) ? " or the native-SOL placeholder" : "";

export const takerInputAccountIsTakers: FillRule = (c) => {
  const { takerInputTokenAccount: account, inputTokenProgram: program, inputToken } = c;
  if (!account || !program || !inputToken) return undefined;
  const leg = takerLeg(account, c.inputMint, c.taker, program);
  return leg.ok
    ? undefined
    : refuse(
        FillRejectCode.INVALID_TAKER_TOKEN_ACCOUNT,
        `the taker input token account is ${account.toBase58()}, not the taker's ${inputToken.symbol} ATA ${leg.ata.toBase58()}${placeholderNote(c.inputMint)}`,
      );
};

export const takerOutputAccountIsTakers: FillRule = (c) => {
  const { takerOutputTokenAccount: account, outputTokenProgram: program, outputToken } = c;
  if (!account || !program || !outputToken) return undefined;
  const leg = takerLeg(account, c.outputMint, c.taker, program);
  return leg.ok
    ? undefined
    : refuse(
        FillRejectCode.INVALID_TAKER_TOKEN_ACCOUNT,
        `the taker output token account is ${account.toBase58()}, not the taker's ${outputToken.symbol} ATA ${leg.ata.toBase58()}${placeholderNote(c.outputMint)}`,
      );
};

/** A read-only token account makes the fill fail on-chain, and the maker still pays its fee. */
export const tokenAccountsWritable: FillRule = ({ accounts: n, nativeSolIn, nativeSolOut }) => {
  if (!n) return undefined;
  const mustWrite: [string, AccountRef | undefined, boolean][] = [
    ["taker input token account", n.takerInputTokenAccount, !nativeSolIn],
    ["maker input token account", n.makerInputTokenAccount, true],
    ["taker output token account", n.takerOutputTokenAccount, !nativeSolOut],
    ["maker output token account", n.makerOutputTokenAccount, true],
    ["temporary wSOL account", n.temporaryWsolTokenAccount, true],
  ];
  for (const [name, a, required] of mustWrite) {
    if (a && required && !a.writable) {
      return refuse(
        FillRejectCode.INVALID_FILL_ACCOUNTS,
        `the fill's ${name} is not writable, so the fill would fail`,
      );
    }
  }
  return undefined;
};

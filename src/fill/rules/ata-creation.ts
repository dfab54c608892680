/**
 * ATA creation before the fill: only a well-formed CreateIdempotent (data exactly [1], six accounts),
 * paid by a writable signer other than the maker, for the taker or the quote's receiver, for one of
 * the fill's mints with its configured token program, the address being that owner's ATA. The
 * maker's wallet appears nowhere in it (not even as the owner a receiver could name).
 */
import type { PublicKey } from "@solana/web3.js";
import { type AtaCreateIdempotentIx, type AtaOtherIx, describeAccount } from "../../program/decode.ts";
import { SYSTEM_PROGRAM_ID } from "../../program/layout.ts";
import { FillRejectCode } from "../../refusal/codes.ts";
import { associatedTokenAddress } from "../ata.ts";
import { type FillCheck, isMaker, keyOf, type Refusal, refuse } from "./check.ts";

/** One Associated Token instruction before the fill (resolve.ts lists the well-formed ones). */
export function ataInstruction(
  c: FillCheck,
  ix: AtaOtherIx | AtaCreateIdempotentIx,
  where: string,
): Refusal | undefined {
  if (ix.kind === "ataOther") {
    return refuse(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} is an Associated Token instruction other than CreateIdempotent (data must be exactly [1])`,
    );
  }
  const named = ix.named;
  if (!named) {
    return refuse(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} (CreateIdempotent) does not name six accounts`,
    );
  }
  const { payer, ata, owner, mint, systemProgram, tokenProgram } = named;
  if (isMaker(c, payer)) {
    return refuse(
      FillRejectCode.INVALID_ATA_PAYER,
      `${where} creates an account paid by the maker; the taker pays for its ATAs`,
    );
  }
  if (!payer.signer || !payer.writable) {
    return refuse(FillRejectCode.INVALID_ATA_PAYER, `${where} names a payer that is not a writable signer`);
  }
  const ownerKey = keyOf(owner);
  if (!ownerKey.equals(c.taker) && ownerKey.toBase58() !== c.quote.request.receiver) {
    return refuse(
      FillRejectCode.INVALID_ATA_OWNER,
      `${where} creates an account owned by ${ownerKey.toBase58()}, who is neither the taker nor the receiver`,
    );
  }
  if ([owner, ata, mint, systemProgram, tokenProgram].some((a) => isMaker(c, a))) {
    return refuse(
      FillRejectCode.INVALID_MAKER_ACCOUNT_USE,
      `${where} (CreateIdempotent) names the maker's wallet`,
    );
  }
  const mintKey = keyOf(mint);
  if (!mintKey.equals(c.inputMint) && !mintKey.equals(c.outputMint)) {
    return refuse(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} creates an account for ${mintKey.toBase58()}, not a mint of this fill`,
    );
  }
  const programKey = keyOf(tokenProgram);
  if (!tokenProgramOfMint(c, mintKey, programKey)) {
    return refuse(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} names token program ${programKey.toBase58()}, not the mint's`,
    );
  }
  if (!keyOf(systemProgram).equals(SYSTEM_PROGRAM_ID)) {
    return refuse(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} names ${describeAccount(systemProgram)} as the system program`,
    );
  }
  const expected = associatedTokenAddress(mintKey, ownerKey, programKey);
  if (!keyOf(ata).equals(expected)) {
    return refuse(
      FillRejectCode.INVALID_ATA_INSTRUCTION,
      `${where} creates ${describeAccount(ata)}, which is not the ATA ${expected.toBase58()} of its owner and mint`,
    );
  }
  return undefined;
}

/**
 * The configured token program of a traded mint. A fill mint we do not trade is refused by the mint
 * rules (mints.ts, INVALID_MINT) whatever program its ATA creation names.
 */
function tokenProgramOfMint(c: FillCheck, mint: PublicKey, program: PublicKey): boolean {
  const configured = c.tokens.get(mint.toBase58());
  return configured === undefined || program.toBase58() === configured.tokenProgram;
}

/**
 * The maker's companion transaction of a permissioned fill (docs/contract.md, "Permissioned tokens"
 * and "Bundles"): the fill's message is fixed, so the mint or burn, and the tip the bundle engine
 * requires, go in a transaction of the maker's own that lands in the same bundle:
 *  - taker buys:  [companion: MintToChecked into the maker's token account of the fill, tip] then the fill;
 *  - taker sells: the fill, then [companion: BurnChecked from the maker's token account of the fill, tip].
 * The issuer key pays its fee and the tip (and signs the mint as mint authority); a burn is also signed
 * by the maker, owner of the token account. It uses the fill's recent blockhash, so the bundle can land
 * exactly as long as the fill can.
 */
import { createBurnCheckedInstruction, createMintToCheckedInstruction } from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import type { Signer } from "../signer/index.ts";
import type { IssuanceNeed } from "./policy.ts";

/** Compute units the companion asks for (a mint or burn plus a transfer use under 10,000). */
export const COMPANION_COMPUTE_UNIT_LIMIT = 30_000;

export interface CompanionArgs {
  need: IssuanceNeed;
  /** The maker's token account of the issued mint that the fill pays from (buy) or into (sell). */
  makerTokenAccount: PublicKey;
  maker: Signer;
  issuer: Signer;
  tipAccount: PublicKey;
  recentBlockhash: string;
}

/** Builds and signs the companion transaction; the bundle order is the caller's (mint first, burn last). */
export async function buildCompanion(a: CompanionArgs): Promise<VersionedTransaction> {
  const { token } = a.need.issued;
  const mint = new PublicKey(token.mint);
  const program = new PublicKey(token.tokenProgram);
  const issuer = a.issuer.publicKey;
  const supplyIx =
    a.need.direction === "mint"
      ? createMintToCheckedInstruction(
          mint,
          a.makerTokenAccount,
          issuer,
          a.need.amount,
          token.decimals,
          [],
          program,
        )
      : createBurnCheckedInstruction(
          a.makerTokenAccount,
          mint,
          a.maker.publicKey,
          a.need.amount,
          token.decimals,
          [],
          program,
        );
  const message = new TransactionMessage({
    payerKey: issuer,
    recentBlockhash: a.recentBlockhash,
    instructions: [
      ComputeBudgetProgram.setComputeUnitLimit({ units: COMPANION_COMPUTE_UNIT_LIMIT }),
      supplyIx,
      SystemProgram.transfer({
        fromPubkey: issuer,
        toPubkey: a.tipAccount,
        lamports: a.need.issued.tipLamports,
      }),
    ],
  }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  await a.issuer.sign(tx);
  if (a.need.direction === "burn" && !a.maker.publicKey.equals(issuer)) await a.maker.sign(tx);
  return tx;
}

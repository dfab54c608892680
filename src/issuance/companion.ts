/**
 * The maker's companion transaction of a permissioned fill (docs/contract.md, "Permissioned tokens"
 * and "Bundles"): the fill's message is fixed, so the mint or burn, and the tip the bundle engine
 * requires, go in a transaction of the maker's own that lands in the same bundle:
 *  - taker buys:  [companion: MintToChecked into the maker's token account of the fill, tip] then the fill;
 *  - taker sells: the fill, then [companion: BurnChecked from the maker's token account of the fill, tip].
 * The issuer key pays its fee and the tip (and signs the mint as mint authority); a burn is also signed
 * by the maker, owner of the token account. It uses the fill's recent blockhash, so the bundle can land
 * exactly as long as the fill can.
 *
 * The tip transfer carries the fill's quote as a reference key (as Solana Pay does: a read-only,
 * non-signing account the System Program ignores, here sha256("rfq:" + quoteId)). Without it the
 * companion is a function of the mint, the maker's account, the amount, the tip account and the
 * blockhash alone: two takers buying the same amount within one blockhash got byte-identical
 * companions, one signature, and the second bundle was refused as already processed (a failed fill;
 * seen as a flaky test/issuance/permissioned.test.ts). The key also finds the transaction by its quote
 * (`getSignaturesForAddress`).
 */
import { createHash } from "node:crypto";
import { createBurnCheckedInstruction, createMintToCheckedInstruction } from "@solana/spl-token";
import {
  ComputeBudgetProgram,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import type { Signer } from "../signing/port.ts";
import type { IssuanceNeed } from "./policy.ts";

/** Compute units the companion asks for (a mint or burn plus a transfer use under 10,000). */
const COMPANION_COMPUTE_UNIT_LIMIT = 30_000;

/** The reference key a companion carries for its quote: sha256("rfq:" + quoteId). */
export const companionReference = (quoteId: string): PublicKey =>
  new PublicKey(createHash("sha256").update(`rfq:${quoteId}`).digest());

export interface CompanionArgs {
  need: IssuanceNeed;
  /** The maker's token account of the issued mint that the fill pays from (buy) or into (sell). */
  makerTokenAccount: PublicKey;
  maker: Signer;
  issuer: Signer;
  tipAccount: PublicKey;
  recentBlockhash: string;
  /** The fill's quoteId: its reference key makes each fill's companion its own. */
  quoteId: string;
}

/**
 * Who makes a fill's companion: the issuer key in this process (`localCompanions`), or the signer
 * service, which holds it in remote-signer mode and checks the issuance caps itself
 * (src/signing/remote.ts `companion`). The webhook then holds no issuer key.
 */
export interface CompanionMaker {
  /** The issuer key's public half: the mint authority and the companion's fee payer. */
  readonly issuer: PublicKey;
  make(a: {
    need: IssuanceNeed;
    /** The fill, co-signed by the maker. */
    fill: VersionedTransaction;
    makerTokenAccount: PublicKey;
    tipAccount: PublicKey;
    quoteId: string;
  }): Promise<VersionedTransaction>;
}

/** Companions signed in this process, by the issuer key (and the maker's, for a burn). */
export function localCompanions(issuer: Signer, maker: Signer): CompanionMaker {
  return {
    issuer: issuer.publicKey,
    make: (a) =>
      buildCompanion({
        need: a.need,
        makerTokenAccount: a.makerTokenAccount,
        maker,
        issuer,
        tipAccount: a.tipAccount,
        recentBlockhash: a.fill.message.recentBlockhash,
        quoteId: a.quoteId,
      }),
  };
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
  const tip = SystemProgram.transfer({
    fromPubkey: issuer,
    toPubkey: a.tipAccount,
    lamports: a.need.issued.tipLamports,
  });
  tip.keys.push({ pubkey: companionReference(a.quoteId), isSigner: false, isWritable: false });
  const message = new TransactionMessage({
    payerKey: issuer,
    recentBlockhash: a.recentBlockhash,
    instructions: [
      ComputeBudgetProgram.setComputeUnitLimit({ units: COMPANION_COMPUTE_UNIT_LIMIT }),
      supplyIx,
      tip,
    ],
  }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  await a.issuer.sign(tx);
  // Stryker disable next-line ConditionalExpression: a maker that is the issuer signing again writes the same signature
  if (a.need.direction === "burn" && !a.maker.publicKey.equals(issuer)) await a.maker.sign(tx);
  return tx;
}

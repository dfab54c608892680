/**
 * The accounts and transactions the bundle tests share (the local engine's, and the sandbox chain's
 * block-engine API): a funded maker and taker, a fresh mint whose authority is the local chain's
 * mint authority, both parties' token accounts, and the two transactions of a permissioned bundle:
 * the maker's companion (mint to its own account, and tip) and the fill's stand-in (the maker's
 * tokens to the taker, the taker paying the fee).
 */
import { createMintToInstruction, createTransferInstruction } from "@solana/spl-token";
import {
  Keypair,
  type PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { createMint, creditSol, creditToken, mintAuthority } from "../../src/chain/local/seed.ts";
import { readMint } from "../../src/chain/local/spl-state.ts";
import { TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";

export function bundleBed(chain: LocalChain, tip: PublicKey) {
  const maker = Keypair.generate();
  const taker = Keypair.generate();
  const issuer = mintAuthority(chain);
  creditSol(chain, maker.publicKey, 10_000_000_000n);
  creditSol(chain, taker.publicKey, 10_000_000_000n);
  const mint = Keypair.generate().publicKey;
  createMint(chain, { address: mint, decimals: 6 });
  const makerAta = creditToken(chain, maker.publicKey, mint, 0n);
  const takerAta = creditToken(chain, taker.publicKey, mint, 0n);

  /** A v0 transaction on the chain's latest blockhash, signed by `payer` and `signers`. */
  const signed = (payer: Keypair, ixs: TransactionInstruction[], signers: Keypair[] = []) => {
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: chain.latestBlockhash().blockhash,
      instructions: ixs,
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([payer, ...signers]);
    return tx;
  };
  return {
    maker,
    taker,
    issuer,
    mint,
    makerAta,
    takerAta,
    tip,
    signed,
    /** The maker's companion: mint `amount` to its own token account, and tip (null: no tip). */
    mintAndTip: (amount: bigint, tipLamports: bigint | null = 10_000n) =>
      signed(
        maker,
        [
          createMintToInstruction(mint, makerAta, issuer.publicKey, amount),
          ...(tipLamports === null
            ? []
            : [
                SystemProgram.transfer({ fromPubkey: maker.publicKey, toPubkey: tip, lamports: tipLamports }),
              ]),
        ],
        [issuer],
      ),
    /** The fill's stand-in: the maker's tokens to the taker, the taker paying the fee. */
    fill: (amount: bigint) =>
      signed(taker, [createTransferInstruction(makerAta, takerAta, maker.publicKey, amount)], [maker]),
    supply: () => readMint(mint, chain.svm.getAccount(mint), TOKEN_PROGRAM_ID)?.supply,
  };
}
export type BundleBed = ReturnType<typeof bundleBed>;

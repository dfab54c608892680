/**
 * The signer port: the maker key as the rest of the service sees it, `publicKey` and `sign`. Two
 * adapters, beside this file: KeypairSigner (keypair.ts: the key in this process) and RemoteSigner
 * (remote.ts: the key in the signer service, `npm run signer`, src/signer/service/, reached over a
 * Unix socket or mutual TLS with the wire in protocol.ts). Nothing else in the service holds a secret.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";

/** What a fill's signature is for: the remote signer re-checks the fill against this quote itself. */
export interface SignContext {
  quoteId: string;
}

/**
 * What an RFQ v2 swap's signature is for: the swap id (the signer signs one landable message per id)
 * and the level set the webhook matched it to, which the remote signer checks the swap against but
 * never prices by (it prices the swap's own levels against its own mid).
 */
export interface V2SignContext {
  swapUuid: string;
  claimed: {
    pair: string;
    sequence: bigint;
    lotSizeBase: bigint;
    /** The consuming side's levels, best first: whole lots at a price per lot (quote atoms). */
    levels: readonly { lots: bigint; perLot: bigint }[];
    validUntilMs: number;
  };
}

export interface Signer {
  readonly publicKey: PublicKey;
  /**
   * Adds the maker's signature to the transaction in place. The local adapter signs at once; the
   * remote one asks the signer service, which may refuse (SignerRefusal, with the refusal's code).
   */
  sign(tx: VersionedTransaction, context?: SignContext | V2SignContext): void | Promise<void>;
}

/** The signer service refused to sign; `code` names the rule or limit (src/signing/protocol.ts). */
export class SignerRefusal extends Error {
  constructor(
    readonly code: string,
    readonly context: string,
  ) {
    super(`${code}: ${context}`);
    this.name = "SignerRefusal";
  }
}

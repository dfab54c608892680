/**
 * Ed25519 checks of a transaction's signatures, as a validator does before executing it: signature i
 * must be the signature of account key i over the serialized message. Uses node:crypto (OpenSSL), no
 * extra dependency: a raw 32-byte public key becomes a KeyObject through its fixed SPKI DER prefix.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import { verifyEd25519 } from "../crypto/ed25519.ts";

export type SignatureCheck = { ok: true } | { ok: false; error: string; signer?: string };

/**
 * Checks every required signature of `tx`. A zeroed slot is reported as missing, a wrong one as
 * invalid, each naming the signer.
 */
export function checkTransactionSignatures(tx: VersionedTransaction): SignatureCheck {
  const message = tx.message;
  const required = message.header.numRequiredSignatures;
  if (tx.signatures.length !== required) {
    return { ok: false, error: `expected ${required} signatures, got ${tx.signatures.length}` };
  }
  const keys = message.staticAccountKeys;
  const bytes = message.serialize();
  for (let i = 0; i < required; i++) {
    const signer = keys[i];
    const sig = tx.signatures[i];
    if (!signer || !sig) return { ok: false, error: `signature ${i} has no signer key` };
    if (sig.every((b) => b === 0)) {
      return { ok: false, error: `missing signature for ${signer.toBase58()}`, signer: signer.toBase58() };
    }
    if (!verifyEd25519(bytes, sig, signer.toBytes())) {
      return { ok: false, error: `invalid signature for ${signer.toBase58()}`, signer: signer.toBase58() };
    }
  }
  return { ok: true };
}

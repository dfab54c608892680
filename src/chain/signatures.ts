/**
 * Ed25519 checks of a transaction's signatures, as a validator does before executing it: signature i
 * must be the signature of account key i over the serialized message. Uses node:crypto (OpenSSL), no
 * extra dependency: a raw 32-byte public key becomes a KeyObject through its fixed SPKI DER prefix.
 */
import { createPublicKey, type KeyObject, verify } from "node:crypto";
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";

/** DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function keyObject(key: PublicKey): KeyObject {
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, key.toBuffer()]),
    format: "der",
    type: "spki",
  });
}

/** True when `signature` is `signer`'s ed25519 signature over `message`. */
export function verifyEd25519(message: Uint8Array, signature: Uint8Array, signer: PublicKey): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, message, keyObject(signer), signature);
  } catch {
    return false;
  }
}

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
    if (!verifyEd25519(bytes, sig, signer)) {
      return { ok: false, error: `invalid signature for ${signer.toBase58()}`, signer: signer.toBase58() };
    }
  }
  return { ok: true };
}

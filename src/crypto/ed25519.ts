/**
 * Ed25519 through node:crypto (OpenSSL): verifying takes tens of microseconds and signing about a fifth
 * of tweetnacl's time, with no extra dependency. Raw Solana keys become KeyObjects through their fixed
 * DER headers (RFC 8410).
 */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";

/** SubjectPublicKeyInfo header of an Ed25519 public key; the 32 raw key bytes follow it. */
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
/** PKCS#8 header of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** True when `signature` is the ed25519 signature of the 32-byte public `key` over `message`. */
export function verifyEd25519(message: Uint8Array, signature: Uint8Array, key: Uint8Array): boolean {
  if (signature.length !== 64 || key.length !== 32) return false;
  try {
    const publicKey = createPublicKey({
      key: Buffer.concat([SPKI_PREFIX, key]),
      format: "der",
      type: "spki",
    });
    return verify(null, message, publicKey, signature);
  } catch {
    return false;
  }
}

/** A signing key from a Solana secret key (64 bytes: seed then public key) or its 32-byte seed. */
export function ed25519SigningKey(secretKey: Uint8Array): KeyObject {
  const seed = secretKey.subarray(0, 32);
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
}

/** The 64-byte ed25519 signature of `message`. */
export function signEd25519(message: Uint8Array, key: KeyObject): Uint8Array {
  return sign(null, message, key);
}

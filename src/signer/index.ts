/**
 * Signer port: the maker key. Loaded from a Solana keypair JSON file (64-byte array, as written by
 * `solana-keygen`); in the embedded default, generated once into the data folder. Nothing else in the
 * service holds the secret: callers get `publicKey` and `sign`.
 */
import type { KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Keypair, type PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import { ed25519SigningKey, signEd25519 } from "../crypto/ed25519.ts";

export interface Signer {
  readonly publicKey: PublicKey;
  /** Adds the maker's signature to the transaction in place. */
  sign(tx: VersionedTransaction): void;
}

export class KeypairSigner implements Signer {
  readonly publicKey: PublicKey;
  /** node:crypto signs about five times faster than tweetnacl, and this runs on every swap. */
  readonly #key: KeyObject;

  constructor(keypair: Keypair) {
    this.publicKey = keypair.publicKey;
    this.#key = ed25519SigningKey(keypair.secretKey);
  }

  sign(tx: VersionedTransaction): void {
    const signature = signEd25519(tx.message.serialize(), this.#key);
    // Throws if the maker is not one of the message's required signers.
    tx.addSignature(this.publicKey, signature);
  }
}

/** Reads a keypair file; throws naming the file when it is missing or malformed. */
export function readKeypairFile(path: string): Keypair {
  let bytes: unknown;
  try {
    bytes = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new Error(`MAKER_KEYPAIR: cannot read ${path}: ${(e as Error).message}`);
  }
  if (
    !Array.isArray(bytes) ||
    bytes.length !== 64 ||
    !bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)
  ) {
    throw new Error(`MAKER_KEYPAIR: ${path} is not a 64-byte Solana keypair JSON array`);
  }
  return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
}

/** Loads the keypair at `path`, creating it (mode 0600) first if it does not exist. */
export function loadOrCreateKeypair(path: string): { keypair: Keypair; created: boolean } {
  if (existsSync(path)) return { keypair: readKeypairFile(path), created: false };
  const keypair = Keypair.generate();
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(Array.from(keypair.secretKey)), { mode: 0o600 });
  return { keypair, created: true };
}

/**
 * The maker's signer, chosen once for the service and the ops commands: the keypair file named by
 * MAKER_KEYPAIR, or the paper setup's key in DATA_DIR (generated on first use; `created` says so).
 */
export function makeSigner(config: Config): { signer: Signer; created: boolean } {
  if (config.env.MAKER_KEYPAIR) {
    return { signer: new KeypairSigner(readKeypairFile(config.env.MAKER_KEYPAIR)), created: false };
  }
  const { keypair, created } = loadOrCreateKeypair(join(config.env.DATA_DIR, "maker-keypair.json"));
  return { signer: new KeypairSigner(keypair), created };
}

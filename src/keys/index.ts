/**
 * Signer port: the maker key. Two adapters:
 *  - KeypairSigner (here): the key in this process, loaded from a Solana keypair JSON file (64-byte
 *    array, as written by `solana-keygen`) named by MAKER_KEYPAIR; in the paper setup, generated once
 *    into the data folder.
 *  - RemoteSigner (remote.ts): the key in the signer service (`npm run signer`, src/signer/service/),
 *    reached over a Unix socket or mutual TLS (SIGNER_URL); this process then holds no key material.
 * Nothing else in the service holds the secret: callers get `publicKey` and `sign`.
 */
import type { KeyObject } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Keypair, type PublicKey, type VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import { ed25519SigningKey, signEd25519 } from "../crypto/ed25519.ts";

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

/** The signer service refused to sign; `code` names the rule or limit (src/signer/protocol.ts). */
export class SignerRefusal extends Error {
  constructor(
    readonly code: string,
    readonly context: string,
  ) {
    super(`${code}: ${context}`);
    this.name = "SignerRefusal";
  }
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

/**
 * Reads a keypair file; throws naming the setting and the file when it is missing or malformed. The
 * error never quotes the file's content (JSON.parse's own message shows a slice of the text, which
 * here is the secret).
 */
export function readKeypairFile(path: string, setting = "MAKER_KEYPAIR"): Keypair {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`${setting}: cannot read ${path}: ${code ?? "read failed"}`);
  }
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    throw new Error(`${setting}: ${path} is not valid JSON (expected a 64-byte Solana keypair JSON array)`);
  }
  if (
    !Array.isArray(bytes) ||
    bytes.length !== 64 ||
    !bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256)
  ) {
    throw new Error(`${setting}: ${path} is not a 64-byte Solana keypair JSON array`);
  }
  try {
    return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
  } catch {
    throw new Error(`${setting}: ${path} is not a valid keypair (its public half does not match its secret)`);
  }
}

/**
 * Refuses a keypair file that group or others may read or write, with the fix in the message. The
 * signer service always applies it; the webhook applies it in production (config/safety.ts, where
 * ALLOW_READABLE_KEYPAIR can accept it).
 */
export function assertPrivateKeyFile(path: string, setting: string): void {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (e) {
    throw new Error(`${setting}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? "stat failed"}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new Error(
      `${setting}: ${path} is accessible to group or others (mode ${(mode & 0o777).toString(8).padStart(4, "0")}); fix: chmod 600 ${path}`,
    );
  }
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

/**
 * Chain port: the few chain reads and writes the service needs. Adapters: rpc.ts (Solana JSON-RPC via
 * @solana/web3.js, several send endpoints) and local.ts (LiteSVM, the embedded default and test bed).
 *
 * Expected failures (timeouts, a dropped transaction) are values, not exceptions.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";

export interface AccountSnapshot {
  owner: PublicKey;
  lamports: bigint;
  data: Uint8Array;
  executable: boolean;
}

export type SendResult =
  | { ok: true; signature: string }
  | {
      ok: false;
      error: string;
      /**
       * What is known about the transaction: "no", it never reached an RPC node (connection refused);
       * "refused", a node had it and said no (or it landed and failed); "unknown", the send failed in a
       * way that leaves it open (a reset or timeout after the request went out) and the signature was
       * not found on any endpoint within the time given. Absent: as "refused".
       */
      reached?: "no" | "refused" | "unknown";
    };

export interface SendOptions {
  /** The most the send may take, retries and the look-up after an ambiguous failure included (ms). */
  timeoutMs?: number;
}

/** What the caller knows about a signature that helps decide it (the blockhash the transaction used). */
export interface StatusHint {
  blockhash?: string;
}

export type SignatureStatus =
  | { state: "pending" }
  | { state: "confirmed"; slot: bigint }
  | { state: "failed"; error: string; slot?: bigint }
  /** The blockhash expired without the transaction landing. */
  | { state: "expired" }
  | { state: "unknown"; error: string };

export interface Blockhash {
  blockhash: string;
  lastValidBlockHeight: bigint;
}

/** A pre-flight simulation's verdict (expected failures are values; an unreachable chain throws). */
export type SimulationResult =
  | { ok: true; unitsConsumed: bigint; logs: string[] }
  | { ok: false; error: string; logs: string[] };

/** An unsigned transaction's simulation: on success, the watched accounts as it would leave them. */
export type UnsignedSimulation =
  | { ok: true; unitsConsumed: bigint; logs: string[]; post: (AccountSnapshot | null)[] }
  | { ok: false; error: string; logs: string[] };

export interface Chain {
  /** Human name for logs and the banner ("local LiteSVM", "rpc https://..."). */
  readonly description: string;
  getLatestBlockhash(): Promise<Blockhash>;
  /** The current block height (blockhash lifetimes are counted in blocks). */
  getBlockHeight(): Promise<bigint>;
  /** Whether a transaction with this recent blockhash would still be accepted. */
  isBlockhashValid(blockhash: string): Promise<boolean>;
  /**
   * The pre-flight: runs a fill the maker has NOT signed yet against current state without committing
   * it (`simulateTransaction` with sigVerify off and replaceRecentBlockhash false: the blockhash is
   * checked, no signature is). The maker signs only after it passed, so no RPC ever holds a landable
   * copy of a fill the maker refused.
   */
  preflight(tx: VersionedTransaction): Promise<SimulationResult>;
  /**
   * Runs a transaction nobody has signed yet (signatures not verified, the blockhash checked) without
   * committing it, and returns `watch` as it would leave them (null: absent). Used to prove what a
   * transaction does before the maker signs it (the rebalancer). Optional: adapters that cannot
   * report post-state leave it out, and callers that need it refuse to sign.
   */
  simulateUnsigned?(tx: VersionedTransaction, watch: readonly PublicKey[]): Promise<UnsignedSimulation>;
  /** Accounts in the order asked; null where an account does not exist. */
  getAccounts(keys: PublicKey[]): Promise<(AccountSnapshot | null)[]>;
  getMinimumBalanceForRentExemption(dataLength: number): Promise<bigint>;
  /** Chain time (unix seconds) as the on-chain program sees it for `expire_at`. */
  getUnixTimestamp(): Promise<bigint>;
  /**
   * Sends a fully signed transaction; resolves once handed to the chain (not confirmed). A failure
   * after which the transaction may still have reached the chain is not an answer yet: the adapter
   * looks for the signature (and sends again) within `timeoutMs` before it reports one.
   */
  send(tx: VersionedTransaction, opts?: SendOptions): Promise<SendResult>;
  /**
   * The signature's state. With `hint.blockhash`, a signature this adapter never sent (or no longer
   * remembers, after a restart) is "expired" once that blockhash is, instead of "pending" forever.
   */
  getSignatureStatus(signature: string, hint?: StatusHint): Promise<SignatureStatus>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Bundle port: how a permissioned fill lands atomically with the maker's own mint or burn transaction
 * (docs/contract.md, "Bundles"). The fill's message is fixed on arrival at `/swap`, so the maker's
 * companion transaction (mint before the fill, or burn after it, plus the tip) goes out with it as one
 * bundle: executed in order, all or nothing.
 *
 * Adapters: a client of a Jito-style block engine's JSON-RPC API (`sendBundle`, `getTipAccounts`,
 * `getInflightBundleStatuses` / `getBundleStatuses`; several engine URLs), and the local bundle engine
 * over the local chain (embedded paper setup, sandbox, tests), which restores every account a failed
 * bundle touched.
 *
 * Expected failures are values, not exceptions, as in the chain port.
 */
import { createHash } from "node:crypto";
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { SendOptions, StatusHint } from "./interface.ts";

/** A bundle holds 1 to this many transactions (Jito's limit). */
export const MAX_BUNDLE_TRANSACTIONS = 5;

/**
 * The bundle's id as a Jito block engine derives it: the hex SHA-256 of its transactions' first
 * signatures, base58, joined by commas. Known before sending, so a send whose answer was lost can
 * still be looked up.
 */
export function bundleIdOf(txs: readonly VersionedTransaction[]): string {
  const sigs = txs.map((tx) => bs58.encode(tx.signatures[0] ?? new Uint8Array(64)));
  return createHash("sha256").update(sigs.join(",")).digest("hex");
}

export type BundleSendResult =
  | { ok: true; bundleId: string }
  | {
      ok: false;
      error: string;
      /** As `SendResult.reached` in the chain port: "no" never reached an engine, "refused" an engine said no, "unknown" open. */
      reached?: "no" | "refused" | "unknown";
      /** With "unknown": the id to look the bundle up by (it may have reached an engine). */
      bundleId?: string;
    };

export type BundleStatus =
  | { state: "pending" }
  /** Every transaction of the bundle landed, in order, at `slot`. */
  | { state: "landed"; slot: bigint }
  /** The bundle will not land (an engine dropped it or a transaction in it failed); nothing it holds changed state. */
  | { state: "failed"; error: string }
  /** Its blockhash expired without the bundle landing (with `hint.blockhash`, as the chain port). */
  | { state: "expired" }
  | { state: "unknown"; error: string };

export interface BundlePort {
  /** Human name for logs and the banner ("local bundle engine", "jito https://..."). */
  readonly description: string;
  /** The accounts a tip may be paid to (the engine's `getTipAccounts`); a bundle must pay one of them. */
  getTipAccounts(): Promise<PublicKey[]>;
  /** Sends 1 to 5 fully signed transactions as one bundle; the id is a receipt, not a promise that it lands. */
  sendBundle(txs: readonly VersionedTransaction[], opts?: SendOptions): Promise<BundleSendResult>;
  getBundleStatus(bundleId: string, hint?: StatusHint): Promise<BundleStatus>;
  close(): Promise<void>;
}

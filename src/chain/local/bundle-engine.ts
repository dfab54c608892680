/**
 * LocalBundleEngine: the bundle port (../bundle.ts) over the local chain, standing in for a Jito block
 * engine in the paper setup, the sandbox chain server and tests.
 *
 * What it does, as a block engine and the leader running a bundle would:
 * - 8 tip accounts, deterministic for every local chain (funded rent-exempt here, so a small tip
 *   lands); a bundle must pay at least `minTipLamports` to one of them with a System transfer in any of
 *   its transactions, or it is refused.
 * - 1 to 5 transactions, every signature verified and every blockhash valid before anything runs
 *   (refused otherwise); a transaction that already landed is refused too.
 * - The transactions run in order, each through the chain's own `submit` (so fills, ATA creation and
 *   Lighthouse are emulated as for any transaction). All or nothing: every account any of them names
 *   (static keys and address lookup table entries, fee payers included) is read first; when one
 *   transaction fails or is dropped, every one of those accounts that changed is put back exactly
 *   (lamports, data, owner, executable, rent epoch), fees included, and the chain forgets the
 *   signatures, which then read as never sent.
 * - The whole bundle runs synchronously: nothing else on this chain can run between its transactions.
 *
 * Outcomes are recorded by bundle id (Jito's id, ../bundle.ts `bundleIdOf`): landed at a slot, or
 * failed with the failing transaction's index and error.
 */
import { createHash } from "node:crypto";
import {
  AddressLookupTableAccount,
  type MessageAccountKeys,
  PublicKey,
  SystemInstruction,
  SystemProgram,
  TransactionInstruction,
  type VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import {
  type BundlePort,
  type BundleSendResult,
  type BundleStatus,
  bundleIdOf,
  MAX_BUNDLE_TRANSACTIONS,
} from "../bundle.ts";
import type { StatusHint } from "../interface.ts";
import { checkTransactionSignatures } from "../signatures.ts";
import type { LocalChain } from "./index.ts";

/** The number of tip accounts, as a Jito block engine lists them. */
const TIP_ACCOUNT_COUNT = 8;
/** Jito refuses a bundle that tips less than this. */
const DEFAULT_MIN_TIP_LAMPORTS = 1_000n;

const SYSVAR_OWNER = new PublicKey("Sysvar1111111111111111111111111111111111111");

/** The local engines' tip accounts: the same 8 addresses on every local chain. */
export function localTipAccounts(): PublicKey[] {
  return Array.from(
    { length: TIP_ACCOUNT_COUNT },
    (_, i) => new PublicKey(createHash("sha256").update(`local bundle engine tip account ${i}`).digest()),
  );
}

export interface LocalBundleEngineOptions {
  /** The smallest tip that counts, lamports (default 1,000, as Jito). */
  minTipLamports?: bigint;
  /** Bundle outcomes remembered for status queries; the oldest are forgotten first. */
  maxRecords?: number;
}

export type BundleRecord =
  | { state: "landed"; slot: bigint; signatures: string[] }
  | { state: "failed"; slot: bigint; signatures: string[]; index: number; error: string };

/** `submitBundle`'s answer: refused before anything ran, or run (landed or failed). */
export type BundleOutcome =
  | { kind: "refused"; error: string }
  | ({ kind: "run"; bundleId: string } & { record: BundleRecord });

type Snapshot = ReturnType<LocalChain["svm"]["getAccount"]>;

export class LocalBundleEngine implements BundlePort {
  readonly description = "local bundle engine";
  readonly tipAccounts: readonly PublicKey[];
  private readonly tipSet: Set<string>;
  private readonly minTip: bigint;
  private readonly maxRecords: number;
  private readonly records = new Map<string, BundleRecord>();

  constructor(
    readonly chain: LocalChain,
    opts: LocalBundleEngineOptions = {},
  ) {
    this.minTip = opts.minTipLamports ?? DEFAULT_MIN_TIP_LAMPORTS;
    this.maxRecords = opts.maxRecords ?? 100_000;
    this.tipAccounts = localTipAccounts();
    this.tipSet = new Set(this.tipAccounts.map((k) => k.toBase58()));
    const rent = chain.svm.minimumBalanceForRentExemption(0n);
    for (const key of this.tipAccounts) {
      if (chain.svm.getAccount(key)) continue;
      chain.svm.setAccount(key, {
        lamports: Number(rent),
        data: new Uint8Array(0),
        owner: SystemProgram.programId,
        executable: false,
        rentEpoch: 0,
      });
    }
  }

  async getTipAccounts(): Promise<PublicKey[]> {
    return [...this.tipAccounts];
  }

  async sendBundle(txs: readonly VersionedTransaction[]): Promise<BundleSendResult> {
    const out = this.submitBundle(txs);
    if (out.kind === "refused") return { ok: false, error: out.error, reached: "refused" };
    // As a block engine: the id is a receipt; whether the bundle landed is its status.
    return { ok: true, bundleId: out.bundleId };
  }

  async getBundleStatus(bundleId: string, hint?: StatusHint): Promise<BundleStatus> {
    const rec = this.records.get(bundleId);
    if (rec?.state === "landed") return { state: "landed", slot: rec.slot };
    if (rec?.state === "failed") {
      return { state: "failed", error: `transaction ${rec.index} failed: ${rec.error}` };
    }
    // Never run here: it cannot land once the blockhash it names has expired.
    return hint?.blockhash && !this.chain.blockhashValid(hint.blockhash)
      ? { state: "expired" }
      : { state: "pending" };
  }

  /** The recorded outcome of a bundle (for the JSON-RPC server's status methods). */
  record(bundleId: string): BundleRecord | undefined {
    return this.records.get(bundleId);
  }

  async close(): Promise<void> {}

  /**
   * Checks and runs a bundle, all or nothing (see the file comment). Sending a bundle that landed
   * again changes nothing and answers its first outcome; one that failed runs again.
   */
  submitBundle(txs: readonly VersionedTransaction[]): BundleOutcome {
    const refuse = (error: string): BundleOutcome => ({ kind: "refused", error });
    if (txs.length === 0) return refuse("bundle: no transactions");
    if (txs.length > MAX_BUNDLE_TRANSACTIONS) {
      return refuse(`bundle: ${txs.length} transactions, at most ${MAX_BUNDLE_TRANSACTIONS}`);
    }
    const bundleId = bundleIdOf(txs);
    const previous = this.records.get(bundleId);
    if (previous?.state === "landed") return { kind: "run", bundleId, record: previous };

    const signatures: string[] = [];
    const keys = new Map<string, PublicKey>();
    let tipped = false;
    for (const [i, tx] of txs.entries()) {
      const sigs = checkTransactionSignatures(tx);
      if (!sigs.ok) return refuse(`transaction ${i}: ${sigs.error}`);
      const signature = bs58.encode(tx.signatures[0] as Uint8Array);
      if (signatures.includes(signature)) return refuse(`transaction ${i}: appears twice in the bundle`);
      if (this.chain.landed(signature)) return refuse(`transaction ${i}: already processed (${signature})`);
      if (!this.chain.blockhashValid(tx.message.recentBlockhash)) {
        return refuse(`transaction ${i}: blockhash not found or expired`);
      }
      signatures.push(signature);
      const resolved = this.accountKeys(tx);
      if (!resolved.ok) return refuse(`transaction ${i}: ${resolved.error}`);
      for (const k of resolved.keys.keySegments().flat()) keys.set(k.toBase58(), k);
      tipped ||= this.paysTip(tx, resolved.keys);
    }
    if (!tipped) {
      return refuse(
        `bundle: no transaction tips at least ${this.minTip} lamports to one of the ${TIP_ACCOUNT_COUNT} tip accounts (getTipAccounts)`,
      );
    }

    const before = new Map<string, Snapshot>();
    for (const [b58, k] of keys) before.set(b58, this.chain.svm.getAccount(k));

    let slot = this.chain.blockHeight();
    for (const [index, tx] of txs.entries()) {
      const out = this.chain.submit(tx);
      if (out.kind === "confirmed") {
        slot = out.slot;
        continue;
      }
      this.restore(keys, before);
      for (const s of signatures) this.chain.forget(s);
      const error = out.kind === "failed" ? out.error : `${out.reason}: ${out.error}`;
      const record: BundleRecord = {
        state: "failed",
        slot: this.chain.blockHeight(),
        signatures,
        index,
        error,
      };
      this.remember(bundleId, record);
      return { kind: "run", bundleId, record };
    }
    const record: BundleRecord = { state: "landed", slot, signatures };
    this.remember(bundleId, record);
    return { kind: "run", bundleId, record };
  }

  /** Every account the transaction names, lookup-table entries resolved against current state. */
  private accountKeys(
    tx: VersionedTransaction,
  ): { ok: true; keys: MessageAccountKeys } | { ok: false; error: string } {
    try {
      const tables = tx.message.addressTableLookups.map((l) => {
        const acc = this.chain.svm.getAccount(l.accountKey);
        if (!acc) throw new Error(`address lookup table ${l.accountKey.toBase58()} not found`);
        return new AddressLookupTableAccount({
          key: l.accountKey,
          state: AddressLookupTableAccount.deserialize(acc.data),
        });
      });
      return { ok: true, keys: tx.message.getAccountKeys({ addressLookupTableAccounts: tables }) };
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  }

  /** Whether one of the transaction's instructions is a System transfer of the minimum tip or more to a tip account. */
  private paysTip(tx: VersionedTransaction, keys: MessageAccountKeys): boolean {
    for (const cix of tx.message.compiledInstructions) {
      const programId = keys.get(cix.programIdIndex);
      if (!programId?.equals(SystemProgram.programId)) continue;
      const accounts = cix.accountKeyIndexes.map((i) => keys.get(i));
      if (accounts.some((k) => !k)) continue;
      const ix = new TransactionInstruction({
        programId,
        keys: (accounts as PublicKey[]).map((pubkey) => ({ pubkey, isSigner: false, isWritable: true })),
        data: Buffer.from(cix.data),
      });
      try {
        if (SystemInstruction.decodeInstructionType(ix) !== "Transfer") continue;
        const { toPubkey, lamports } = SystemInstruction.decodeTransfer(ix);
        if (this.tipSet.has(toPubkey.toBase58()) && lamports >= this.minTip) return true;
      } catch {
        // Not a System instruction web3.js can decode: not a tip.
      }
    }
    return false;
  }

  /** Puts back every account that changed since `before` (programs and sysvars never do here). */
  private restore(keys: Map<string, PublicKey>, before: Map<string, Snapshot>): void {
    for (const [b58, key] of keys) {
      const prev = before.get(b58) ?? null;
      const now = this.chain.svm.getAccount(key);
      if (prev?.executable || prev?.owner.equals(SYSVAR_OWNER)) continue;
      if (sameAccount(prev, now)) continue;
      this.chain.svm.setAccount(
        key,
        prev ?? {
          // Absent before: an account with no lamports is no account.
          lamports: 0,
          data: new Uint8Array(0),
          owner: SystemProgram.programId,
          executable: false,
          rentEpoch: 0,
        },
      );
    }
  }

  private remember(bundleId: string, rec: BundleRecord): void {
    this.records.delete(bundleId);
    this.records.set(bundleId, rec);
    if (this.records.size > this.maxRecords) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }
}

function sameAccount(a: Snapshot, b: Snapshot): boolean {
  if (!a || !b) return !a && !b;
  return (
    a.lamports === b.lamports &&
    a.owner.equals(b.owner) &&
    a.executable === b.executable &&
    Buffer.from(a.data).equals(Buffer.from(b.data))
  );
}

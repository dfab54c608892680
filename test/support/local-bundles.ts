/**
 * A small all-or-nothing bundle engine over the test's LocalChain, for the swap path's permissioned
 * tests. Stand-in note: the project's own local bundle engine is another change (src/chain/bundle.ts
 * names the port); this one does only what a Jito-style engine promises and nothing kinder: the
 * transactions run in order, each through the LocalChain's real checks (signatures, blockhash, SVM);
 * if one does not confirm, every account any of them names is put back as it was, so nothing the
 * bundle held changed state (fees included). A tip to one of its tip accounts is required, as a block
 * engine requires one to consider the bundle.
 */
import {
  Keypair,
  type PublicKey,
  SystemInstruction,
  SystemProgram,
  type VersionedTransaction,
} from "@solana/web3.js";
import type { BundlePort, BundleSendResult, BundleStatus } from "../../src/chain/bundle.ts";
import type { StatusHint } from "../../src/chain/interface.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";

export class TestBundleEngine implements BundlePort {
  readonly description = "test bundle engine over the local chain";
  readonly tipAccounts = Array.from({ length: 8 }, () => Keypair.generate().publicKey);
  /** Every bundle sent, in order (tests look at what went out). */
  readonly sent: { id: string; txs: VersionedTransaction[]; status: BundleStatus }[] = [];
  /** Runs just before a bundle executes (a test's fault: the world changing between check and land). */
  beforeRun: (() => void) | undefined;

  constructor(private readonly chain: LocalChain) {
    // Like mainnet's tip accounts, they exist and are rent-exempt, so a small tip can land in them.
    for (const t of this.tipAccounts) chain.airdrop(t, 1_000_000_000n);
  }

  async getTipAccounts(): Promise<PublicKey[]> {
    return [...this.tipAccounts];
  }

  async sendBundle(txs: readonly VersionedTransaction[]): Promise<BundleSendResult> {
    if (txs.length < 1 || txs.length > 5)
      return { ok: false, error: "a bundle holds 1 to 5 transactions", reached: "refused" };
    if (!txs.some((tx) => this.tips(tx)))
      return { ok: false, error: "no tip to a tip account", reached: "refused" };
    const id = `bundle-${this.sent.length + 1}`;
    this.beforeRun?.();
    const keys = new Map<string, PublicKey>();
    for (const tx of txs) for (const k of tx.message.staticAccountKeys) keys.set(k.toBase58(), k);
    const before = [...keys.values()].map((k) => [k, this.chain.svm.getAccount(k)] as const);
    let status: BundleStatus = { state: "landed", slot: this.chain.blockHeight() };
    for (const tx of txs) {
      const out = this.chain.submit(tx);
      if (out.kind !== "confirmed") {
        status = { state: "failed", error: `${out.kind}: ${"error" in out ? out.error : ""}` };
        break;
      }
    }
    if (status.state === "failed") {
      for (const [k, acc] of before) {
        this.chain.svm.setAccount(
          k,
          acc ?? { lamports: 0, data: new Uint8Array(), owner: SystemProgram.programId, executable: false },
        );
      }
    }
    this.sent.push({ id, txs: [...txs], status });
    return { ok: true, bundleId: id };
  }

  async getBundleStatus(bundleId: string, _hint?: StatusHint): Promise<BundleStatus> {
    return this.sent.find((b) => b.id === bundleId)?.status ?? { state: "unknown", error: "unknown bundle" };
  }

  async close(): Promise<void> {}

  private tips(tx: VersionedTransaction): boolean {
    const keys = tx.message.staticAccountKeys;
    return tx.message.compiledInstructions.some((ix) => {
      if (!keys[ix.programIdIndex]?.equals(SystemProgram.programId)) return false;
      const to = keys[ix.accountKeyIndexes[1] ?? -1];
      if (!to || !this.tipAccounts.some((t) => t.equals(to))) return false;
      try {
        SystemInstruction.decodeInstructionType({
          programId: SystemProgram.programId,
          keys: [],
          data: Buffer.from(ix.data),
        });
        return true;
      } catch {
        return false;
      }
    });
  }
}

/**
 * The project's local bundle engine (src/chain/local/bundle-engine.ts) over a test's LocalChain,
 * observed: every bundle sent is recorded (what went out, in which order), and a test may inject one
 * fault, `beforeSend`, run just before a bundle goes to the engine (the world changing between the
 * maker's checks and the bundle landing). Everything else is the real engine.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { BundlePort, BundleSendResult, BundleStatus } from "../../src/chain/bundle.ts";
import type { StatusHint } from "../../src/chain/interface.ts";
import { LocalBundleEngine } from "../../src/chain/local/bundle-engine.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";

export class ObservedBundles implements BundlePort {
  readonly inner: LocalBundleEngine;
  /** Every bundle sent, in order, with the engine's answer. */
  readonly sent: { txs: VersionedTransaction[]; result: BundleSendResult }[] = [];
  /** The fault to inject before the next bundles reach the engine (unset: none). */
  beforeSend: (() => void) | undefined;

  constructor(chain: LocalChain) {
    this.inner = new LocalBundleEngine(chain);
  }

  get description(): string {
    return this.inner.description;
  }

  getTipAccounts(): Promise<PublicKey[]> {
    return this.inner.getTipAccounts();
  }

  async sendBundle(txs: readonly VersionedTransaction[]): Promise<BundleSendResult> {
    this.beforeSend?.();
    const result = await this.inner.sendBundle(txs);
    this.sent.push({ txs: [...txs], result });
    return result;
  }

  /** The engine's status of the last bundle sent. */
  async lastStatus(): Promise<BundleStatus | undefined> {
    const last = this.sent.at(-1);
    if (!last?.result.ok) return undefined;
    return this.inner.getBundleStatus(last.result.bundleId);
  }

  getBundleStatus(bundleId: string, hint?: StatusHint): Promise<BundleStatus> {
    return this.inner.getBundleStatus(bundleId, hint);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

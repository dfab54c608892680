/**
 * DELIBERATE FAULT INJECTOR, not a fake chain: a Chain that forwards every call to the real local
 * chain until a test arms a fault on one method; that method then never resolves ("hang"), rejects
 * ("fail") or is delayed ("delay"), or a send is refused ("refuse"), while everything else keeps working; a hang or a failure
 * may be armed for the next few calls only. Used to prove the swap path
 * answers within its budget, and never claims a balance problem the chain did not show. Its clock can
 * also be put ahead of the wall (`clockAheadSeconds`), for expiry judged against chain time.
 */
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { Chain, SendOptions, StatusHint } from "../../src/chain/interface.ts";
import { ObservedChain } from "../support/harness.ts";

type Method =
  | "getAccounts"
  | "getMinimumBalanceForRentExemption"
  | "getUnixTimestamp"
  | "send"
  | "preflight"
  | "getSignatureStatus"
  | "isBlockhashValid";
type Fault =
  /** `times`: only the next that many calls, then the method works again (a request lost in a stall). */
  | { kind: "hang"; times?: number }
  | { kind: "fail"; error: string; times?: number }
  | { kind: "delay"; ms: number }
  /** Held until `open` resolves, then forwarded: the test decides when the call completes. */
  | { kind: "gate"; open: Promise<void> }
  /** `send` only: answers this failure without forwarding (the chain port's own verdict). */
  | { kind: "refuse"; error: string; reached: "no" | "unknown" | "refused" };

export class FaultyChain extends ObservedChain {
  private readonly faults = new Map<Method, Fault>();
  /** Seconds getUnixTimestamp runs ahead of the real local chain's clock; disarm() resets it. */
  clockAheadSeconds = 0n;
  /** When set, getUnixTimestamp answers this (a clock that does not tick); disarm() resets it. */
  clockAt: bigint | undefined;

  constructor(inner: Chain) {
    super(inner);
  }

  arm(method: Method, fault: Fault): void {
    this.faults.set(method, fault);
  }

  disarm(): void {
    this.faults.clear();
    this.clockAheadSeconds = 0n;
    this.clockAt = undefined;
  }

  private apply<T>(method: Method, call: () => Promise<T>): Promise<T> {
    const fault = this.faults.get(method);
    if (!fault) return call();
    if ("times" in fault && fault.times !== undefined && --fault.times <= 0) this.faults.delete(method);
    switch (fault.kind) {
      case "hang":
        return new Promise<T>(() => {});
      case "fail":
        return Promise.reject(new Error(fault.error));
      case "delay":
        return new Promise<T>((resolve, reject) => setTimeout(() => call().then(resolve, reject), fault.ms));
      case "gate":
        return fault.open.then(call);
      case "refuse":
        return Promise.resolve({ ok: false, error: fault.error, reached: fault.reached } as T);
    }
  }

  override getAccounts(keys: PublicKey[]) {
    return this.apply("getAccounts", () => super.getAccounts(keys));
  }
  override getMinimumBalanceForRentExemption(dataLength: number) {
    return this.apply("getMinimumBalanceForRentExemption", () =>
      super.getMinimumBalanceForRentExemption(dataLength),
    );
  }
  override getUnixTimestamp() {
    return this.apply(
      "getUnixTimestamp",
      async () => this.clockAt ?? (await super.getUnixTimestamp()) + this.clockAheadSeconds,
    );
  }
  override send(tx: VersionedTransaction, opts?: SendOptions) {
    this.sends++;
    return this.apply("send", () => this.inner.send(tx, opts));
  }
  override preflight(tx: VersionedTransaction) {
    return this.apply("preflight", () => super.preflight(tx));
  }
  override getSignatureStatus(signature: string, hint?: StatusHint) {
    return this.apply("getSignatureStatus", () => super.getSignatureStatus(signature, hint));
  }
  override isBlockhashValid(blockhash: string) {
    return this.apply("isBlockhashValid", () => super.isBlockhashValid(blockhash));
  }
}

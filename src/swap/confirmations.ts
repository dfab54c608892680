/**
 * Background confirmation tracking for sent fills: polls Chain.getSignatureStatus until the fill is
 * confirmed, failed or expired, then settles it once: inventory reservation committed (landed) or
 * released (failed, expired), `rfq_fills_total{outcome}` counted, the operator fee recorded for a
 * landed fill (metric, log line, fee ledger), the fill rate told.
 *
 * Restarts: every fill is written to the FillJournal BEFORE it is sent. On start the tracker reloads
 * the journal and resumes polling, so a process that dies mid-flight leaves nothing stranded (with the
 * Redis journal; the memory journal dies with the process, and the inventory reservation then lapses
 * on its own expiry). Several instances may poll the same fill; the journal's atomic settle lets
 * exactly one of them count it. The fill-rate view is in-memory, so a fill resumed after a restart
 * settles without touching it.
 *
 * A fill whose blockhash has expired without it landing is settled as expired on the next poll (the
 * journal keeps the blockhash, so this holds for a send that failed and after a restart too); one the
 * chain never decides (status pending/unknown past `trackUntilMs`) is settled as expired then.
 */
import type { Inventory } from "../../inventory/interface.ts";
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import type { BundlePort } from "../chain/bundle.ts";
import type { Chain, SignatureStatus } from "../chain/interface.ts";
import type { FeeOwed, FillJournal, PendingFill } from "../journal/interface.ts";
import type { LedgerRecord, SettlementRecord } from "../ledger/records.ts";
import { bounded, errorText } from "../lib/bounded.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { FillRate, FillRateToken } from "./fill-rate.ts";

export type FillOutcome = "landed" | "failed" | "expired";

export interface ConfirmationTrackerOptions {
  chain: Chain;
  inventory: Inventory;
  journal: FillJournal;
  metrics: Metrics;
  log: Logger;
  fillRate?: FillRate;
  /**
   * Permissioned fills: the issuance reservation is committed or released with the inventory's, and a
   * fill sent in a bundle is also judged by the bundle's status (a bundle that failed settles at once).
   */
  issuance?: Pick<IssuanceUsage, "commit" | "release">;
  bundles?: BundlePort;
  /** Journal a settlement record into the ledger outbox with each settle (src/ledger/). */
  ledger?: boolean;
  /** Told once per landed fill, by the instance that settled it (markouts). */
  onLanded?: (fill: PendingFill) => void;
  /** Interval between status polls, ms. */
  pollMs?: number;
  /** Bound on one status call, ms. */
  statusTimeoutMs?: number;
  now?: () => number;
}

interface Tracked {
  fill: PendingFill;
  token?: FillRateToken;
  /** False when the journal write failed: then this process alone owns the settlement. */
  journaled: boolean;
  waiters: ((outcome: FillOutcome) => void)[];
}

export class ConfirmationTracker {
  private readonly tracked = new Map<string, Tracked>();
  /** Fills decided and still being settled (reservations, onLanded): `settled()` waits for them. */
  private readonly settling = new Map<string, Tracked>();
  /** Outcomes settled by this process, for `settled()` callers that arrive late (bounded). */
  private readonly outcomes = new Map<string, { outcome: FillOutcome; fill: PendingFill }>();
  private readonly pollMs: number;
  private readonly statusTimeoutMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;

  constructor(private readonly opts: ConfirmationTrackerOptions) {
    this.pollMs = opts.pollMs ?? 1_000;
    this.statusTimeoutMs = opts.statusTimeoutMs ?? 5_000;
    this.now = opts.now ?? Date.now;
  }

  /** Fills currently tracked by this process. */
  get size(): number {
    return this.tracked.size;
  }

  /**
   * Writes the fill to the journal; call BEFORE sending, so a crash after the send still finds it.
   * Returns whether the journal took it (a failed write is logged, and this process settles alone).
   */
  async record(fill: PendingFill, timeoutMs: number): Promise<boolean> {
    const res = await bounded(() => this.opts.journal.addPending(fill), timeoutMs);
    if (!res.ok) {
      this.opts.log.warn(
        { quoteId: fill.quoteId, requestId: fill.requestId, txSignature: fill.signature, error: res.error },
        "fill journal write failed: confirmation tracked in memory only",
      );
    }
    return res.ok;
  }

  /** Starts polling a sent (or possibly sent) fill. `token` links it to the fill-rate view. */
  watch(fill: PendingFill, opts: { token?: FillRateToken; journaled?: boolean } = {}): void {
    if (this.tracked.has(fill.quoteId)) return;
    this.tracked.set(fill.quoteId, {
      fill,
      ...(opts.token ? { token: opts.token } : {}),
      journaled: opts.journaled ?? true,
      waiters: [],
    });
  }

  /**
   * What this process knows of a quote's fill: tracked and not yet decided ("pending"), or settled here
   * (a fill resumed from the journal after a restart included). The swap path uses it to answer a retry
   * whose first request was cut before it could record its answer.
   */
  known(quoteId: string): { state: "pending" | FillOutcome; fill: PendingFill } | undefined {
    const t = this.tracked.get(quoteId);
    if (t) return { state: "pending", fill: t.fill };
    const done = this.outcomes.get(quoteId);
    return done ? { state: done.outcome, fill: done.fill } : undefined;
  }

  /**
   * Resolves with the fill's outcome once this process has finished settling it: the journal, the
   * inventory and issuance reservations, and `onLanded` (markouts) all done (tests, tooling).
   */
  settled(quoteId: string): Promise<FillOutcome> {
    const t = this.settling.get(quoteId) ?? this.tracked.get(quoteId);
    if (t) return new Promise((resolve) => t.waiters.push(resolve));
    const done = this.outcomes.get(quoteId);
    if (done) return Promise.resolve(done.outcome);
    return Promise.reject(new Error(`fill for quote ${quoteId} is not tracked here`));
  }

  /** Resumes the journal's pending fills and starts the poll loop. */
  async start(): Promise<void> {
    const pending = await this.opts.journal.listPending();
    for (const fill of pending) this.watch(fill);
    if (pending.length > 0) {
      this.opts.log.info({ resumed: pending.length }, "resumed tracking fills sent before a restart");
    }
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => {
      void this.pollOnce();
    }, this.pollMs);
    this.timer.unref();
  }

  /** Stops the loop (waits for a poll in progress). Tracked fills stay in the journal for next start. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /** One pass over every tracked fill; overlapping passes are coalesced. */
  pollOnce(): Promise<void> {
    this.polling ??= this.pass().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async pass(): Promise<void> {
    await Promise.all([...this.tracked.values()].map((t) => this.check(t)));
  }

  private async check(t: Tracked): Promise<void> {
    const { fill } = t;
    const hint = fill.blockhash ? { blockhash: fill.blockhash } : undefined;
    const res = await bounded(
      () => this.opts.chain.getSignatureStatus(fill.signature, hint),
      this.statusTimeoutMs,
    );
    let status: SignatureStatus = res.ok ? res.value : { state: "unknown", error: res.error };
    if ((status.state === "pending" || status.state === "unknown") && fill.bundleId && this.opts.bundles) {
      status = await this.bundleVerdict(fill, status);
    }
    let outcome: FillOutcome | undefined;
    let detail: string | undefined;
    let slot: bigint | undefined;
    switch (status.state) {
      case "confirmed":
        outcome = "landed";
        slot = status.slot;
        break;
      case "failed":
        outcome = "failed";
        detail = status.error;
        slot = status.slot;
        break;
      case "expired":
        outcome = "expired";
        break;
      case "pending":
      case "unknown":
        if (this.now() > fill.trackUntilMs) {
          outcome = "expired";
          detail = status.state === "unknown" ? `gave up; last status error: ${status.error}` : "gave up";
        }
        break;
    }
    if (outcome) await this.settle(t, outcome, detail, slot);
  }

  /**
   * The bundle's status for a fill whose signature is not decided yet: a bundle that failed (nothing
   * in it changed state) or expired settles the fill the same way; otherwise the signature's status.
   */
  private async bundleVerdict(fill: PendingFill, byChain: SignatureStatus): Promise<SignatureStatus> {
    const bundles = this.opts.bundles as BundlePort;
    const hint = fill.blockhash ? { blockhash: fill.blockhash } : undefined;
    const res = await bounded(
      () => bundles.getBundleStatus(fill.bundleId as string, hint),
      this.statusTimeoutMs,
    );
    if (!res.ok) return byChain;
    const b = res.value;
    if (b.state === "failed") return { state: "failed", error: `bundle ${fill.bundleId} failed: ${b.error}` };
    if (b.state === "expired") return { state: "expired" };
    // Landed per the engine: the signature's own status confirms it on the next poll.
    return byChain;
  }

  private async settle(
    t: Tracked,
    outcome: FillOutcome,
    detail: string | undefined,
    slot: bigint | undefined,
  ): Promise<void> {
    const { fill } = t;
    const { journal } = this.opts;
    const log = this.opts.log.child({
      quoteId: fill.quoteId,
      requestId: fill.requestId,
      messageHash: fill.messageHash,
      txSignature: fill.signature,
    });
    const fee: FeeOwed | undefined =
      outcome === "landed"
        ? {
            quoteId: fill.quoteId,
            requestId: fill.requestId,
            txSignature: fill.signature,
            mint: fill.fee.mint,
            amount: fill.fee.amount,
            feeBps: fill.fee.feeBps,
            landedAtMs: this.now(),
          }
        : undefined;
    const record: SettlementRecord | undefined = this.opts.ledger
      ? {
          kind: "settlement",
          quoteId: fill.quoteId,
          requestId: fill.requestId,
          messageHash: fill.messageHash,
          txSignature: fill.signature,
          outcome,
          ...(slot !== undefined ? { slot: slot.toString() } : {}),
          ...(detail ? { detail } : {}),
          feeMint: fill.fee.mint,
          feeOwed: fee ? fee.amount : "0",
          feeBps: fill.fee.feeBps,
          sentAtMs: fill.sentAtMs,
          settledAtMs: this.now(),
        }
      : undefined;
    // A landed fill's acceptance goes with its settlement (an idempotent upsert when the swap path
    // journaled it already): the process that sent it may have died before it could (PendingFill.decision).
    const records = [
      ...(record && outcome === "landed" && fill.decision ? [fill.decision] : []),
      ...(record ? [record] : []),
    ];
    let owner = true;
    if (t.journaled) {
      try {
        owner = await journal.settle(fill.quoteId, fee, records);
      } catch (err) {
        // Keep it tracked: the next pass reads the same final status and tries again.
        log.warn({ error: errorText(err), outcome }, "fill journal settle failed; retrying on the next poll");
        return;
      }
    }
    this.tracked.delete(fill.quoteId);
    this.settling.set(fill.quoteId, t);
    this.remember(fill, outcome);
    try {
      await this.finishSettle(t, outcome, { owner, records, fee, detail, log });
    } finally {
      this.settling.delete(fill.quoteId);
      for (const w of t.waiters) w(outcome);
    }
  }

  /** The decided fill's side effects, once (`owner`: this instance settled it in the journal). */
  private async finishSettle(
    t: Tracked,
    outcome: FillOutcome,
    s: {
      owner: boolean;
      /** The ledger records of this settlement (the acceptance it brings, the settlement). */
      records: LedgerRecord[];
      fee: FeeOwed | undefined;
      detail: string | undefined;
      /** The fill's own logger (quoteId, requestId, ...). */
      log: Logger;
    },
  ): Promise<void> {
    const { fill } = t;
    const { owner, records, fee, detail, log } = s;
    const { journal, inventory, metrics } = this.opts;
    if (t.token) this.opts.fillRate?.settle(t.token, outcome === "landed");
    if (owner) {
      metrics.fills.inc({ outcome });
      // Not journaled: the settle above did not carry the records; append them on their own.
      for (const r of t.journaled ? [] : records) {
        await journal.appendLedger(r).catch((err: unknown) => {
          log.warn(
            { error: errorText(err), kind: r.kind },
            "ledger outbox append failed: this record is missing from the ledger",
          );
        });
      }
      try {
        if (outcome === "landed") await inventory.commit(fill.quoteId);
        else await inventory.release(fill.quoteId);
      } catch (err) {
        // The reservation lapses on its own expiry; balances refresh from the chain.
        log.warn({ error: errorText(err), outcome }, "inventory settle failed; the reservation will lapse");
      }
      if (this.opts.issuance) {
        try {
          if (outcome === "landed") await this.opts.issuance.commit(fill.quoteId);
          else await this.opts.issuance.release(fill.quoteId);
        } catch (err) {
          // Kept reserved: the day's cap counts it (never more issuance than allowed), until the day ends.
          log.warn(
            { error: errorText(err), outcome },
            "issuance settle failed; the units stay counted today",
          );
        }
      }
      if (outcome === "landed") this.opts.onLanded?.(fill);
      if (fee) {
        if (BigInt(fee.amount) > 0n) metrics.feesOwed.inc({ mint: fee.mint }, Number(fee.amount));
        log.info(
          { feeMint: fee.mint, feeAmount: fee.amount, feeBps: fee.feeBps },
          "fill landed: operator fee owed",
        );
      } else {
        log.warn({ outcome, detail }, `fill ${outcome}`);
      }
    }
  }

  private remember(fill: PendingFill, outcome: FillOutcome): void {
    this.outcomes.set(fill.quoteId, { outcome, fill });
    if (this.outcomes.size > 10_000) {
      const oldest = this.outcomes.keys().next().value;
      if (oldest !== undefined) this.outcomes.delete(oldest);
    }
  }
}

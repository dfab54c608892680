/**
 * The ledger writer: drains the fill journal's outbox (decisions and settlements the swap path
 * journaled) into the ledger database, off the /swap path. Each pass takes a batch, writes it in one
 * transaction, then acknowledges it; a failed write leaves the batch in the outbox for the next pass,
 * and a process killed between the commit and the acknowledgement writes it again after the restart
 * (or another instance does, once the batch has been unacknowledged for `staleMs`): the upserts make
 * that a no-op. Several instances may run a writer against one Redis and one database.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Ledger, LedgerStamp } from "./ledger.ts";
import type { LedgerOutbox } from "./records.ts";

export interface LedgerWriterOptions {
  journal: LedgerOutbox;
  /** The ledger, or a promise of it (an embedded database opening in the background). */
  ledger: Ledger | Promise<Ledger>;
  metrics: Metrics;
  log: Logger;
  /** Records per transaction (500). */
  batch?: number;
  /** Interval between passes when the outbox is empty (ms, 500). */
  intervalMs?: number;
  /** Entries another writer took and left unacknowledged this long are taken over (ms, 30,000). */
  staleMs?: number;
  /** The mode and maker written on every row. */
  stamp?: LedgerStamp;
  /**
   * Told whether each write reached the database, with when it started (the fill path's health,
   * src/health/fill-path.ts, ignores a write begun before the database was back that fails after it).
   */
  health?: { ok(startedAtMs?: number): void; fail(error: unknown, startedAtMs?: number): void };
}

export class LedgerWriter {
  private readonly consumer = `writer-${randomUUID()}`;
  private readonly batch: number;
  private readonly intervalMs: number;
  private readonly staleMs: number;
  private timer: NodeJS.Timeout | undefined;
  /** The last pass queued: passes run one after another. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private failing = false;

  constructor(private readonly opts: LedgerWriterOptions) {
    this.batch = opts.batch ?? 500;
    this.intervalMs = opts.intervalMs ?? 500;
    this.staleMs = opts.staleMs ?? 30_000;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the loop after one last drain (bounded by `timeoutMs`); what is left stays in the outbox. */
  async stop(timeoutMs = 2_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.race([this.drain(), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  /**
   * A pass that starts after every pass already queued: drains until the outbox is empty (or a write
   * fails), so whatever was journaled before the call is written when it resolves (unless a write
   * failed). Returns how many records this pass wrote.
   */
  drain(): Promise<number> {
    const pass = this.queue.then(() => this.drainAll());
    this.queue = pass.catch(() => 0);
    return pass;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.drain().then(() => this.schedule(this.intervalMs));
    }, ms);
    this.timer.unref();
  }

  private async drainAll(): Promise<number> {
    const { journal, metrics, log } = this.opts;
    let written = 0;
    try {
      const ledger = await this.opts.ledger;
      for (;;) {
        const entries = await journal.takeLedger(this.consumer, this.batch, this.staleMs);
        if (entries.length === 0) break;
        const started = Date.now();
        await ledger
          .write(
            entries.map((e) => e.record),
            this.opts.stamp,
          )
          .then(
            () => this.opts.health?.ok(started),
            (err: unknown) => {
              this.opts.health?.fail(err, started);
              throw err;
            },
          );
        await journal.ackLedger(entries.map((e) => e.id));
        for (const e of entries) metrics.ledgerWritten.inc({ kind: e.record.kind });
        written += entries.length;
        if (entries.length < this.batch) break;
      }
      metrics.ledgerBacklog.set(await journal.ledgerBacklog());
      if (this.failing) log.info("ledger writes resumed");
      this.failing = false;
    } catch (err) {
      metrics.ledgerWriteErrors.inc();
      // One line per outage, not one per pass.
      if (!this.failing) log.warn({ err }, "ledger write failed: records stay in the outbox and are retried");
      this.failing = true;
    }
    return written;
  }
}

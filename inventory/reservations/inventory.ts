/**
 * The Inventory port over the reservation state (interface.ts): the quote path reads an in-memory view (balances, reserved and
 * incoming totals), refreshed in the background from the chain (every `inventory.refreshMs`) and from
 * the shared reservation state (every `inventory.syncMs`, other instances' reservations included). Reservations go
 * straight to the reservation state, whose one atomic step decides.
 *
 * memory.ts and redis.ts are this class over a MemoryReservations or a RedisReservations.
 */
import type { PublicKey } from "@solana/web3.js";
import type { Logger } from "pino";
import { formatRatio, parseDecimal, type Ratio } from "../../amounts/decimal.ts";
import type { UsdValues } from "../../amounts/usd.ts";
import type { Config } from "../../config/load.ts";
import { type AccountReader, type MintHolding, readHoldings } from "../holdings.ts";
import type {
  CheckResult,
  Holding,
  Inventory,
  InventorySnapshot,
  Reservation,
  ReserveResult,
  TradeCheck,
} from "../interface.ts";
import type { Reservations, Totals } from "./interface.ts";

export interface InventoryOptions {
  config: Config;
  chain: AccountReader;
  /** The maker wallet whose balances are read. */
  maker: PublicKey;
  /** Required when any token has `maxExposureUsd`: limits are in USD, balances in units. */
  usd?: UsdValues;
  log?: Logger;
  now?: () => number;
}

interface TokenRules {
  symbol: string;
  buffer: bigint;
  target?: bigint;
  maxExposureUsd?: Ratio;
}

export class ReservationInventory implements Inventory {
  private readonly rules = new Map<string, TokenRules>();
  private readonly now: () => number;
  private readonly settings: Config["file"]["inventory"];
  private readonly minLamports: bigint;

  // The in-memory view the quote path reads.
  private balances = new Map<string, bigint>();
  private reserved = new Map<string, bigint>();
  private incoming = new Map<string, bigint>();
  private lamports: bigint | undefined;
  private balancesAtMs: number | undefined;
  private holdings = new Map<string, MintHolding>();
  private chainReadAtMs: number | undefined;
  /** The last sync failed (an outage is logged once, and its end once). */
  private reservationsDown = false;

  private readonly listeners = new Set<() => void>();
  // Stryker disable next-line StringLiteral: a signature starts with the lamports and "|", never equal to any initial text
  private lastSignature = "";
  private timers: NodeJS.Timeout[] = [];
  private settleTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private syncing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly reservationState: Reservations,
    private readonly opts: InventoryOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.settings = opts.config.file.inventory;
    this.minLamports = BigInt(this.settings.minSolLamports);
    for (const t of opts.config.file.tokens) {
      const rules: TokenRules = { symbol: t.symbol, buffer: BigInt(t.safetyBuffer) };
      if (t.targetInventory !== undefined) rules.target = BigInt(t.targetInventory);
      if (t.maxExposureUsd !== undefined) {
        if (!opts.usd?.hasRoute(t.mint)) {
          throw new Error(
            `tokens.${t.symbol}.maxExposureUsd: no pair values ${t.symbol} in USD (needs a route to a stable token)`,
          );
        }
        rules.maxExposureUsd = parseDecimal(t.maxExposureUsd);
      }
      this.rules.set(t.mint, rules);
    }
  }

  // ---- quote path: synchronous, memory only ----

  check(trade: TradeCheck): CheckResult {
    const now = this.now();
    if (this.balancesAtMs === undefined || now - this.balancesAtMs > this.settings.maxBalanceAgeMs) {
      return { ok: false, code: "INVENTORY_STALE", context: "maker balances are not known recently" };
    }
    if (this.lamports === undefined || this.lamports < this.minLamports) {
      return {
        ok: false,
        code: "SOL_FOR_FEES_LOW",
        context: `maker has ${this.lamports ?? 0n} lamports, keeps at least ${this.minLamports} for fees`,
      };
    }
    const out = this.rules.get(trade.outMint);
    if (!out) return { ok: false, code: "INVENTORY_INSUFFICIENT", context: `${trade.outMint} is not held` };
    const left = (this.balances.get(trade.outMint) ?? 0n) - (this.reserved.get(trade.outMint) ?? 0n);
    if (left - trade.outAmount < out.buffer) {
      const avail = left - out.buffer;
      return {
        ok: false,
        code: "INVENTORY_INSUFFICIENT",
        // Stryker disable next-line EqualityOperator: at avail = 0 both branches give 0
        context: `${trade.outAmount} ${out.symbol} asked, ${avail > 0n ? avail : 0n} available`,
      };
    }
    if (out.maxExposureUsd) {
      const limit = this.opts.usd!.unitsFor(trade.outMint, out.maxExposureUsd);
      if (limit === undefined) return noUsd(out.symbol);
      if (left - trade.outAmount < out.target! - limit) {
        return {
          ok: false,
          code: "EXPOSURE_LIMIT_EXCEEDED",
          context: `${out.symbol} would be more than ${fmtUsd(out.maxExposureUsd)} USD below target`,
        };
      }
    }
    if (trade.inMint !== undefined) {
      const inn = this.rules.get(trade.inMint);
      if (inn?.maxExposureUsd) {
        const limit = this.opts.usd!.unitsFor(trade.inMint, inn.maxExposureUsd);
        if (limit === undefined) return noUsd(inn.symbol);
        const held = (this.balances.get(trade.inMint) ?? 0n) + (this.incoming.get(trade.inMint) ?? 0n);
        if (held + (trade.inAmount ?? 0n) > inn.target! + limit) {
          return {
            ok: false,
            code: "EXPOSURE_LIMIT_EXCEEDED",
            context: `${inn.symbol} would be more than ${fmtUsd(inn.maxExposureUsd)} USD above target`,
          };
        }
      }
    }
    return { ok: true };
  }

  position(mint: string): bigint | undefined {
    const bal = this.balances.get(mint);
    if (bal === undefined) return undefined;
    return bal - (this.reserved.get(mint) ?? 0n) + (this.incoming.get(mint) ?? 0n);
  }

  snapshot(): InventorySnapshot {
    const holdings: Holding[] = this.opts.config.file.tokens.map((t) => {
      const h = this.holdings.get(t.mint);
      return {
        mint: t.mint,
        symbol: t.symbol,
        ata: h?.ata.toBase58() ?? "",
        ataExists: h?.ataExists ?? false,
        balance: this.balances.get(t.mint) ?? 0n,
        reserved: this.reserved.get(t.mint) ?? 0n,
        incoming: this.incoming.get(t.mint) ?? 0n,
        ...(h?.problem ? { problem: h.problem } : {}),
      };
    });
    return {
      maker: this.opts.maker.toBase58(),
      lamports: this.lamports,
      balancesAtMs: this.balancesAtMs,
      chainReadAtMs: this.chainReadAtMs,
      holdings,
    };
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- swap path: atomic in the reservation state ----

  async reserve(r: Reservation): Promise<ReserveResult> {
    const out = this.rules.get(r.mint);
    if (!out) return { ok: false, code: "INVENTORY_INSUFFICIENT", context: `${r.mint} is not held` };
    // Stryker disable next-line ConditionalExpression: no mint is undefined, so looking it up also gives undefined
    const inn = r.inputMint !== undefined ? this.rules.get(r.inputMint) : undefined;
    const res = await this.reservationState.reserve({
      quoteId: r.quoteId,
      outMint: r.mint,
      outAmount: r.amount,
      ...(r.inputMint !== undefined ? { inMint: r.inputMint, inAmount: r.inputAmount ?? 0n } : {}),
      expiresAtMs: r.expiresAtMs,
      nowMs: this.now(),
      bufferOut: out.buffer,
      ...this.exposureBounds(r, out, inn),
    });
    switch (res.kind) {
      case "reserved":
        this.apply(res.totals);
        return { ok: true };
      case "exists":
        return { ok: true };
      case "insufficient":
        return {
          ok: false,
          code: "INVENTORY_INSUFFICIENT",
          context: `${r.amount} ${out.symbol} asked, ${res.available} available`,
        };
      case "exposure":
        return {
          ok: false,
          code: "EXPOSURE_LIMIT_EXCEEDED",
          context: `${res.leg === "out" ? out.symbol : (inn?.symbol ?? r.inputMint)} exposure limit`,
        };
    }
  }

  /**
   * Exposure limits as unit bounds for the atomic step. Without a fresh USD price at swap time the
   * bound is left out: the quote already passed the check moments ago, and refusing a claimed swap
   * costs fill rate, while the cover check (which needs no price) always applies.
   */
  private exposureBounds(r: Reservation, out: TokenRules, inn: TokenRules | undefined) {
    const b: { floorOut?: bigint; ceilingIn?: bigint } = {};
    if (out.maxExposureUsd) {
      const limit = this.opts.usd!.unitsFor(r.mint, out.maxExposureUsd);
      if (limit !== undefined) b.floorOut = out.target! - limit;
      else this.opts.log?.warn({ quoteId: r.quoteId }, "inventory: no USD price, exposure bound skipped");
    }
    if (inn?.maxExposureUsd && r.inputMint !== undefined) {
      const limit = this.opts.usd!.unitsFor(r.inputMint, inn.maxExposureUsd);
      if (limit !== undefined) b.ceilingIn = inn.target! + limit;
    }
    return b;
  }

  async release(quoteId: string): Promise<void> {
    const totals = await this.reservationState.release(quoteId);
    if (totals) this.apply(totals);
  }

  async commit(quoteId: string): Promise<void> {
    const settleAt = this.now() + this.settings.settleMarginMs;
    const res = await this.reservationState.commit(quoteId, settleAt);
    if (res === "missing") {
      // Expired (or released) before the fill landed: the units are no longer held, so read the
      // chain now rather than promise them again until the next periodic refresh.
      void this.refresh();
      return;
    }
    // Settle soon after the margin, instead of at the next periodic refresh.
    if (!this.settleTimer && !this.closed) {
      this.settleTimer = setTimeout(() => {
        this.settleTimer = undefined;
        void this.refresh();
      }, this.settings.settleMarginMs + 50);
      this.settleTimer.unref();
    }
  }

  async reservations(): Promise<(Reservation & { state: "open" | "committed" })[]> {
    return this.reservationState.list();
  }

  // ---- background ----

  /** Reads the chain and records the balances in the reservation state; overlapping calls share one read. */
  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    const tokens = this.opts.config.file.tokens;
    const read = await readHoldings(this.opts.chain, this.opts.maker, tokens, this.now);
    if (!read.ok) {
      this.opts.log?.warn({ error: read.error }, "inventory: chain read failed; keeping the last balances");
      return;
    }
    const { holdings } = read;
    const balances = new Map([...holdings.tokens].map(([mint, h]) => [mint, h.amount]));
    try {
      await this.reservationState.setBalances(holdings.readAtMs, holdings.lamports, balances);
    } catch (err) {
      this.opts.log?.warn({ err }, "inventory: cannot record balances in the reservation state");
      return;
    }
    this.holdings = holdings.tokens;
    this.chainReadAtMs = holdings.readAtMs;
    await this.sync();
  }

  /** Re-reads the shared reservation state into memory. */
  sync(): Promise<void> {
    this.syncing ??= this.doSync().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    try {
      const s = await this.reservationState.state(this.now());
      if (this.reservationsDown) this.opts.log?.info("inventory: the shared reservation state answers again");
      this.reservationsDown = false;
      if (s.balancesAtMs === undefined && this.balancesAtMs !== undefined) {
        // The shared reservation state lost its state (Redis restarted without its data): write the balances back
        // from a fresh chain read, and keep quoting from the current view meanwhile.
        this.opts.log?.warn(
          "inventory: the shared reservation state is empty; re-reading balances from the chain",
        );
        void this.refresh();
        return;
      }
      this.balances = s.balances;
      this.reserved = s.reserved;
      this.incoming = s.incoming;
      this.lamports = s.lamports;
      this.balancesAtMs = s.balancesAtMs;
    } catch (err) {
      // Once per outage: the sync runs every `syncMs`.
      if (!this.reservationsDown)
        this.opts.log?.warn({ err }, "inventory: cannot read the shared reservation state");
      this.reservationsDown = true;
      return;
    }
    this.notifyIfChanged();
  }

  async start(): Promise<void> {
    await this.refresh();
    await this.sync();
    this.timers = [
      setInterval(() => void this.refresh(), this.settings.refreshMs),
      setInterval(() => void this.sync(), this.settings.syncMs),
    ];
    for (const t of this.timers) t.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.settleTimer);
    await Promise.allSettled([this.refreshing, this.syncing]);
  }

  private apply(totals: Totals): void {
    for (const [mint, v] of totals.reserved) this.reserved.set(mint, v);
    for (const [mint, v] of totals.incoming) this.incoming.set(mint, v);
  }

  /** Listeners care about balances, ATAs and mint problems; reservations alone do not notify. */
  private notifyIfChanged(): void {
    let sig = `${this.lamports}|`;
    for (const [mint, h] of this.holdings) {
      sig += `${mint}:${h.ataExists ? 1 : 0}:${this.balances.get(mint) ?? 0n}:${h.problem}|`;
    }
    if (sig === this.lastSignature) return;
    this.lastSignature = sig;
    for (const l of this.listeners) {
      try {
        l();
      } /* Stryker disable next-line BlockStatement: the block only logs */ catch (err) {
        this.opts.log?.error({ err }, "inventory: change listener failed");
      }
    }
  }
}

function noUsd(symbol: string): CheckResult {
  return {
    ok: false,
    code: "EXPOSURE_LIMIT_EXCEEDED",
    context: `no fresh USD price for ${symbol}: exposure cannot be measured`,
  };
}

function fmtUsd(r: Ratio): string {
  return formatRatio(r, 2);
}

/**
 * The RFQ v2 channel: streams each configured pair's levels from the quoting book (the same prices,
 * spreads, skew, size limits and switches as /quote) and co-signs the swaps offered on them after the
 * checks of fill.ts and the inventory's own check and reservation, shared with the webhook.
 *
 * Levels are sent when they change and at least every `rfqV2.refreshSeconds`; a pair the book will not
 * price (pause, pair switch, stale price), the inventory cannot carry or the fill path cannot fill (a
 * dependency of the fill failing, src/health/fill-path.ts) is withdrawn at once: its sets
 * are forgotten, so any swap on them is refused while the operator still shows them.
 *
 * A swap is judged by the rules every signing path shares (src/policy/): the taker's standing and an
 * issued token's holder rules, switches and caps (trade.ts), and one signature per message whatever
 * swap_uuid it arrives under (messages.ts, before anything is reserved); then the inventory, and the
 * issuer's daily cap reserved beside it.
 */
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import { type IssuanceUsage, utcDay } from "../../inventory/issuance/interface.ts";
import type { QuotingBook } from "../../pricing/book.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import type { Chain } from "../chain/interface.ts";
import { messageBytesHash } from "../fill/validate.ts";
import type { FillPathHealth } from "../health/fill-path.ts";
import type { IssuanceNeed, IssuancePolicies } from "../issuance/policy.ts";
import type { Logger } from "../observability/logger.ts";
import { bindMessageOnce } from "../policy/messages.ts";
import { judgeBlindTrade } from "../policy/trade.ts";
import type { QuoteStore } from "../quote-store/interface.ts";
import {
  InventoryRefusalCode,
  type Refusal,
  type RefusalCode,
  SwapRefusalCode,
  V2RejectCode,
} from "../refusal/codes.ts";
import type { Signer } from "../signing/port.ts";
import type { TakerStanding } from "../toxicity/interface.ts";
import { V2Client, type V2ClientOptions } from "./client.ts";
import type { V2Offered, V2SwapRecorder } from "./ledger.ts";
import { type Fits, pairLevels, wireLevel } from "./levels.ts";
import { LookupTableResolver } from "./lookup.ts";
import type { RfqV2Metrics } from "./metrics.ts";
import type { TokenMsg } from "./proto.ts";
import { signV2Swap } from "./sign.ts";
import { StreamedLevels } from "./streamed.ts";
import { checkV2Swap, decodeSwapTransaction, type V2Pair } from "./swap-checks.ts";

export interface RfqV2Settings {
  url: string;
  makerId: string;
  authToken: string;
}

export interface RfqV2ServiceDeps {
  config: Config;
  settings: RfqV2Settings;
  book: QuotingBook;
  inventory: Inventory;
  signer: Signer;
  /** Reads the lookup tables a swap loads accounts from. */
  chain: Pick<Chain, "getAccounts">;
  log: Logger;
  metrics: RfqV2Metrics;
  now?: () => number;
  /** Client options for tests (backoff, ping). */
  client?: Partial<Pick<V2ClientOptions, "backoff" | "pingMs">>;
  /** The switches: a pause or a pair switch withdraws the pair's levels as it arrives. */
  controls?: Pick<Controls, "onChange">;
  /** How often the levels are recomputed, ms (default 1,000: a price that goes stale is withdrawn within it). */
  tickMs?: number;
  /** The fill ledger's recorder (ledger.ts): every offered swap's decision, every confirmed one's fill. */
  ledger?: V2SwapRecorder;
  /**
   * Where a message is bound to the first id it came under (the quote store, shared with /swap: Redis
   * where the service uses Redis): one signature per message, whatever swap_uuid offers it.
   */
  messages: Pick<QuoteStore, "bindMessage">;
  /** The toxic-flow controls' taker standing (toxicity.enabled): streamed levels are priced blind. */
  takers?: Pick<TakerStanding, "standing">;
  /** The tokens the maker issues (config `issuance`): holder rules, switches, per-fill and daily caps. */
  issuance?: { policies: IssuancePolicies; usage: IssuanceUsage };
  /**
   * Whether a swap can be filled right now (src/health/fill-path.ts, the one /quote asks): while a
   * dependency of every fill fails, every pair is withdrawn, as a quote is declined.
   */
  fillPath?: Pick<FillPathHealth, "refusal">;
}

/** How long after a set's validity a v2 reservation lapses on its own, ms. */
const RESERVATION_GRACE_MS = 30_000;

export class RfqV2Service {
  readonly streamed: StreamedLevels;
  private readonly client: V2Client;
  private readonly lookups: LookupTableResolver;
  private readonly pairs = new Map<string, V2Pair>();
  private readonly lastSent = new Map<string, { key: string; atMs: number }>();
  /** Every swap_uuid answered, with when it may be forgotten (its expire_at plus the grace). */
  private readonly seen = new Map<string, number>();
  private nextSweepMs = 0;
  /** Issuance reserved for signed swaps not confirmed yet, released at expire_at plus the grace. */
  private readonly issuanceHeld = new Map<string, NodeJS.Timeout>();
  /** Why a pair is not streamed now, to say it once. */
  private readonly notStreamed = new Map<string, string>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: RfqV2ServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.streamed = new StreamedLevels(this.now);
    this.lookups = new LookupTableResolver({ chain: deps.chain, now: this.now, metrics: deps.metrics });
    const { config } = deps;
    for (const key of config.file.rfqV2.pairs) {
      const [b, q] = key.split("/") as [string, string];
      const base = config.tokensBySymbol.get(b);
      const quote = config.tokensBySymbol.get(q);
      // The configuration's refinement already refused a streamed pair that is not configured.
      if (!base || !quote) throw new Error(`rfqV2.pairs: ${key} is not a configured pair`);
      this.pairs.set(`${base.mint}/${quote.mint}`, { pairKey: key, base, quote });
    }
    this.client = new V2Client({
      url: deps.settings.url,
      makerId: deps.settings.makerId,
      authToken: deps.settings.authToken,
      log: deps.log,
      ...deps.client,
      onSwap: (uuid, b64) => this.onSwap(uuid, b64),
      onConnected: () => {
        deps.metrics.connected.set(1);
        this.lastSent.clear();
        this.publish();
      },
      onDisconnected: () => {
        deps.metrics.connected.set(0);
        deps.metrics.reconnects.inc();
      },
      onQuoteUpdate: (u) => {
        const type = u.update_type.replace("UPDATE_TYPE_", "").replace("UNSPECIFIED", "HEARTBEAT");
        deps.metrics.updates.inc({ type });
        if (type === "NEW" || type === "UPDATED")
          deps.metrics.lastAckSeconds.set(Math.floor(this.now() / 1000));
        if (type === "REJECTED")
          deps.log.warn({ reason: u.status_message }, "rfq v2: the operator rejected a level set");
        // The operator's heartbeat: answered by sending the levels again, as its examples do.
        if (type === "HEARTBEAT") this.publish(true);
      },
      onConfirmed: (uuid, signature) => {
        deps.log.info({ swapUuid: uuid, signature }, "rfq v2: swap confirmed");
        void deps.inventory.commit(`v2:${uuid}`).catch((err: unknown) => {
          deps.log.warn({ err, swapUuid: uuid }, "rfq v2: could not commit the swap's reservation");
        });
        this.settleIssuance(uuid, "commit");
        deps.metrics.confirmed.inc();
        void deps.ledger?.confirmed(uuid, signature);
      },
    });
  }

  async start(): Promise<void> {
    const off = [
      this.deps.inventory.onChange(() => this.publish()),
      ...(this.deps.controls ? [this.deps.controls.onChange(() => this.publish())] : []),
    ];
    this.unsubscribe = () => {
      for (const f of off) f();
    };
    this.timer = setInterval(() => this.publish(), this.deps.tickMs ?? 1_000);
    this.timer.unref();
    await this.client.start();
  }

  connected(): boolean {
    return this.client.connected();
  }

  /** Recomputes every pair's levels; sends those that changed or are due for refresh (all with `force`). */
  publish(force = false): void {
    const { config, book, metrics, log } = this.deps;
    const now = this.now();
    // A v2 swap moves held inventory, never a bundle: the block engine is not on its path.
    const unfillable = this.deps.fillPath?.refusal();
    for (const [, pair] of this.pairs) {
      if (unfillable) {
        this.withdraw(pair.pairKey, unfillable.code, unfillable.context);
        continue;
      }
      const ladders = book.ladders(pair.pairKey);
      if (!ladders.ok) {
        this.withdraw(pair.pairKey, ladders.code, ladders.context);
        continue;
      }
      // The book's lot (rfqV2.lotSizeBase or its default), the same one /quote prices with.
      const lot = ladders.lotSizeBase;
      const levels = pairLevels(ladders, this.fits(pair));
      if (levels.bids.length + levels.asks.length === 0) {
        // Why, as the inventory says it for one lot of base out.
        const one = this.deps.inventory.check({ outMint: pair.base.mint, outAmount: lot });
        this.withdraw(
          pair.pairKey,
          one.ok ? InventoryRefusalCode.INVENTORY_INSUFFICIENT : one.code,
          one.ok ? "the inventory carries no whole lot on either side" : one.context,
        );
        continue;
      }
      const bidLevels = levels.bids.map((l) => wireLevel(l, lot, pair.base.decimals, "bid"));
      const askLevels = levels.asks.map((l) => wireLevel(l, lot, pair.base.decimals, "ask"));
      const key = JSON.stringify([lot, bidLevels, askLevels], (_k, v) =>
        typeof v === "bigint" ? v.toString() : v,
      );
      const last = this.lastSent.get(pair.pairKey);
      const due = !last || last.key !== key || now - last.atMs >= config.file.rfqV2.refreshSeconds * 1000;
      if (!force && !due) continue;
      const expiry = config.file.rfqV2.quoteExpirySeconds;
      const sequence = this.client.sendLevels({
        timestamp: (BigInt(now) * 1000n).toString(),
        quote_expiry_time: String(expiry),
        maker_address: this.deps.signer.publicKey.toBase58(),
        lot_size_base: lot.toString(),
        cluster: config.file.rfqV2.cluster === "devnet" ? "CLUSTER_DEVNET" : "CLUSTER_MAINNET",
        token_pair: { base_token: token(pair.base), quote_token: token(pair.quote) },
        bid_levels: bidLevels.map((l) => ({ volume: l.volume.toString(), price: l.price.toString() })),
        ask_levels: askLevels.map((l) => ({ volume: l.volume.toString(), price: l.price.toString() })),
      });
      if (sequence === undefined) continue;
      this.notStreamed.delete(pair.pairKey);
      this.lastSent.set(pair.pairKey, { key, atMs: now });
      this.streamed.add({
        pairKey: pair.pairKey,
        sequence,
        lotSizeBase: lot,
        bids: levels.bids,
        asks: levels.asks,
        sentAtMs: now,
        validUntilMs: now + expiry * 1000,
      });
      metrics.levelSets.inc({ pair: pair.pairKey });
      metrics.sequence.set(Number(sequence));
      log.debug({ pair: pair.pairKey, sequence: sequence.toString() }, "rfq v2: levels sent");
    }
  }

  private withdraw(pairKey: string, code: RefusalCode, context: string): void {
    if (!this.lastSent.has(pairKey) && this.streamed.valid(pairKey).length === 0) {
      // Never streamed (or already withdrawn): said once per code, not on every tick.
      if (this.notStreamed.get(pairKey) !== code) {
        this.notStreamed.set(pairKey, code);
        this.deps.log.warn({ pair: pairKey, code, context }, "rfq v2: levels not streamed");
      }
      return;
    }
    this.notStreamed.set(pairKey, code);
    this.streamed.withdraw(pairKey);
    this.lastSent.delete(pairKey);
    this.deps.metrics.withdrawn.inc({ pair: pairKey, reason: code });
    this.deps.log.warn({ pair: pairKey, code, context }, "rfq v2: levels withdrawn");
  }

  private fits(pair: V2Pair): Fits {
    const inv = this.deps.inventory;
    return (side, base, quote) =>
      side === "ask"
        ? inv.check({ outMint: pair.base.mint, outAmount: base, inMint: pair.quote.mint, inAmount: quote }).ok
        : inv.check({ outMint: pair.quote.mint, outAmount: quote, inMint: pair.base.mint, inAmount: base })
            .ok;
  }

  /** Judges and co-signs one offered swap; undefined lets it pass (there is no decline message). */
  async onSwap(swapUuid: string, base64: string): Promise<string | undefined> {
    const { log, metrics, inventory, signer } = this.deps;
    // What the ledger records of this offer, filled in as it is read.
    const offer: V2Offered = { swapUuid, base64, receivedAtMs: this.now() };
    const refuse = (code: RefusalCode, context: string) => {
      metrics.swaps.inc({ outcome: code });
      log.warn({ swapUuid, code, context }, "rfq v2: swap refused");
      this.deps.ledger?.refused(offer, { code, context });
      return undefined;
    };
    const nowMs = this.now();
    this.sweepSeen(nowMs);
    if (this.seen.has(swapUuid))
      return refuse(V2RejectCode.V2_DUPLICATE_SWAP, "this swap id was answered before");
    // Forgotten no later than the longest expire_at a swap may carry (the levels' validity) and the grace.
    const validityMs = this.deps.config.file.rfqV2.quoteExpirySeconds * 1000;
    this.seen.set(swapUuid, nowMs + validityMs + RESERVATION_GRACE_MS);
    const tx = decodeSwapTransaction(base64);
    if ("code" in tx) return refuse(tx.code, tx.context);
    offer.tx = tx;
    const keys = await this.lookups.resolve(tx.message);
    if (!keys.ok) return refuse(keys.code, keys.context);
    const verdict = checkV2Swap({
      tx,
      accountKeys: keys.accountKeys,
      maker: signer.publicKey,
      pairs: this.pairs,
      streamed: (k) => this.streamed.valid(k),
      nowMs: this.now(),
    });
    if (!verdict.ok) return refuse(verdict.code, verdict.context);
    const { pair, leg } = verdict;
    offer.verdict = verdict;
    // Its expire_at is known now (within the levels' validity, which checkV2Swap held): forgotten after it.
    this.seen.set(swapUuid, Math.min(Number(leg.expireAt) * 1000, nowMs + validityMs) + RESERVATION_GRACE_MS);
    // What leaves the maker: base when the taker buys it (Bid), quote when it sells base (Ask).
    const [outMint, inMint] =
      leg.takerSide === "bid" ? [pair.base.mint, pair.quote.mint] : [pair.quote.mint, pair.base.mint];
    // The rules every channel shares (src/policy/trade.ts): streamed levels are priced blind, so a
    // flagged or denied taker is refused as on an indicative /quote's fill; an issued token's holder
    // rules, switches and caps hold either way (a v2 swap moves held inventory: no bundle engine needed).
    const { issuance } = this.deps;
    const ruled = judgeBlindTrade(
      {
        taker: leg.taker.toBase58(),
        tokenIn: inMint,
        amountIn: verdict.amountIn,
        tokenOut: outMint,
        amountOut: verdict.amountOut,
      },
      {
        ...(this.deps.takers ? { takers: this.deps.takers } : {}),
        ...(issuance ? { issuance: { policies: issuance.policies, usage: issuance.usage } } : {}),
      },
      nowMs,
    );
    if (!ruled.ok) return refuse(ruled.code, ruled.context);
    const check = inventory.check({
      outMint,
      outAmount: verdict.amountOut,
      inMint,
      inAmount: verdict.amountIn,
    });
    if (!check.ok) return refuse(check.code, check.context);
    // One signature per message (src/policy/messages.ts), before anything is reserved for it.
    const messageHash = messageBytesHash(tx.message.serialize());
    let bound: Awaited<ReturnType<typeof bindMessageOnce>>;
    try {
      bound = await bindMessageOnce(this.deps.messages, messageHash, `v2:${swapUuid}`);
    } catch (err) {
      return refuse(SwapRefusalCode.QUOTE_STORE_UNAVAILABLE, `message binding: ${(err as Error).message}`);
    }
    if (bound) return refuse(bound.code, bound.context);
    const reserved = await inventory.reserve({
      quoteId: `v2:${swapUuid}`,
      mint: outMint,
      amount: verdict.amountOut,
      inputMint: inMint,
      inputAmount: verdict.amountIn,
      expiresAtMs: Number(leg.expireAt) * 1000 + RESERVATION_GRACE_MS,
    });
    if (!reserved.ok) return refuse(reserved.code, reserved.context);
    if (ruled.need) {
      const held = await this.reserveIssuance(swapUuid, ruled.need, nowMs);
      if (held) {
        await inventory.release(`v2:${swapUuid}`);
        return refuse(held.code, held.context);
      }
    }
    const signed = await signV2Swap(signer, tx, swapUuid, verdict);
    if (!signed.ok) {
      await inventory.release(`v2:${swapUuid}`);
      this.settleIssuance(swapUuid, "release");
      return refuse(signed.code, signed.context);
    }
    if (ruled.need) this.releaseIssuanceAt(swapUuid, Number(leg.expireAt) * 1000 + RESERVATION_GRACE_MS);
    await this.deps.ledger?.signed({ ...offer, tx, verdict });
    metrics.swaps.inc({ outcome: "signed" });
    log.info(
      {
        swapUuid,
        pair: pair.pairKey,
        side: leg.takerSide,
        amountIn: verdict.amountIn.toString(),
        amountOut: verdict.amountOut.toString(),
        sequence: verdict.set.sequence.toString(),
        taker: leg.taker.toBase58(),
      },
      "rfq v2: swap co-signed",
    );
    return Buffer.from(tx.serialize()).toString("base64");
  }

  /** How many swap ids are remembered now (the seen set is bounded by expiry). */
  seenSwaps(): number {
    return this.seen.size;
  }

  /** Forgets the swap ids past their expire_at and the grace, at most once a second. */
  private sweepSeen(nowMs: number): void {
    if (nowMs < this.nextSweepMs) return;
    this.nextSweepMs = nowMs + 1_000;
    for (const [uuid, dropAtMs] of this.seen) if (dropAtMs <= nowMs) this.seen.delete(uuid);
  }

  /**
   * The issuer's daily cap for an issued token the swap moves, reserved atomically (Redis where the
   * service uses Redis) under the same key scheme as /swap's ("v2:<swap_uuid>"): a refusal or nothing.
   */
  private async reserveIssuance(
    swapUuid: string,
    need: IssuanceNeed,
    nowMs: number,
  ): Promise<Refusal | undefined> {
    const usage = (this.deps.issuance as NonNullable<RfqV2ServiceDeps["issuance"]>).usage;
    try {
      const got = await usage.reserve({
        quoteId: `v2:${swapUuid}`,
        mint: need.issued.token.mint,
        direction: need.direction,
        amount: need.amount,
        dailyCap: need.issued.maxPerDay,
        day: utcDay(nowMs),
      });
      return got.ok ? undefined : { code: got.code, context: got.context };
    } catch (err) {
      return {
        code: SwapRefusalCode.ISSUANCE_STORE_UNAVAILABLE,
        context: `issuance unavailable: ${(err as Error).message}`,
      };
    }
  }

  /** A signed swap's issuance is given back at `atMs` unless its confirmation commits it first. */
  private releaseIssuanceAt(swapUuid: string, atMs: number): void {
    const timer = setTimeout(() => this.settleIssuance(swapUuid, "release"), Math.max(0, atMs - this.now()));
    timer.unref();
    this.issuanceHeld.set(swapUuid, timer);
  }

  private settleIssuance(swapUuid: string, how: "commit" | "release"): void {
    const usage = this.deps.issuance?.usage;
    if (!usage) return;
    clearTimeout(this.issuanceHeld.get(swapUuid));
    this.issuanceHeld.delete(swapUuid);
    // Unknown ids are ignored by both (a swap of no issued token, or one already settled).
    void usage[how](`v2:${swapUuid}`).catch((err: unknown) => {
      this.deps.log.warn({ err, swapUuid }, `rfq v2: could not ${how} the swap's issuance`);
    });
  }

  close(): void {
    for (const t of this.issuanceHeld.values()) clearTimeout(t);
    this.issuanceHeld.clear();
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.client.close();
  }
}

function token(t: { mint: string; decimals: number; symbol: string; tokenProgram: string }): TokenMsg {
  return { address: t.mint, decimals: t.decimals, symbol: t.symbol, owner: t.tokenProgram };
}

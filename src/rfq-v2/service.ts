/**
 * The RFQ v2 channel: streams each configured pair's levels from the quoting book (the same prices,
 * spreads, skew, size limits and switches as /quote) and co-signs the swaps offered on them after the
 * checks of fill.ts and the inventory's own check and reservation, shared with the webhook.
 *
 * Levels are sent when they change and at least every `rfqV2.refreshSeconds`; a pair the book will not
 * price (pause, pair switch, stale price) or the inventory cannot carry is withdrawn at once: its sets
 * are forgotten, so any swap on them is refused while the operator still shows them.
 */
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import type { QuotingBook } from "../../pricing/book.ts";
import type { Controls } from "../../pricing/controls/interface.ts";
import type { Chain } from "../chain/interface.ts";
import type { Signer } from "../keys/index.ts";
import type { Logger } from "../observability/logger.ts";
import type { RefusalCode } from "../refusal/codes.ts";
import { V2Client, type V2ClientOptions } from "./client.ts";
import { V2RejectCode } from "./codes.ts";
import { checkV2Swap, decodeSwapTransaction, type V2Pair } from "./fill.ts";
import type { V2Offered, V2SwapRecorder } from "./ledger.ts";
import { type Fits, pairLevels, wireLevel } from "./levels.ts";
import { LookupTableResolver } from "./lookup.ts";
import type { RfqV2Metrics } from "./metrics.ts";
import type { TokenMsg } from "./proto.ts";
import { signV2Swap } from "./sign.ts";
import { StreamedLevels } from "./streamed.ts";

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
}

/** How long after a set's validity a v2 reservation lapses on its own, ms. */
const RESERVATION_GRACE_MS = 30_000;

export class RfqV2Service {
  readonly streamed: StreamedLevels;
  private readonly client: V2Client;
  private readonly lookups: LookupTableResolver;
  private readonly pairs = new Map<string, V2Pair>();
  private readonly lastSent = new Map<string, { key: string; atMs: number }>();
  private readonly seen = new Set<string>();
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
    for (const [, pair] of this.pairs) {
      const ladders = book.ladders(pair.pairKey);
      if (!ladders.ok) {
        this.withdraw(pair.pairKey, ladders.reason, ladders.detail);
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
          one.ok ? "INVENTORY_INSUFFICIENT" : one.reason,
          one.ok ? "the inventory carries no whole lot on either side" : one.detail,
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

  private withdraw(pairKey: string, reason: string, detail: string): void {
    if (!this.lastSent.has(pairKey) && this.streamed.valid(pairKey).length === 0) {
      // Never streamed (or already withdrawn): said once per reason, not on every tick.
      if (this.notStreamed.get(pairKey) !== reason) {
        this.notStreamed.set(pairKey, reason);
        this.deps.log.warn({ pair: pairKey, reason, detail }, "rfq v2: levels not streamed");
      }
      return;
    }
    this.notStreamed.set(pairKey, reason);
    this.streamed.withdraw(pairKey);
    this.lastSent.delete(pairKey);
    this.deps.metrics.withdrawn.inc({ pair: pairKey, reason });
    this.deps.log.warn({ pair: pairKey, reason, detail }, "rfq v2: levels withdrawn");
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
    const refuse = (code: V2RejectCode | RefusalCode, detail: string) => {
      metrics.swaps.inc({ outcome: code });
      log.warn({ swapUuid, code, detail }, "rfq v2: swap refused");
      this.deps.ledger?.refused(offer, code, detail);
      return undefined;
    };
    if (this.seen.has(swapUuid))
      return refuse(V2RejectCode.V2_DUPLICATE_SWAP, "this swap id was answered before");
    this.seen.add(swapUuid);
    const tx = decodeSwapTransaction(base64);
    if ("code" in tx) return refuse(tx.code, tx.detail);
    offer.tx = tx;
    const keys = await this.lookups.resolve(tx.message);
    if (!keys.ok) return refuse(keys.code, keys.detail);
    const verdict = checkV2Swap({
      tx,
      accountKeys: keys.accountKeys,
      maker: signer.publicKey,
      pairs: this.pairs,
      streamed: (k) => this.streamed.valid(k),
      nowMs: this.now(),
    });
    if (!verdict.ok) return refuse(verdict.code, verdict.detail);
    const { pair, leg } = verdict;
    offer.verdict = verdict;
    // What leaves the maker: base when the taker buys it (Bid), quote when it sells base (Ask).
    const [outMint, inMint] =
      leg.takerSide === "bid" ? [pair.base.mint, pair.quote.mint] : [pair.quote.mint, pair.base.mint];
    const check = inventory.check({
      outMint,
      outAmount: verdict.amountOut,
      inMint,
      inAmount: verdict.amountIn,
    });
    if (!check.ok) return refuse(V2RejectCode.V2_INVENTORY_INSUFFICIENT, `${check.reason}: ${check.detail}`);
    const reserved = await inventory.reserve({
      quoteId: `v2:${swapUuid}`,
      mint: outMint,
      amount: verdict.amountOut,
      inputMint: inMint,
      inputAmount: verdict.amountIn,
      expiresAtMs: Number(leg.expireAt) * 1000 + RESERVATION_GRACE_MS,
    });
    if (!reserved.ok)
      return refuse(V2RejectCode.V2_INVENTORY_INSUFFICIENT, `${reserved.reason}: ${reserved.detail}`);
    const signed = await signV2Swap(signer, tx, swapUuid, verdict);
    if (!signed.ok) {
      await inventory.release(`v2:${swapUuid}`);
      return refuse(signed.code, signed.detail);
    }
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

  close(): void {
    clearInterval(this.timer);
    this.unsubscribe?.();
    this.client.close();
  }
}

function token(t: { mint: string; decimals: number; symbol: string; tokenProgram: string }): TokenMsg {
  return { address: t.mint, decimals: t.decimals, symbol: t.symbol, owner: t.tokenProgram };
}

/**
 * Orders the simulator built and may still be executed, by requestId. The request id is a hash of the
 * parameters, so a user re-quoting the same swap repeats it: several orders can share one id, and the
 * execute call finds its own by the message bytes it signed.
 */
import type { BuiltOrder } from "./build-order.ts";
import type { MakerQuote, QuoteIntent } from "./fanout.ts";

export interface PendingOrder {
  requestId: string;
  quote: MakerQuote;
  intent: QuoteIntent & { taker: string };
  built: BuiltOrder;
  permissioned: boolean;
  createdAtMs: number;
}

/** How long after its expiry an order is still found (so a late execute hears "expired"). */
const RETAIN_AFTER_EXPIRY_MS = 5 * 60_000;
/** Orders kept per requestId; a user re-quotes every 5 s, so a few cover the 55 s lifetime. */
const MAX_PER_REQUEST = 16;

export class OrderBook {
  readonly #byRequest = new Map<string, PendingOrder[]>();
  readonly #now: () => number;
  #lastSweepMs = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  add(order: PendingOrder): void {
    this.#sweep();
    const list = this.#byRequest.get(order.requestId) ?? [];
    list.push(order);
    if (list.length > MAX_PER_REQUEST) list.shift();
    this.#byRequest.set(order.requestId, list);
  }

  /** Orders for a request id, newest last. */
  forRequest(requestId: string): readonly PendingOrder[] {
    return this.#byRequest.get(requestId) ?? [];
  }

  /**
   * The newest order whose unsigned message is exactly `messageBytes`. A re-quote with the same
   * parameters repeats the requestId and, within one blockhash and expiry second, the message: the
   * newest order is the one the user just signed, never an earlier one already executed (whose
   * answer would be replayed instead of this order's own, e.g. its expiry).
   */
  find(requestId: string, messageBytes: Uint8Array): PendingOrder | undefined {
    const bytes = Buffer.from(messageBytes);
    const list = this.forRequest(requestId);
    for (let i = list.length - 1; i >= 0; i--) {
      const o = list[i] as PendingOrder;
      if (bytes.equals(o.built.messageBytes)) return o;
    }
    return undefined;
  }

  get size(): number {
    let n = 0;
    for (const l of this.#byRequest.values()) n += l.length;
    return n;
  }

  #sweep(): void {
    const now = this.#now();
    if (now - this.#lastSweepMs < 10_000) return;
    this.#lastSweepMs = now;
    for (const [id, list] of this.#byRequest) {
      const kept = list.filter((o) => Number(o.built.expireAt) * 1000 + RETAIN_AFTER_EXPIRY_MS > now);
      if (kept.length) this.#byRequest.set(id, kept);
      else this.#byRequest.delete(id);
    }
  }
}

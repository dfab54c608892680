/**
 * The maker's connection to the operator's RFQ v2 service: GetLastSequenceNumber, then the two
 * bidirectional streams (StreamQuotes for levels, StreamSwap for swaps to co-sign), authenticated by
 * the `x-api-key` header. TLS for `https://`, plaintext HTTP/2 for `http://` (the sandbox). Keep-alive
 * pings every 10 s; a PING on the swap stream every 10 s; a failed or ended stream drops both and
 * reconnects after an exponential backoff with full jitter, continuing the sequence from the server's
 * last one (never below the last one sent here).
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../observability/logger.ts";
import {
  IngestionClient,
  type MarketMakerQuoteMsg,
  type MarketMakerSwapMsg,
  type QuoteUpdateMsg,
  type SequenceNumberResponseMsg,
  type SwapUpdateMsg,
} from "./proto.ts";

export interface V2ClientOptions {
  url: string;
  makerId: string;
  authToken: string;
  log: Logger;
  /** A swap offered to co-sign: the whole signed transaction (base64), or undefined to let it pass. */
  onSwap: (swapUuid: string, unsignedBase64: string) => Promise<string | undefined>;
  /** Each answer to a level set, in order of sending. */
  onQuoteUpdate?: (update: QuoteUpdateMsg) => void;
  /** A swap the operator reports landed. */
  onConfirmed?: (swapUuid: string, signature: string) => void;
  /** Both streams are open (after every reconnect): the levels should be sent again. */
  onConnected?: () => void;
  onDisconnected?: (reason: string) => void;
  backoff?: { initialMs: number; maxMs: number };
  pingMs?: number;
  random?: () => number;
}

type Duplex<Req, Res> = grpc.ClientDuplexStream<Req, Res>;
/** The service's methods as grpc-js builds them from the .proto. */
interface IngestionMethods {
  GetLastSequenceNumber(
    req: { maker_id: string; auth_token: string },
    meta: grpc.Metadata,
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res: SequenceNumberResponseMsg) => void,
  ): void;
  StreamQuotes(meta: grpc.Metadata): Duplex<MarketMakerQuoteMsg, QuoteUpdateMsg>;
  StreamSwap(meta: grpc.Metadata): Duplex<MarketMakerSwapMsg, SwapUpdateMsg>;
}

export class V2Client {
  private client: grpc.Client & IngestionMethods;
  private quotes: Duplex<MarketMakerQuoteMsg, QuoteUpdateMsg> | undefined;
  private swaps: Duplex<MarketMakerSwapMsg, SwapUpdateMsg> | undefined;
  private nextSequence = 1n;
  private attempt = 0;
  private closed = false;
  private ping: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private isConnected = false;

  constructor(private readonly opts: V2ClientOptions) {
    const u = new URL(opts.url);
    const target = `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
    const creds = u.protocol === "https:" ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
    this.client = new IngestionClient(target, creds, {
      "grpc.keepalive_time_ms": 10_000,
      "grpc.keepalive_timeout_ms": 20_000,
      "grpc.keepalive_permit_without_calls": 1,
      "grpc.max_receive_message_length": -1,
    }) as unknown as V2Client["client"];
  }

  private metadata(): grpc.Metadata {
    const m = new grpc.Metadata();
    m.set("x-api-key", this.opts.authToken);
    return m;
  }

  connected(): boolean {
    return this.isConnected;
  }

  /** The sequence number the next level set will carry. */
  sequence(): bigint {
    return this.nextSequence;
  }

  /** Connects (and keeps reconnecting until close). Resolves once both streams are open the first time. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      const first = this.opts.onConnected;
      let resolved = false;
      this.opts.onConnected = () => {
        first?.();
        if (!resolved) {
          resolved = true;
          resolve();
        }
      };
      void this.connect();
    });
  }

  private lastSequence(): Promise<SequenceNumberResponseMsg> {
    return new Promise((resolve, reject) => {
      this.client.GetLastSequenceNumber(
        { maker_id: this.opts.makerId, auth_token: this.opts.authToken },
        this.metadata(),
        { deadline: Date.now() + 10_000 },
        (err, res) => (err ? reject(err) : resolve(res)),
      );
    });
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    try {
      const res = await this.lastSequence();
      const last = res.success ? BigInt(res.last_sequence_number) : 0n;
      if (last + 1n > this.nextSequence) this.nextSequence = last + 1n;
    } catch (err) {
      this.fail(`GetLastSequenceNumber: ${(err as Error).message}`);
      return;
    }
    const quotes = this.client.StreamQuotes(this.metadata());
    const swaps = this.client.StreamSwap(this.metadata());
    this.quotes = quotes;
    this.swaps = swaps;
    quotes.on("data", (u: QuoteUpdateMsg) => this.opts.onQuoteUpdate?.(u));
    swaps.on("data", (u: SwapUpdateMsg) => void this.onSwapUpdate(u));
    for (const [name, s] of [
      ["quote", quotes],
      ["swap", swaps],
    ] as const) {
      s.on("error", (err: Error) => this.fail(`${name} stream: ${err.message}`));
      s.on("end", () => this.fail(`${name} stream ended by the server`));
    }
    this.ping = setInterval(
      () => this.write({ message_type: "SWAP_MESSAGE_TYPE_PING", swap_uuid: "", signed_transaction: "" }),
      this.opts.pingMs ?? 10_000,
    );
    this.ping.unref();
  }

  private async onSwapUpdate(u: SwapUpdateMsg): Promise<void> {
    switch (u.message_type) {
      case "SWAP_MESSAGE_TYPE_CONNECTION_READY":
        this.attempt = 0;
        this.isConnected = true;
        this.opts.log.info({ status: u.status_message }, "rfq v2: connected");
        this.opts.onConnected?.();
        return;
      case "SWAP_MESSAGE_TYPE_PING":
        this.write({ message_type: "SWAP_MESSAGE_TYPE_PONG", swap_uuid: "", signed_transaction: "" });
        return;
      case "SWAP_MESSAGE_TYPE_SWAP_AVAILABLE": {
        const uuid = u.swap_uuid ?? "";
        const signed = await this.opts.onSwap(uuid, u.unsigned_transaction ?? "");
        if (signed !== undefined)
          this.write({
            message_type: "SWAP_MESSAGE_TYPE_SWAP_SUBMIT",
            swap_uuid: uuid,
            signed_transaction: signed,
          });
        return;
      }
      case "SWAP_MESSAGE_TYPE_TRANSACTION_CONFIRMED":
        this.opts.onConfirmed?.(u.swap_uuid ?? "", u.transaction_signature ?? "");
        return;
      case "SWAP_MESSAGE_TYPE_ERROR":
        this.opts.log.warn({ status: u.status_message }, "rfq v2: the operator reports an error");
        return;
      default:
        return;
    }
  }

  private write(m: MarketMakerSwapMsg): void {
    if (this.swaps && !this.swaps.writableEnded) this.swaps.write(m);
  }

  /**
   * Sends one level set with the next sequence number; returns that number, or undefined when not
   * connected (the set is sent again on connect).
   */
  sendLevels(quote: Omit<MarketMakerQuoteMsg, "sequence_number" | "maker_id">): bigint | undefined {
    if (!this.isConnected || !this.quotes || this.quotes.writableEnded) return undefined;
    const sequence = this.nextSequence++;
    this.quotes.write({ ...quote, sequence_number: sequence.toString(), maker_id: this.opts.makerId });
    return sequence;
  }

  private fail(reason: string): void {
    if (this.closed) return;
    const wasConnected = this.isConnected;
    this.teardown();
    if (wasConnected) this.opts.onDisconnected?.(reason);
    const { initialMs, maxMs } = this.opts.backoff ?? { initialMs: 500, maxMs: 30_000 };
    const cap = Math.min(maxMs, initialMs * 2 ** this.attempt++);
    const delay = Math.floor((this.opts.random ?? Math.random)() * cap);
    this.opts.log.warn({ reason, retryInMs: delay }, "rfq v2: disconnected, reconnecting");
    this.retry = setTimeout(() => void this.connect(), delay);
    this.retry.unref();
  }

  private teardown(): void {
    this.isConnected = false;
    clearInterval(this.ping);
    for (const s of [this.quotes, this.swaps]) {
      if (!s) continue;
      s.removeAllListeners();
      s.on("error", () => {});
      s.cancel();
    }
    this.quotes = undefined;
    this.swaps = undefined;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.teardown();
    this.client.close();
  }
}

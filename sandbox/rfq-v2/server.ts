/**
 * A local stand-in for the operator's RFQ v2 maker service (MarketMakerIngestionService over gRPC), for
 * the sandbox and the tests. It stands in for the operator's edge, which cannot be reached from here,
 * and repeats what its published reference states: `x-api-key` on every call (UNAUTHENTICATED "Missing
 * authentication token" without it), GetLastSequenceNumber per maker, one QuoteUpdate per level set
 * (NEW for a pair's first live set, UPDATED for a replacement, REJECTED with a reason for a set that
 * fails validation, EXPIRED when a set's validity passes unreplaced), a heartbeat (UPDATE_TYPE_UNSPECIFIED),
 * CONNECTION_READY then PONG to each PING on the swap stream, SWAP_AVAILABLE for a swap built from the
 * maker's live levels as the operator builds them (px_ticks = floor(price x lot / 10^decimals), tick 1,
 * qty_lots = volume / lot, expire_at = the set's validity end in seconds), and TRANSACTION_CONFIRMED
 * once the signed swap lands through the `land` callback.
 *
 * Lookup tables (with `tables`): the operator's swaps load accounts from address lookup tables in every
 * published sample (the leg's unlabelled last account among them). The stand-in creates two on the
 * chain it is given, paid by `tables.payer`, before the first swap that needs them: one for what
 * every route shares (the leg's extra account, a key the stand-in makes up since the real one is not
 * identified; the instructions sysvar; the aggregator's event authority; the RFQ v2 program; both token
 * programs) and one per maker and pair (both mints and the maker's two token accounts, loaded
 * writable: whether the operator's tables hold them is not published, and a maker must accept them
 * either way). Every swap is compiled against both, so each of those keys that is neither a signer nor
 * an invoked program is loaded from a table; the taker's accounts stay static. Without `tables` the
 * swaps carry no lookups.
 *
 * TLS (with `tls`): the operator's edge is `https://` (its certificate from a public CA); the stand-in
 * serves the certificate it is given instead, e.g. one a test's throwaway CA issued.
 *
 * Two-leg swaps (`amm` on an offer): the RFQ leg split beside a leg through the local chain's stand-in
 * AMM pool (src/chain/local/rfq-v2-emulation.ts says what that pool is and does not check), as the
 * operator splits its routes between the maker and AMMs; the sandbox funds the pool.
 *
 * Not checked here because nothing publishes the rule: sequence gaps (only a number not above the
 * maker's last is refused), rate limits, level limits, and any deadline for SWAP_SUBMIT beyond the
 * caller's own timeout.
 */
import { randomUUID } from "node:crypto";
import * as grpc from "@grpc/grpc-js";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { type AddressLookupTableAccount, Keypair, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../config/schema.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { AGGREGATOR_EVENT_AUTHORITY, INSTRUCTIONS_SYSVAR, RFQ_V2_PROGRAM } from "../../src/program/rfq-v2.ts";
import {
  INGESTION_SERVICE,
  type MarketMakerQuoteMsg,
  type MarketMakerSwapMsg,
  type QuoteUpdateMsg,
  type SwapUpdateMsg,
  type UpdateType,
} from "../../src/rfq-v2/proto.ts";
import { buildV2SwapTransaction } from "./build.ts";
import { createLookupTable, type TableChain } from "./tables.ts";

/** What the sandbox funds the stand-in AMM pool with (token symbol: smallest units): 1,000 SOL, 180,250 USDC. */
export const STAND_IN_POOL_FUNDS: Record<string, string> = { SOL: "1000000000000", USDC: "180250000000" };

export interface StandInMaker {
  makerId: string;
  token: string;
}

export interface LiveSet {
  quote: MarketMakerQuoteMsg;
  receivedAtMs: number;
  validUntilMs: number;
}

export interface OfferedSwap {
  swapUuid: string;
  tx: VersionedTransaction;
  inAmount: bigint;
}

export interface StandInOptions {
  makers: StandInMaker[];
  /** Lands a signed swap; returns its signature (TRANSACTION_CONFIRMED) or throws (ERROR). */
  land?: (tx: VersionedTransaction) => Promise<string>;
  heartbeatMs?: number;
  now?: () => number;
  recentBlockhash?: () => Promise<string> | string;
  /** The chain the swaps' lookup tables are created on, and who pays for them (see the file comment). */
  tables?: { chain: TableChain; payer: Keypair };
  /** Serve TLS with this certificate chain and key (PEM): `listen` then answers an `https://` URL. */
  tls?: { cert: Buffer; key: Buffer };
}

type QuoteStream = grpc.ServerDuplexStream<MarketMakerQuoteMsg, QuoteUpdateMsg>;
type SwapCall = grpc.ServerDuplexStream<MarketMakerSwapMsg, SwapUpdateMsg>;

export class RfqV2StandIn {
  private readonly server = new grpc.Server({ "grpc.keepalive_permit_without_calls": 1 });
  private readonly lastSequence = new Map<string, bigint>();
  /** makerId -> pair key ("baseMint/quoteMint") -> live set. */
  private readonly books = new Map<string, Map<string, LiveSet>>();
  private readonly swapStreams = new Map<string, SwapCall>();
  /** makerId -> the level streams (StreamQuotes calls) open now. */
  private readonly quoteCalls = new Map<string, Set<QuoteStream>>();
  private readonly pending = new Map<
    string,
    { makerId: string; tx: VersionedTransaction; resolve: (r: SubmitResult) => void }
  >();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Every QuoteUpdate sent (and when, Unix ms), per maker, for tests and the demo. */
  readonly updates: { makerId: string; update: QuoteUpdateMsg; sequence: string; atMs: number }[] = [];
  private readonly now: () => number;
  /** The leg's unlabelled last account (made up: the real one is not identified). */
  readonly legExtra = Keypair.generate().publicKey;
  /** Lookup tables made so far: "shared", and one per "maker/base/quote". */
  private readonly tables = new Map<string, Promise<AddressLookupTableAccount>>();
  port = 0;

  constructor(private readonly opts: StandInOptions) {
    this.now = opts.now ?? Date.now;
    this.server.addService(INGESTION_SERVICE, {
      GetLastSequenceNumber: this.getLastSequenceNumber.bind(this),
      GetAllOrderbooks: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
        cb({ code: grpc.status.UNIMPLEMENTED, details: "not served by the stand-in" }),
      GetQuotes: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
        cb({ code: grpc.status.UNIMPLEMENTED, details: "not served by the stand-in" }),
      StreamQuotes: this.streamQuotes.bind(this),
      StreamSwap: this.streamSwap.bind(this),
    });
  }

  async listen(host = "127.0.0.1", port = 0): Promise<string> {
    const tls = this.opts.tls;
    const creds = tls
      ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }])
      : grpc.ServerCredentials.createInsecure();
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, creds, (err, p) => (err ? reject(err) : resolve(p))),
    );
    return `${tls ? "https" : "http"}://${host}:${this.port}`;
  }

  private maker(metadata: grpc.Metadata): StandInMaker | undefined {
    const token = metadata.get("x-api-key")[0];
    return this.opts.makers.find((m) => m.token === token);
  }

  private unauthenticated(metadata: grpc.Metadata): grpc.ServiceError | undefined {
    if (this.maker(metadata)) return undefined;
    const missing = metadata.get("x-api-key").length === 0;
    const err = new Error(
      missing ? "Missing authentication token" : "Invalid authentication token",
    ) as grpc.ServiceError;
    err.code = grpc.status.UNAUTHENTICATED;
    err.details = err.message;
    return err;
  }

  private getLastSequenceNumber(
    call: grpc.ServerUnaryCall<{ maker_id: string; auth_token: string }, unknown>,
    cb: grpc.sendUnaryData<unknown>,
  ): void {
    const err = this.unauthenticated(call.metadata);
    if (err) {
      cb(err);
      return;
    }
    const last = this.lastSequence.get(call.request.maker_id);
    cb(null, {
      success: last !== undefined,
      last_sequence_number: (last ?? 0n).toString(),
      message: last === undefined ? "no quote from this maker yet" : "",
    });
  }

  private streamQuotes(call: QuoteStream): void {
    const err = this.unauthenticated(call.metadata);
    if (err) {
      call.emit("error", err);
      return;
    }
    const maker = this.maker(call.metadata)!;
    const open = this.quoteCalls.get(maker.makerId) ?? new Set<QuoteStream>();
    this.quoteCalls.set(maker.makerId, open);
    open.add(call);
    const answer = (update_type: UpdateType, sequence: string, status_message?: string) => {
      const update = { update_type, ...(status_message ? { status_message } : {}) };
      this.updates.push({ makerId: maker.makerId, update, sequence, atMs: this.now() });
      if (!call.writableEnded) call.write(update);
    };
    const heartbeat = setInterval(
      () => answer("UPDATE_TYPE_UNSPECIFIED", ""),
      this.opts.heartbeatMs ?? 15_000,
    );
    heartbeat.unref();
    const closed = () => {
      clearInterval(heartbeat);
      open.delete(call);
    };
    call.on("data", (q: MarketMakerQuoteMsg) => {
      const reason = this.invalid(q, maker);
      if (reason) return answer("UPDATE_TYPE_REJECTED", q.sequence_number, reason);
      this.lastSequence.set(maker.makerId, BigInt(q.sequence_number));
      const key = `${q.token_pair.base_token.address}/${q.token_pair.quote_token.address}`;
      const books = this.books.get(maker.makerId) ?? new Map<string, LiveSet>();
      this.books.set(maker.makerId, books);
      const now = this.now();
      const prior = books.get(key);
      const validUntilMs = Number(BigInt(q.timestamp) / 1000n) + Number(q.quote_expiry_time) * 1000;
      const live: LiveSet = { quote: q, receivedAtMs: now, validUntilMs };
      books.set(key, live);
      answer(
        prior && prior.validUntilMs > now ? "UPDATE_TYPE_UPDATED" : "UPDATE_TYPE_NEW",
        q.sequence_number,
      );
      const t = setTimeout(
        () => {
          this.timers.delete(t);
          if (books.get(key) === live) {
            books.delete(key);
            answer("UPDATE_TYPE_EXPIRED", q.sequence_number);
          }
        },
        Math.max(0, validUntilMs - now),
      );
      t.unref();
      this.timers.add(t);
    });
    call.on("end", () => {
      closed();
      call.end();
    });
    call.on("error", closed);
    call.on("cancelled", closed);
  }

  /** Why a level set is refused, as the builders of every published SDK and the reference state. */
  private invalid(q: MarketMakerQuoteMsg, maker: StandInMaker): string | undefined {
    if (q.maker_id !== maker.makerId) return `maker_id ${q.maker_id} is not the token's maker`;
    if (!q.maker_address) return "maker_address is required";
    try {
      new PublicKey(q.maker_address);
    } catch {
      return "maker_address is not a Solana address";
    }
    if (BigInt(q.lot_size_base) === 0n) return "lot_size_base must be positive";
    if (BigInt(q.quote_expiry_time) < 10n) return "quote_expiry_time must be at least 10 seconds";
    if (q.bid_levels.length + q.ask_levels.length === 0) return "at least one bid or ask level is required";
    for (const l of [...q.bid_levels, ...q.ask_levels]) {
      if (BigInt(l.price) === 0n || BigInt(l.volume) === 0n) return "a level has price 0 or volume 0";
    }
    const last = this.lastSequence.get(maker.makerId);
    if (last !== undefined && BigInt(q.sequence_number) <= last)
      return `sequence_number ${q.sequence_number} is not above the last one (${last})`;
    return undefined;
  }

  private streamSwap(call: SwapCall): void {
    const err = this.unauthenticated(call.metadata);
    if (err) {
      call.emit("error", err);
      return;
    }
    const maker = this.maker(call.metadata)!;
    this.swapStreams.set(maker.makerId, call);
    call.write({ message_type: "SWAP_MESSAGE_TYPE_CONNECTION_READY", status_message: "Ready" });
    call.on("data", (m: MarketMakerSwapMsg) => {
      if (m.message_type === "SWAP_MESSAGE_TYPE_PING") {
        call.write({ message_type: "SWAP_MESSAGE_TYPE_PONG" });
      } else if (m.message_type === "SWAP_MESSAGE_TYPE_SWAP_SUBMIT") {
        void this.onSubmit(maker.makerId, m, call);
      }
    });
    const gone = () => {
      if (this.swapStreams.get(maker.makerId) === call) this.swapStreams.delete(maker.makerId);
    };
    call.on("end", () => {
      gone();
      call.end();
    });
    call.on("cancelled", gone);
    call.on("error", gone);
  }

  private async onSubmit(makerId: string, m: MarketMakerSwapMsg, call: SwapCall): Promise<void> {
    const p = this.pending.get(m.swap_uuid);
    if (!p || p.makerId !== makerId) {
      call.write({ message_type: "SWAP_MESSAGE_TYPE_ERROR", status_message: `unknown swap ${m.swap_uuid}` });
      return;
    }
    this.pending.delete(m.swap_uuid);
    let signed: VersionedTransaction;
    try {
      signed = VersionedTransaction.deserialize(Buffer.from(m.signed_transaction, "base64"));
    } catch (e) {
      p.resolve({ ok: false, reason: `unreadable: ${(e as Error).message}` });
      return;
    }
    const bytes = p.tx.message.serialize();
    if (!Buffer.from(signed.message.serialize()).equals(Buffer.from(bytes))) {
      p.resolve({ ok: false, reason: "the maker changed the message" });
      return;
    }
    const makerKey = signed.message.staticAccountKeys[1]!;
    if (!verifyEd25519(bytes, signed.signatures[1]!, makerKey.toBytes())) {
      p.resolve({ ok: false, reason: "no valid maker signature at slot 1" });
      return;
    }
    if (!this.opts.land) {
      p.resolve({ ok: true, tx: signed });
      return;
    }
    try {
      const signature = await this.opts.land(signed);
      call.write({
        message_type: "SWAP_MESSAGE_TYPE_TRANSACTION_CONFIRMED",
        swap_uuid: m.swap_uuid,
        transaction_signature: signature,
      });
      p.resolve({ ok: true, tx: signed, signature });
    } catch (e) {
      call.write({
        message_type: "SWAP_MESSAGE_TYPE_ERROR",
        status_message: `swap ${m.swap_uuid} failed: ${(e as Error).message}`,
      });
      p.resolve({ ok: false, reason: `landing failed: ${(e as Error).message}` });
    }
  }

  /** The token a maker authenticates with. */
  tokenOf(makerId: string): string {
    const m = this.opts.makers.find((x) => x.makerId === makerId);
    if (!m) throw new Error(`no maker ${makerId}`);
    return m.token;
  }

  /** How many level streams (StreamQuotes calls) the maker has open now. */
  openQuoteStreams(makerId: string): number {
    return this.quoteCalls.get(makerId)?.size ?? 0;
  }

  /** The maker's live set for a pair, if any. */
  liveSet(makerId: string, baseMint: string, quoteMint: string): LiveSet | undefined {
    const s = this.books.get(makerId)?.get(`${baseMint}/${quoteMint}`);
    return s && s.validUntilMs > this.now() ? s : undefined;
  }

  /**
   * Offers the maker a swap of `inAmount` by `taker` against its live levels, the taker's signature in
   * slot 0; resolves with what the maker did (or `timeout` when it sent nothing in `timeoutMs`).
   */
  async offerSwap(o: {
    makerId: string;
    taker: Keypair;
    baseMint: string;
    quoteMint: string;
    baseTokenProgram: string;
    quoteTokenProgram: string;
    baseDecimals: number;
    takerSide: "bid" | "ask";
    inAmount: bigint;
    timeoutMs?: number;
    /**
     * Changes the transaction before the taker signs it (tests play a hostile operator with it); given
     * the lookup tables it was compiled against.
     */
    tamper?: (
      tx: VersionedTransaction,
      tables: AddressLookupTableAccount[],
    ) => VersionedTransaction | Promise<VersionedTransaction>;
    /** How many times the same SWAP_AVAILABLE is sent (a redelivering operator; default 1). */
    deliveries?: number;
    /**
     * A two-leg swap: `bps` of the input routed through the local chain's stand-in AMM pool beside the
     * RFQ leg (which takes the rest), as the operator splits a route (the pool must be funded).
     */
    amm?: { bps: number };
  }): Promise<SubmitResult & { swapUuid: string; offered: VersionedTransaction }> {
    const live = this.liveSet(o.makerId, o.baseMint, o.quoteMint);
    if (!live) throw new Error(`maker ${o.makerId} has no live levels for ${o.baseMint}/${o.quoteMint}`);
    const stream = this.swapStreams.get(o.makerId);
    if (!stream) throw new Error(`maker ${o.makerId} has no swap stream open`);
    const lot = BigInt(live.quote.lot_size_base);
    const side = o.takerSide === "bid" ? live.quote.ask_levels : live.quote.bid_levels;
    const scale = 10n ** BigInt(o.baseDecimals);
    const levels = side.map((l) => ({
      pxTicks: (BigInt(l.price) * lot) / scale,
      qtyLots: BigInt(l.volume) / lot,
    }));
    // The tables first: making them takes slots, and the blockhash is taken after.
    const maker = new PublicKey(live.quote.maker_address);
    const lookupTables = await this.lookupTablesFor(maker, o);
    const blockhash = this.opts.recentBlockhash
      ? await this.opts.recentBlockhash()
      : "11111111111111111111111111111111";
    let tx = buildV2SwapTransaction(
      {
        taker: o.taker.publicKey,
        maker,
        baseMint: new PublicKey(o.baseMint),
        quoteMint: new PublicKey(o.quoteMint),
        baseTokenProgram: new PublicKey(o.baseTokenProgram),
        quoteTokenProgram: new PublicKey(o.quoteTokenProgram),
        takerSide: o.takerSide,
        inAmount: o.inAmount,
        quotedOutAmount: 0n,
        expireAt: BigInt(Math.floor(live.validUntilMs / 1000)),
        tickSizeQpb: 1n,
        lotSizeBase: lot,
        levels,
        recentBlockhash: blockhash,
        legExtra: this.legExtra,
        ...(o.amm ? { amm: o.amm } : {}),
      },
      { lookupTables },
    );
    if (o.tamper) tx = await o.tamper(tx, lookupTables);
    tx.sign([o.taker]);
    return this.offerTransaction({ ...o, tx });
  }

  /**
   * Offers the maker a transaction already built and signed by its taker under a new swap_uuid (a
   * hostile or confused operator offering the same message twice); resolves as offerSwap does.
   */
  async offerTransaction(o: {
    makerId: string;
    tx: VersionedTransaction;
    timeoutMs?: number;
    deliveries?: number;
  }): Promise<SubmitResult & { swapUuid: string; offered: VersionedTransaction }> {
    const { tx } = o;
    const stream = this.swapStreams.get(o.makerId);
    if (!stream) throw new Error(`maker ${o.makerId} has no swap stream open`);
    const swapUuid = randomUUID();
    const result = new Promise<SubmitResult>((resolve) => {
      this.pending.set(swapUuid, { makerId: o.makerId, tx, resolve });
      const t = setTimeout(() => {
        if (this.pending.delete(swapUuid)) resolve({ ok: false, reason: "timeout" });
      }, o.timeoutMs ?? 5_000);
      t.unref();
    });
    for (let i = 0; i < (o.deliveries ?? 1); i++)
      stream.write({
        message_type: "SWAP_MESSAGE_TYPE_SWAP_AVAILABLE",
        swap_uuid: swapUuid,
        unsigned_transaction: Buffer.from(tx.serialize()).toString("base64"),
      });
    return { ...(await result), swapUuid, offered: tx };
  }

  /** The tables a swap of this maker and pair loads from (made on first use), none without `tables`. */
  private async lookupTablesFor(
    maker: PublicKey,
    o: { baseMint: string; quoteMint: string; baseTokenProgram: string; quoteTokenProgram: string },
  ): Promise<AddressLookupTableAccount[]> {
    const t = this.opts.tables;
    if (!t) return [];
    const once = (name: string, addresses: () => PublicKey[]) => {
      let p = this.tables.get(name);
      if (!p) {
        p = createLookupTable(t.chain, t.payer, addresses());
        // A failed creation is tried again on the next swap.
        p.catch(() => this.tables.delete(name));
        this.tables.set(name, p);
      }
      return p;
    };
    const shared = once("shared", () =>
      [
        this.legExtra.toBase58(),
        INSTRUCTIONS_SYSVAR,
        AGGREGATOR_EVENT_AUTHORITY,
        RFQ_V2_PROGRAM,
        TOKEN_PROGRAM,
        TOKEN_2022_PROGRAM,
      ].map((a) => new PublicKey(a)),
    );
    const pair = once(`${maker.toBase58()}/${o.baseMint}/${o.quoteMint}`, () => {
      const [base, quote] = [new PublicKey(o.baseMint), new PublicKey(o.quoteMint)];
      return [
        base,
        quote,
        getAssociatedTokenAddressSync(base, maker, false, new PublicKey(o.baseTokenProgram)),
        getAssociatedTokenAddressSync(quote, maker, false, new PublicKey(o.quoteTokenProgram)),
      ];
    });
    return Promise.all([shared, pair]);
  }

  close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    // Open streams never end on their own: cut them, as a restarting server does.
    this.server.forceShutdown();
    return Promise.resolve();
  }
}

export type SubmitResult =
  | { ok: true; tx: VersionedTransaction; signature?: string }
  | { ok: false; reason: string };

/**
 * What the signer service decides for one sign request, on its own: it trusts nothing the webhook
 * says except the quoteId and the transaction bytes.
 *  1. decode the transaction                    (MALFORMED_TRANSACTION)
 *  2. read the quote itself from the shared store (QUOTE_NOT_FOUND, SIGNER_STORE_UNAVAILABLE)
 *  3. every fill rule (src/fill/rules/, validateFill, the webhook's very code) against that quote,
 *     with the fee payer one of the signer's own keys                  (the rule's own code)
 *  4. the taker's signature over these bytes, the maker's slot empty
 *                       (SIGNATURE_VERIFICATION_FAILED, INVALID_MAKER_SIGNATURE_SLOT);
 *     an issued token's holder rules, switches and per-fill cap (src/policy/trade.ts, the webhook's
 *     functions)                      (HOLDER_NOT_ALLOWED, ISSUANCE_DISABLED, ISSUANCE_CAP_EXCEEDED)
 *  5. the per-fill limit of the output token                           (SIGNER_NO_LIMIT, SIGNER_LIMIT_PER_FILL)
 *  6. the price band: the quote's amounts against the signer's OWN price for the pair (band.ts), so a
 *     quote the webhook (or anyone with its Redis credentials) made more generous is refused
 *                                      (SIGNER_NO_PRICE_BAND, SIGNER_NO_PRICE, SIGNER_PRICE_BAND)
 *  7. one landable fill per quote: another message for a quote already signed only once the first
 *     one's blockhash has expired, asked of the signer's own chain reader (SIGNER_QUOTE_ALREADY_SIGNED)
 *  8. never signed before, the quote's record, and within the minute, the day and the day's loss: one
 *     atomic step in Redis            (SIGNER_ALREADY_SIGNED, SIGNER_QUOTE_ALREADY_SIGNED,
 *                                      SIGNER_LIMIT_PER_MINUTE, SIGNER_LIMIT_PER_DAY, SIGNER_LIMIT_LOSS_PER_DAY)
 *  9. sign the message bytes with the fee payer's key
 * Every refusal is one log line with its code; every signature one line with quoteId and message hash.
 * An RFQ v2 swap (decideV2) is judged from its own bytes the same way: its lookup tables resolved by
 * the signer's own chain reader, then structure, programs, expiry, the walk of its levels against
 * steps 4 (the issued token's rules; its daily cap in the signer's issuance record), 5, 6 and 8, one
 * landable message per swap id.
 */
import type { KeyObject } from "node:crypto";
import { type Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { Config } from "../../../config/load.ts";
import type { PriceSource } from "../../../pricing/interface.ts";
import type { Chain } from "../../chain/interface.ts";
import { ed25519SigningKey, signEd25519 } from "../../crypto/ed25519.ts";
import { raisedFeeCaps } from "../../fill/raised-fee-cap.ts";
import { checkTakerSignatures } from "../../fill/signatures.ts";
import { FillRejectCode, messageBytesHash, validateFill } from "../../fill/validate.ts";
import { buildCompanion } from "../../issuance/companion.ts";
import { type IssuanceNeed, IssuancePolicies } from "../../issuance/policy.ts";
import type { Logger } from "../../observability/logger.ts";
import { issuedTrade } from "../../policy/trade.ts";
import { deserializeFillTransaction } from "../../program/decode.ts";
import type { QuoteStore, StoredQuote } from "../../quote-store/interface.ts";
import {
  type Refusal,
  type RefusalCode,
  type Refused,
  SignerRefusalCode,
  SwapRefusalCode,
  V2RejectCode,
} from "../../refusal/codes.ts";
import { LookupTableResolver } from "../../rfq-v2/lookup.ts";
import { checkV2Route, decodeSwapTransaction, type V2Pair } from "../../rfq-v2/swap-checks.ts";
import { KeypairSigner } from "../../signing/keypair.ts";
import type { ClaimedLevelsWire } from "../../signing/protocol.ts";
import { type BandTrade, bandFor, judgeBand } from "./band.ts";
import type {
  LimitTable,
  PairBand,
  QuoteRecord,
  SignerIssuanceLedger,
  SignerLedger,
  TokenLimits,
} from "./limits.ts";
import { claimProblem, expiryProblem, makerTrade, unexpectedProgram, v2PairsOf } from "./v2.ts";

export type SignDecision = { ok: true; signature: string; messageHash: string; maker: string } | Refused;

export type CompanionDecision = { ok: true; companion: string } | Refused;

interface HeldKey {
  publicKey: Keypair["publicKey"];
  base58: string;
  key: KeyObject;
}

export interface SigningPolicyOptions {
  config: Config;
  store: QuoteStore;
  ledger: SignerLedger;
  limits: LimitTable;
  /** Price bands by pair, and the signer's own price sources they name (started by the caller). */
  bands: ReadonlyMap<string, PairBand>;
  priceSources: ReadonlyMap<string, PriceSource>;
  /**
   * The signer's own chain reader (SIGNER_RPC_URL): tells whether a quote's earlier message can still
   * land, and reads the lookup tables an RFQ v2 swap loads accounts from. Unset: a quote is never
   * signed for a second message, and a v2 swap that loads from lookup tables is refused.
   */
  chain?: Pick<Chain, "isBlockhashValid" | "getAccounts">;
  /** The active key first, then the next key of a rotation (if configured). */
  keys: readonly Keypair[];
  /**
   * The issuer key (SIGNER_ISSUER_KEYPAIR) and its record: the signer then makes the companion mint
   * of a fill of a token the maker issues (config `issuance`), checking the caps itself.
   */
  issuer?: { keypair: Keypair; ledger: SignerIssuanceLedger };
  /**
   * The signer's own issuance record (the issuer's when it holds one): the daily cap of an issued
   * token an RFQ v2 swap moves. Unset: such a swap is refused (the cap cannot be held).
   */
  issuanceRecord?: SignerIssuanceLedger;
  log: Logger;
  /** Seconds a fill's expire_at may exceed the quote's expiry (the webhook's default, 5). */
  expiryGraceSeconds?: bigint;
  now?: () => number;
}

type Refuse = (code: RefusalCode, context: string, extra?: Record<string, unknown>) => SignDecision;

/** A refusal, logged once with what the caller adds (the message's hash, the rule). */
const refuser =
  (log: Logger): Refuse =>
  (code, context, extra = {}) => {
    log.warn({ code, context, ...extra }, "signature refused");
    return { ok: false, code, context };
  };

/** The message to sign, as read and hashed once, and the key that signs it. */
interface Signing {
  tx: VersionedTransaction;
  messageBytes: Uint8Array;
  messageHash: string;
  held: HeldKey;
}

/** What #judgeTrade found: the payout, its token's limits, the pair's band and the price verdict. */
interface Judged {
  mint: string;
  amount: bigint;
  limits: TokenLimits;
  band: PairBand;
  verdict: { loss: bigint; mid: string };
}

export class SigningPolicy {
  readonly #keys: HeldKey[];
  /** The pairs an RFQ v2 swap may trade: those the signer's file gives a band. */
  readonly #v2Pairs: ReadonlyMap<string, V2Pair>;
  /** The v2 swaps' lookup tables, read through the signer's own chain reader (none without one). */
  readonly #lookups: LookupTableResolver | undefined;
  /** The tokens the maker issues (config `issuance`): holder rules, switches and caps. */
  readonly #issuance: IssuancePolicies;
  private readonly maxFeeLamports: bigint;
  private readonly raisedFeeCapOf: ReturnType<typeof raisedFeeCaps>;
  private readonly now: () => number;

  constructor(private readonly opts: SigningPolicyOptions) {
    if (!opts.keys.length) throw new Error("the signer needs at least one key");
    this.#keys = opts.keys.map((k) => ({
      publicKey: k.publicKey,
      base58: k.publicKey.toBase58(),
      key: ed25519SigningKey(k.secretKey),
    }));
    this.#v2Pairs = v2PairsOf(opts.bands);
    this.#issuance = new IssuancePolicies(opts.config);
    this.maxFeeLamports = BigInt(opts.config.file.limits.maxFeeLamports);
    this.raisedFeeCapOf = raisedFeeCaps(opts.config);
    this.now = opts.now ?? Date.now;
    // A 1 s deadline: the refusal reaches the webhook inside its 2 s wait (SIGNER_TIMEOUT_MS's default).
    this.#lookups = opts.chain
      ? new LookupTableResolver({ chain: opts.chain, now: this.now, deadlineMs: 1_000 })
      : undefined;
  }

  /** The key new webhooks quote with, every key the signer signs for, and its issuer key if any. */
  keys(): { active: string; keys: string[]; issuer?: string; v2ExpirySeconds: number } {
    const issuer = this.opts.issuer?.keypair.publicKey.toBase58();
    return {
      active: (this.#keys[0] as HeldKey).base58,
      keys: this.#keys.map((k) => k.base58),
      ...(issuer ? { issuer } : {}),
      // The furthest expire_at decideV2 signs (expiryProblem): the webhook streams no longer levels.
      v2ExpirySeconds:
        this.opts.config.file.rfqV2.quoteExpirySeconds + Number(this.opts.expiryGraceSeconds ?? 5n),
    };
  }

  /**
   * The issuer's companion of a fill this signer signed (src/issuance/companion.ts): only for the
   * message its own record holds for the quote, only a mint the configuration's `issuance` allows
   * for that taker, under the per-fill cap and, in its own record, the daily cap; one per quote.
   * What it cannot check: that `tipAccount` is the bundle engine's (the webhook names it), so at
   * most `issuance.<symbol>.tipLamports` per quote can go to an account the webhook chose.
   */
  async companion(quoteId: string, transaction: string, tipAccount: string): Promise<CompanionDecision> {
    const log = this.opts.log.child({ quoteId });
    const refuse = (
      code: RefusalCode,
      context: string,
      extra: Record<string, unknown> = {},
    ): CompanionDecision => {
      log.warn({ code, context, ...extra }, "companion refused");
      return { ok: false, code, context };
    };
    const issuer = this.opts.issuer;
    if (!issuer)
      return refuse(
        SignerRefusalCode.SIGNER_NO_ISSUER,
        "this signer holds no issuer key (SIGNER_ISSUER_KEYPAIR)",
      );
    const parsed = deserializeFillTransaction(transaction);
    if (!parsed.ok) return refuse(FillRejectCode.MALFORMED_TRANSACTION, parsed.problem);
    const tx = parsed.tx;
    const messageHash = messageBytesHash(tx.message.serialize());
    let tip: PublicKey;
    try {
      tip = new PublicKey(tipAccount);
    } catch {
      return refuse(SignerRefusalCode.SIGNER_BAD_REQUEST, `tipAccount ${tipAccount} is not a public key`);
    }
    let record: QuoteRecord | undefined;
    let quote: Awaited<ReturnType<QuoteStore["get"]>>;
    try {
      [record, quote] = await Promise.all([
        this.opts.ledger.quoteRecord(quoteId),
        this.opts.store.get(quoteId),
      ]);
    } catch (e) {
      return refuse(SignerRefusalCode.SIGNER_STORE_UNAVAILABLE, (e as Error).message, { messageHash });
    }
    if (record?.messageHash !== messageHash) {
      return refuse(
        SignerRefusalCode.SIGNER_COMPANION_UNSIGNED_FILL,
        `this signer did not sign this message for quote ${quoteId}`,
        { messageHash },
      );
    }
    if (!quote)
      return refuse(SwapRefusalCode.QUOTE_NOT_FOUND, `no quote ${quoteId} in the store`, { messageHash });
    const { held, validation } = this.#validate(tx, messageHash, quote);
    if (!validation.ok) return refuse(validation.code, validation.context, { messageHash });
    const fill = validation.fill;
    const checked = this.#issuedFill(quote, fill);
    if (!checked.ok) return refuse(checked.code, checked.context, { messageHash });
    const need = checked.need;
    if (need?.direction !== "mint") {
      return refuse(
        SignerRefusalCode.SIGNER_NO_ISSUER,
        need
          ? "the signer service makes mint companions only (a burn needs burnOnSell off)"
          : "the fill trades no issued token",
        { messageHash },
      );
    }
    let recorded: Awaited<ReturnType<SignerIssuanceLedger["record"]>>;
    try {
      recorded = await issuer.ledger.record({
        quoteId,
        mint: need.issued.token.mint,
        amount: need.amount,
        dailyCap: need.issued.maxPerDay,
        nowMs: this.now(),
      });
    } catch (e) {
      return refuse(SignerRefusalCode.SIGNER_STORE_UNAVAILABLE, `signer record: ${(e as Error).message}`, {
        messageHash,
      });
    }
    if (recorded === "alreadyMade")
      return refuse(
        SignerRefusalCode.SIGNER_COMPANION_ALREADY_MADE,
        `a companion was made for quote ${quoteId} before`,
        { messageHash },
      );
    if (recorded === "dailyCap") {
      return refuse(
        "ISSUANCE_CAP_EXCEEDED",
        `minting ${need.amount} ${need.issued.token.symbol} would cross the daily cap of ${need.issued.maxPerDay} (the signer's record)`,
        { messageHash },
      );
    }
    const companion = await buildCompanion({
      need,
      makerTokenAccount: fill.makerOutputTokenAccount,
      maker: new KeypairSigner(this.opts.keys.find((k) => k.publicKey.equals(held.publicKey)) as Keypair),
      issuer: new KeypairSigner(issuer.keypair),
      tipAccount: tip,
      recentBlockhash: tx.message.recentBlockhash,
      quoteId,
    });
    log.info(
      { messageHash, issued: need.amount.toString(), mint: need.issued.token.mint, tipAccount },
      "companion signed",
    );
    return { ok: true, companion: Buffer.from(companion.serialize()).toString("base64") };
  }

  async decide(quoteId: string, transaction: string): Promise<SignDecision> {
    const log = this.opts.log.child({ quoteId });
    const refuse = refuser(log);

    const parsed = deserializeFillTransaction(transaction);
    if (!parsed.ok) return refuse(FillRejectCode.MALFORMED_TRANSACTION, parsed.problem);
    const tx = parsed.tx;
    const messageBytes = tx.message.serialize();
    const messageHash = messageBytesHash(messageBytes);

    let quote: Awaited<ReturnType<QuoteStore["get"]>>;
    try {
      quote = await this.opts.store.get(quoteId);
    } catch (e) {
      return refuse(SignerRefusalCode.SIGNER_STORE_UNAVAILABLE, `quote store: ${(e as Error).message}`, {
        messageHash,
      });
    }
    if (!quote)
      return refuse(SwapRefusalCode.QUOTE_NOT_FOUND, `no quote ${quoteId} in the store`, { messageHash });

    const { held, validation } = this.#validate(tx, messageHash, quote);
    if (!validation.ok) {
      return refuse(validation.code, validation.context, { messageHash, rule: validation.rule });
    }
    const sigs = checkTakerSignatures(tx, messageBytes, validation.fill.makerSlot);
    if (!sigs.ok) return refuse(sigs.code, sigs.context, { messageHash });
    // An issued token's rules (src/policy/trade.ts) hold on the fill too, not only on its companion: a
    // fill signed alone would pay a stranger out of held inventory. Its daily cap is the companion's.
    const issued = this.#issuedFill(quote, validation.fill);
    if (!issued.ok) return refuse(issued.code, issued.context, { messageHash });

    const judged = this.#judgeTrade(
      {
        mintIn: quote.request.tokenIn,
        amountIn: BigInt(quote.response.amountIn),
        mintOut: quote.request.tokenOut,
        amountOut: BigInt(quote.response.amountOut),
      },
      "fill",
      refuse,
      { messageHash },
    );
    if (!judged.ok) return judged.refused;

    return this.#recordAndSign({
      refuse,
      log,
      recordId: quoteId,
      what: `quote ${quoteId}`,
      signing: { tx, messageBytes, messageHash, held },
      judged,
    });
  }

  /**
   * An RFQ v2 swap the webhook's channel was offered (src/rfq-v2/): judged from its own bytes. The
   * structure as the webhook judges it (checkV2Route: one route_v2 with one RFQ v2 leg, the maker's
   * key the read-only signer at slot 1 and the leg's fill authority, its token accounts nowhere else,
   * the expected programs) on the full key list, its lookup tables read by the signer itself through
   * its own chain reader (never the webhook's resolution), only top-level programs an offered swap
   * holds, the taker's signature, expire_at within the configured level
   * validity, the swap within the level set the webhook `claimed` (its word, checked, never priced
   * by); then what the maker pays and receives by the program's walk of the swap's own levels against
   * the per-fill limit and the pair's band around the signer's own mid, and the record: one landable
   * message per swap id, never the same message twice, the minute, the day and the day's loss.
   */
  async decideV2(swapUuid: string, transaction: string, claimed: ClaimedLevelsWire): Promise<SignDecision> {
    const log = this.opts.log.child({ swapUuid, channel: "rfq-v2" });
    const refuse = refuser(log);
    const tx = decodeSwapTransaction(transaction);
    if ("code" in tx) return refuse(tx.code, tx.context);
    const messageBytes = tx.message.serialize();
    const messageHash = messageBytesHash(messageBytes);
    const tables = tx.message.addressTableLookups.length;
    if (tables > 0 && !this.#lookups)
      return refuse(
        SignerRefusalCode.SIGNER_V2_LOOKUP_TABLES,
        `the swap loads accounts from ${tables} lookup table(s), and the signer has no chain reader (SIGNER_RPC_URL) to resolve them`,
        { messageHash },
      );
    // The webhook resolved the tables too, but the signer reads them itself: it trusts only the bytes.
    const resolved = this.#lookups
      ? await this.#lookups.resolve(tx.message)
      : { ok: true as const, accountKeys: tx.message.staticAccountKeys };
    if (!resolved.ok) return refuse(resolved.code, resolved.context, { messageHash, tables });
    const keys = resolved.accountKeys;
    // The maker signs slot 1 (checkV2Route requires it): the held key named there, else the active one.
    const held = this.#keys.find((k) => keys[1]?.equals(k.publicKey)) ?? (this.#keys[0] as HeldKey);
    const route = checkV2Route({ tx, accountKeys: keys, maker: held.publicKey, pairs: this.#v2Pairs });
    if (!route.ok) {
      // The signer's pairs are its bands: a pair without one is its NO_PRICE_BAND, not "not streamed".
      const code =
        route.code === V2RejectCode.V2_PAIR_NOT_STREAMED
          ? SignerRefusalCode.SIGNER_NO_PRICE_BAND
          : route.code;
      return refuse(code, route.context, { messageHash });
    }
    const { leg } = route;
    const stranger = unexpectedProgram(
      tx.message.compiledInstructions.map((ix) => keys[ix.programIdIndex] as PublicKey),
    );
    if (stranger)
      return refuse(
        FillRejectCode.INVALID_PROGRAM,
        `instruction ${stranger.index} runs ${stranger.program}, not a program an offered swap holds`,
        { messageHash },
      );
    const sigs = checkTakerSignatures(tx, messageBytes, 1);
    if (!sigs.ok) return refuse(sigs.code, sigs.context, { messageHash });
    const expiry = expiryProblem(
      leg.expireAt,
      this.now(),
      this.opts.config.file.rfqV2.quoteExpirySeconds,
      Number(this.opts.expiryGraceSeconds ?? 5n),
    );
    if (expiry) return refuse(V2RejectCode.V2_EXPIRED, expiry, { messageHash });
    const claim = claimProblem(leg, claimed);
    if (claim)
      return refuse(SignerRefusalCode.SIGNER_V2_LEVELS_NOT_CLAIMED, claim, {
        messageHash,
        sequence: claimed.sequence,
      });
    const trade = makerTrade(leg);
    if (trade.lots === 0n)
      return refuse(V2RejectCode.V2_INVALID_AMOUNTS, `${leg.inAmount} buys no whole lot`, { messageHash });
    // The rules every channel shares (src/policy/trade.ts): an issued token's holder rules (buying or
    // selling it), switches and per-fill cap, on the swap's own walk; its daily cap in the record below.
    // The taker's standing (toxicity) is n/a here: its lists live in the webhook's state, not the signer's.
    const ruled = issuedTrade(
      this.#issuance,
      {
        taker: leg.taker.toBase58(),
        tokenIn: trade.mintIn,
        amountIn: trade.amountIn,
        tokenOut: trade.mintOut,
        amountOut: trade.amountOut,
      },
      undefined,
      this.now(),
    );
    if (!ruled.ok) return refuse(ruled.code, ruled.context, { messageHash });

    const judged = this.#judgeTrade(trade, "swap", refuse, { messageHash }, { sequence: claimed.sequence });
    if (!judged.ok) return judged.refused;
    if (ruled.need) {
      const capped = await this.#recordV2Issuance(ruled.need, messageHash);
      if (capped) return refuse(capped.code, capped.context, { messageHash });
    }
    return this.#recordAndSign({
      refuse,
      log,
      recordId: `v2:${swapUuid}`,
      what: `swap ${swapUuid}`,
      signing: { tx, messageBytes, messageHash, held },
      judged,
      logExtra: {
        side: leg.takerSide,
        received: trade.amountIn.toString(),
        sequence: claimed.sequence,
        taker: leg.taker.toBase58(),
        // Lookup tables the signer read the swap's keys from (0: static keys only).
        tables,
      },
    });
  }

  /** A v1 fill's issued token: holders, switches and the per-fill cap, as /swap judges them (checks.ts). */
  #issuedFill(quote: StoredQuote, fill: { taker: PublicKey; inputAmount: bigint; outputAmount: bigint }) {
    const { tokenIn, tokenOut } = quote.request;
    return issuedTrade(
      this.#issuance,
      {
        taker: fill.taker.toBase58(),
        tokenIn,
        amountIn: fill.inputAmount,
        tokenOut,
        amountOut: fill.outputAmount,
      },
      undefined,
      this.now(),
    );
  }

  /**
   * An issued token's units a v2 swap moves, counted in the signer's own record against the issuer's
   * daily cap (mints with the companions' own count; burns, the taker selling, in a count of their
   * own), once per message: the same message offered again is counted once, and refused by the record
   * that follows (SIGNER_ALREADY_SIGNED).
   */
  async #recordV2Issuance(need: IssuanceNeed, messageHash: string): Promise<Refusal | undefined> {
    const record = this.opts.issuer?.ledger ?? this.opts.issuanceRecord;
    if (!record)
      return {
        code: SignerRefusalCode.SIGNER_STORE_UNAVAILABLE,
        context: "the signer has no issuance record to hold the issuer's daily cap",
      };
    const mint = need.issued.token.mint;
    let recorded: Awaited<ReturnType<SignerIssuanceLedger["record"]>>;
    try {
      recorded = await record.record({
        quoteId: `v2:${messageHash}`,
        mint: need.direction === "mint" ? mint : `${mint}:burn`,
        amount: need.amount,
        dailyCap: need.issued.maxPerDay,
        nowMs: this.now(),
      });
    } catch (e) {
      return {
        code: SignerRefusalCode.SIGNER_STORE_UNAVAILABLE,
        context: `signer record: ${(e as Error).message}`,
      };
    }
    if (recorded !== "dailyCap") return undefined;
    return {
      code: SwapRefusalCode.ISSUANCE_CAP_EXCEEDED,
      context: `${need.direction === "mint" ? "selling" : "buying"} ${need.amount} ${need.issued.token.symbol} would cross the issuer's daily cap of ${need.issued.maxPerDay} (the signer's record)`,
    };
  }

  /**
   * What the maker pays out against its per-fill limit, then the trade against the pair's band around
   * the signer's own mid: the limits, the band and the verdict the record needs, or the refusal.
   */
  #judgeTrade(
    trade: BandTrade,
    what: "fill" | "swap",
    refuse: Refuse,
    extra: Record<string, unknown>,
    bandExtra: Record<string, unknown> = {},
  ): ({ ok: true } & Judged) | { ok: false; refused: SignDecision } {
    const no = (code: RefusalCode, context: string, more: Record<string, unknown> = {}) => ({
      ok: false as const,
      refused: refuse(code, context, { ...extra, ...more }),
    });
    const { mintIn, mintOut: mint, amountOut: amount } = trade;
    const limits = this.opts.limits.get(mint);
    if (!limits)
      return no(SignerRefusalCode.SIGNER_NO_LIMIT, `no signer limit is configured for the token ${mint}`);
    if (amount > limits.perFill)
      return no(
        SignerRefusalCode.SIGNER_LIMIT_PER_FILL,
        `the ${what} pays out ${amount} of ${mint}, over the per-fill limit ${limits.perFill}`,
      );
    const band = bandFor(this.opts.bands, mintIn, mint);
    if (!band)
      return no(
        SignerRefusalCode.SIGNER_NO_PRICE_BAND,
        `no signer price band is configured for the pair of ${mintIn} and ${mint}`,
      );
    const verdict = judgeBand(band, this.opts.priceSources.get(band.priceSource), trade, this.now());
    if (!verdict.ok) return no(verdict.code, verdict.context, { pair: band.pair, ...bandExtra });
    return { ok: true, limits, band, verdict, mint, amount };
  }

  /**
   * The signer's record and its windows in one atomic step (the message never signed before; one
   * landable message per quote or swap, another only once the first one's blockhash has expired; the
   * minute, the day and the day's loss), then the signature. Shared by v1 fills and v2 swaps.
   */
  async #recordAndSign(a: {
    refuse: Refuse;
    log: Logger;
    /** The record's key: a v1 quoteId, or "v2:<swapUuid>". */
    recordId: string;
    /** How the refusals name it. */
    what: string;
    signing: Signing;
    judged: Judged;
    logExtra?: Record<string, unknown>;
  }): Promise<SignDecision> {
    const { refuse, log, recordId: quoteId } = a;
    const { tx, messageBytes, messageHash, held } = a.signing;
    const { mint, amount, limits, band, verdict } = a.judged;
    // One script takes the records and the windows; only when the quote is held by another message is
    // that message looked at (can it still land?), and the script run again to replace it if not.
    const spend = (replaces?: QuoteRecord) =>
      this.opts.ledger.recordAndSpend({
        messageHash,
        quoteId,
        blockhash: tx.message.recentBlockhash,
        // Stryker disable next-line ConditionalExpression: { replaces: undefined } is no replaces to the ledger (it tests the field's truth)
        ...(replaces ? { replaces } : {}),
        mint,
        amount,
        loss: verdict.loss,
        limits,
        nowMs: this.now(),
      });
    let spent: Awaited<ReturnType<SignerLedger["recordAndSpend"]>>;
    try {
      spent = await spend();
      if (spent === "quoteSignedForAnother") {
        const prior = await this.opts.ledger.quoteRecord(quoteId);
        if (prior && prior.messageHash !== messageHash) {
          const landable = await this.mayStillLand(prior);
          if (landable !== false) {
            return refuse(
              SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED,
              `${a.what} was signed for another message (${prior.messageHash}) that ${landable === true ? "can still land (its blockhash is valid)" : `may still land (${landable})`}`,
              { messageHash, signedMessageHash: prior.messageHash },
            );
          }
          spent = await spend(prior);
        }
      }
    } catch (e) {
      return refuse(SignerRefusalCode.SIGNER_STORE_UNAVAILABLE, `signer record: ${(e as Error).message}`, {
        messageHash,
      });
    }
    if (spent === "alreadySigned")
      return refuse(SignerRefusalCode.SIGNER_ALREADY_SIGNED, "this message was signed before", {
        messageHash,
      });
    if (spent === "quoteSignedForAnother") {
      return refuse(
        SignerRefusalCode.SIGNER_QUOTE_ALREADY_SIGNED,
        `${a.what} was signed for another message meanwhile`,
        { messageHash },
      );
    }
    if (spent === "perMinute") {
      return refuse(
        SignerRefusalCode.SIGNER_LIMIT_PER_MINUTE,
        `paying out ${amount} of ${mint} would cross this minute's limit ${limits.perMinute}`,
        { messageHash },
      );
    }
    if (spent === "perDay") {
      return refuse(
        SignerRefusalCode.SIGNER_LIMIT_PER_DAY,
        `paying out ${amount} of ${mint} would cross today's limit ${limits.perDay}`,
        { messageHash },
      );
    }
    if (spent === "lossPerDay") {
      return refuse(
        SignerRefusalCode.SIGNER_LIMIT_LOSS_PER_DAY,
        `giving away ${verdict.loss} of ${mint} beyond the signer's price would cross today's loss limit ${limits.lossPerDay}`,
        { messageHash },
      );
    }

    const signature = bs58.encode(signEd25519(messageBytes, held.key));
    log.info(
      {
        messageHash,
        maker: held.base58,
        txSignature: signature,
        mint,
        amount: amount.toString(),
        pair: band.pair,
        mid: verdict.mid,
        loss: verdict.loss.toString(),
        ...a.logExtra,
      },
      "signed",
    );
    return { ok: true, signature, messageHash, maker: held.base58 };
  }

  /**
   * The fill rules, judged for the key held here that the transaction names as a signer (a rotation
   * signs for both): the fee payer of a plain fill, a later signer of a smart-account fill; a stranger
   * is judged against the active key, and the rules refuse it with their own code. One judgment for
   * the fill and for its companion, so a fill signed here is never refused at its mint.
   */
  #validate(tx: VersionedTransaction, messageHash: string, quote: StoredQuote) {
    const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
    const held =
      this.#keys.find((k) => signers.some((s) => s.equals(k.publicKey))) ?? (this.#keys[0] as HeldKey);
    const validation = validateFill({
      tx,
      messageHash,
      quote,
      maker: held.publicKey,
      tokens: this.opts.config.tokensByMint,
      maxFeeLamports: this.maxFeeLamports,
      raisedFeeCap: this.raisedFeeCapOf(quote.request.tokenIn, quote.request.tokenOut),
      expiryGraceSeconds: this.opts.expiryGraceSeconds ?? 5n,
    });
    return { held, validation };
  }

  /** true: the earlier message can still land; false: it cannot; a string: it cannot be told (why). */
  private async mayStillLand(prior: QuoteRecord): Promise<boolean | string> {
    const chain = this.opts.chain;
    if (!chain) return "the signer has no chain reader (SIGNER_RPC_URL) to tell";
    try {
      return await chain.isBlockhashValid(prior.blockhash);
    } catch (e) {
      return `its blockhash could not be checked: ${(e as Error).message}`;
    }
  }
}

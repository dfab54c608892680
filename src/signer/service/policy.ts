/**
 * What the signer service decides for one sign request, on its own: it trusts nothing the webhook
 * says except the quoteId and the transaction bytes.
 *  1. decode the transaction                    (MALFORMED_TRANSACTION)
 *  2. read the quote itself from the shared store (SIGNER_UNKNOWN_QUOTE, SIGNER_STORE_UNAVAILABLE)
 *  3. every fill rule (src/fill/rules/, validateFill, the webhook's very code) against that quote,
 *     with the fee payer one of the signer's own keys                  (the rule's own code)
 *  4. the taker's signature over these bytes, the maker's slot empty  (SIGNER_TAKER_SIGNATURE)
 *  5. the per-fill limit of the output token                           (SIGNER_NO_LIMIT, SIGNER_LIMIT_PER_FILL)
 *  6. never signed before, and within the minute and the day: one atomic step in Redis
 *                                      (SIGNER_ALREADY_SIGNED, SIGNER_LIMIT_PER_MINUTE, SIGNER_LIMIT_PER_DAY)
 *  7. sign the message bytes with the fee payer's key
 * Every refusal is one log line with its code; every signature one line with quoteId and message hash.
 */
import type { KeyObject } from "node:crypto";
import type { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import type { Config } from "../../../config/load.ts";
import { ed25519SigningKey, signEd25519 } from "../../crypto/ed25519.ts";
import { deserializeFillTransaction } from "../../fill/decode.ts";
import { raisedFeeCaps } from "../../fill/raised-fee-cap.ts";
import { FillRejectCode, messageBytesHash, validateFill } from "../../fill/validate.ts";
import type { Logger } from "../../observability/logger.ts";
import type { QuoteStore } from "../../quote-store/interface.ts";
import { checkTakerSignatures } from "../../swap/signatures.ts";
import { SignerRefusalCode } from "../protocol.ts";
import type { LimitTable, SignerLedger } from "./limits.ts";

export type SignDecision =
  | { ok: true; signature: string; messageHash: string; maker: string }
  | { ok: false; code: string; detail: string };

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
  /** The active key first, then the next key of a rotation (if configured). */
  keys: readonly Keypair[];
  log: Logger;
  /** Seconds a fill's expire_at may exceed the quote's expiry (the webhook's default, 5). */
  expiryGraceSeconds?: bigint;
  now?: () => number;
}

export class SigningPolicy {
  readonly #keys: HeldKey[];
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
    this.maxFeeLamports = BigInt(opts.config.file.limits.maxFeeLamports);
    this.raisedFeeCapOf = raisedFeeCaps(opts.config);
    this.now = opts.now ?? Date.now;
  }

  /** The key new webhooks quote with, then every key the signer signs for. */
  keys(): { active: string; keys: string[] } {
    return { active: this.#keys[0]!.base58, keys: this.#keys.map((k) => k.base58) };
  }

  async decide(quoteId: string, transaction: string): Promise<SignDecision> {
    const log = this.opts.log.child({ quoteId });
    const refuse = (code: string, detail: string, extra: Record<string, unknown> = {}): SignDecision => {
      log.warn({ code, detail, ...extra }, "signature refused");
      return { ok: false, code, detail };
    };

    const parsed = deserializeFillTransaction(transaction);
    if (!parsed.ok) return refuse(FillRejectCode.MALFORMED_TRANSACTION, parsed.problem);
    const tx = parsed.tx;
    const messageBytes = tx.message.serialize();
    const messageHash = messageBytesHash(messageBytes);

    let quote: Awaited<ReturnType<QuoteStore["get"]>>;
    try {
      quote = await this.opts.store.get(quoteId);
    } catch (e) {
      return refuse(SignerRefusalCode.STORE_UNAVAILABLE, `quote store: ${(e as Error).message}`, {
        messageHash,
      });
    }
    if (!quote)
      return refuse(SignerRefusalCode.UNKNOWN_QUOTE, `no quote ${quoteId} in the store`, { messageHash });

    // The signer key held here picks the key (a rotation signs for both): the fee payer of a plain
    // fill, a later signer of a smart-account fill; a stranger is judged against the active key, and
    // the rules refuse it with their own code.
    const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
    const held = this.#keys.find((k) => signers.some((s) => s.equals(k.publicKey))) ?? this.#keys[0]!;
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
    if (!validation.ok) {
      return refuse(validation.code, validation.detail, { messageHash, rule: validation.rule });
    }
    const sigs = checkTakerSignatures(tx, messageBytes, validation.fill.makerSlot);
    if (!sigs.ok) return refuse(SignerRefusalCode.TAKER_SIGNATURE, sigs.detail, { messageHash });

    const mint = quote.request.tokenOut;
    const amount = BigInt(quote.response.amountOut);
    const limits = this.opts.limits.get(mint);
    if (!limits) {
      return refuse(SignerRefusalCode.NO_LIMIT, `no signer limit is configured for the token ${mint}`, {
        messageHash,
      });
    }
    if (amount > limits.perFill) {
      return refuse(
        SignerRefusalCode.LIMIT_PER_FILL,
        `the fill pays out ${amount} of ${mint}, over the per-fill limit ${limits.perFill}`,
        { messageHash },
      );
    }
    let spent: Awaited<ReturnType<SignerLedger["recordAndSpend"]>>;
    try {
      spent = await this.opts.ledger.recordAndSpend({
        messageHash,
        quoteId,
        mint,
        amount,
        limits,
        nowMs: this.now(),
      });
    } catch (e) {
      return refuse(SignerRefusalCode.STORE_UNAVAILABLE, `signer record: ${(e as Error).message}`, {
        messageHash,
      });
    }
    if (spent === "alreadySigned")
      return refuse(SignerRefusalCode.ALREADY_SIGNED, "this message was signed before", { messageHash });
    if (spent === "perMinute") {
      return refuse(
        SignerRefusalCode.LIMIT_PER_MINUTE,
        `paying out ${amount} of ${mint} would cross this minute's limit ${limits.perMinute}`,
        { messageHash },
      );
    }
    if (spent === "perDay") {
      return refuse(
        SignerRefusalCode.LIMIT_PER_DAY,
        `paying out ${amount} of ${mint} would cross today's limit ${limits.perDay}`,
        { messageHash },
      );
    }

    const signature = bs58.encode(signEd25519(messageBytes, held.key));
    log.info(
      { messageHash, maker: held.base58, txSignature: signature, mint, amount: amount.toString() },
      "signed",
    );
    return { ok: true, signature, messageHash, maker: held.base58 };
  }
}

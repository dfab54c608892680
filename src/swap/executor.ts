/**
 * The swap executor: POST /swap's real answer. Decides one fill transaction for one quote and, when
 * everything holds, co-signs it as fee payer and sends it (docs/contract.md, "POST /swap").
 *
 * The steps, in order (this list is the one reference: src/swap/README.md and the README link here):
 *  1. decode the bytes, hash the message          (CPU only; garbage never reaches the store)
 *  2. look up the quote; requestId must match     (unknown quote -> rejected)
 *  3. validate the fill against the quote         (validateFill: every rule of src/fill/rules/, named)
 *  4. verify the taker's signature, empty maker slot (bad signature -> signatureVerificationFailed)
 *     the taker's standing (toxicity.enabled)     (an indicative quote, asked with no taker, filled by
 *                                                   a flagged or denied taker -> botActivityDetected;
 *                                                   judged on the signed-for taker, before any claim,
 *                                                   so nothing is signed, sent or burned)
 *  5. BIND the message to this quote               (QuoteStore.bindMessage: a message already bound to
 *                                                   another quote is refused, before any claim)
 *     CLAIM the quote for this message hash       (QuoteStore.claim, SET NX: the exactly-once step)
 *  6. check time, blockhash and funds              (the quote's expiry and expire_at (+1 s safety)
 *                                                   against chain time: QUOTE_EXPIRED; the recent
 *                                                   blockhash from the background cache, one
 *                                                   isBlockhashValid for an unknown one:
 *                                                   BLOCKHASH_NOT_FOUND, BLOCKHASH_AGE_EXCEEDED; the
 *                                                   taker's balances read from the chain:
 *                                                   insufficientBalance, insufficientBalanceForAtaCreation)
 *  7. reserve maker inventory                      (the quoted amountOut)
 *  8. pre-flight, sign, send                       (simulate the fill WITHOUT the maker's signature
 *                                                   (limits.preflightSimulation; sigVerify off): a
 *                                                   failure is SIMULATION_FAILED, nothing is signed or
 *                                                   sent, the claim and reservation are released; then
 *                                                   co-sign (a remote signer re-checks the fill itself
 *                                                   and may refuse with its own code), journal, send,
 *                                                   answer accepted + txSignature)
 * Every answer after the claim is recorded on it (QuoteStore.recordOutcome), except a failed
 * pre-flight's: nothing was sent, so the quote is given back (QuoteStore.releaseClaim) and a corrected
 * transaction, or the same one once the chain allows it, may still fill it.
 *
 * Validation and the signature check run BEFORE the claim: only a transaction that is a valid fill
 * for this quote AND carries the taker's own signature can claim it. A tampered or forged transaction
 * is refused without touching the claim, so it cannot burn a legitimate user's quote. Everything that
 * depends on time or chain state runs AFTER the claim, so a retry of the same bytes always gets the
 * first answer: re-checking balances after the first fill landed, or the clock after the quote
 * expired, would otherwise turn a retried acceptance into a rejection. Expiry is judged there once,
 * against chain time (the clock the program checks expire_at against). Once claimed, every answer is
 * recorded on the claim, whatever it is: a quote is decided once.
 *
 * One message serves one quote. Re-quotes of an unchanged price have identical terms, so a fill the
 * taker signed for one quote is also a valid fill for the next; the chain would take it once (same
 * signature), but a second acceptance would commit the inventory and book the operator's fee twice
 * when that one signature lands. So the message hash is bound to the first quote it is presented
 * with, before the quote's claim, so a replay burns nothing.
 *
 * A duplicate (same quoteId, same message hash) gets the recorded answer; if the first is still in
 * flight the duplicate polls the store for it, bounded well inside the budget. A different message
 * for a claimed quote is refused.
 *
 * Every port call is bounded by what is left of the budget (default 20 s of the operator's 25 s), so
 * a store or chain that never answers yields a rejection with a reason, never a hung request. After
 * the maker has signed, a send that fails ambiguously (the RPC reset after the request went out) is
 * not answered yet: the chain port looks for the signature on every endpoint and sends again within
 * the send step, so a fill the chain took is `accepted`; a rejection says whether the transaction
 * reached the chain. Either way the fill stays journaled and tracked, and the inventory reservation
 * settles on what the chain shows (released as soon as the blockhash has expired without it).
 */
import { createHash } from "node:crypto";
import type { VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { Config } from "../../config/load.ts";
import type { Inventory } from "../../inventory/interface.ts";
import { utcDay } from "../../inventory/issuance/interface.ts";
import type { Chain, SendResult } from "../chain/interface.ts";
import { RecentBlockhashes } from "../chain/recent-blockhashes.ts";
import {
  accepted,
  type RejectionReason,
  refusedAnswer,
  type SwapRequest,
  type SwapResponse,
} from "../contract/swap.ts";
import { deserializeFillTransaction } from "../fill/decode.ts";
import { raisedFeeCaps } from "../fill/raised-fee-cap.ts";
import { type FillValidation, messageBytesHash, type ValidatedFill, validateFill } from "../fill/validate.ts";
import type { IssuanceNeed } from "../issuance/policy.ts";
import type { IssuancePorts } from "../issuance/ports.ts";
import { decisionKey } from "../ledger/ledger.ts";
import { pairSide } from "../ledger/pairs.ts";
import type { DecisionRecord } from "../ledger/records.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { QuoteStore, StoredQuote } from "../quote-store/interface.ts";
import {
  FillRejectCode,
  isRefusalCode,
  type Refusal,
  refusal,
  SwapRefusalCode as S,
} from "../refusal/codes.ts";
import { type Signer, SignerRefusal } from "../signer/index.ts";
import type { TakerStanding } from "../toxicity/interface.ts";
import { Budget, bounded, sleep } from "./bounded.ts";
import type { ConfirmationTracker } from "./confirmations.ts";
import { expiryRefusal } from "./expiry.ts";
import type { FillRate, SwapDecisionKind } from "./fill-rate.ts";
import type { SwapHandler } from "./handler.ts";
import type { FillJournal, PendingFill } from "./journal/interface.ts";
import { checkTakerSignatures } from "./signatures.ts";
import { checkTakerFunds } from "./taker-funds.ts";

/** Per-step caps (ms); each is further cut to what is left of the swap's budget. */
export interface SwapStepTimeouts {
  store: number;
  chainRead: number;
  inventory: number;
  journal: number;
  simulate: number;
  send: number;
}

export interface SwapExecutorOptions {
  config: Config;
  store: QuoteStore;
  chain: Chain;
  inventory: Inventory;
  signer: Signer;
  confirmations: ConfirmationTracker;
  fillRate?: FillRate;
  /**
   * The background cache of recent blockhashes (started by the caller). Default: one over `chain`,
   * polled on first use only.
   */
  blockhashes?: RecentBlockhashes;
  /** Total time one swap may take before it answers, ms (the operator waits 25 s). Default 20,000. */
  budgetMs?: number;
  steps?: Partial<SwapStepTimeouts>;
  /** Interval between store polls while a duplicate waits for the first request's answer, ms. */
  inFlightPollMs?: number;
  /** expire_at must be at least this far ahead of chain time when we sign (s): landing takes time. */
  expirySafetySeconds?: bigint;
  /**
   * Seconds expire_at may exceed the quote's expiry. The operator stamps expire_at from its own clock
   * when it builds the fill, a moment after we answered; without slack, a second of clock skew would
   * refuse every fill. Default 5.
   */
  expiryGraceSeconds?: bigint;
  /** How long the inventory reservation lives unsettled (ms) before lapsing on its own. */
  reservationTtlMs?: number;
  /** How long confirmations are polled after sending (ms), past any blockhash's life. */
  trackForMs?: number;
  /**
   * The journal whose ledger outbox receives one decision record per answer (src/ledger/): appended
   * without waiting, so the ledger never slows the answer. Unset: no ledger.
   */
  ledgerJournal?: FillJournal;
  /** Logs a failed outbox append (the answer is unaffected). */
  log?: Logger;
  /**
   * The toxic-flow controls' view of the takers (toxicity.enabled; read in memory): a fill of an
   * indicative quote by a flagged or denied taker is refused botActivityDetected. Unset: never.
   */
  takers?: Pick<TakerStanding, "standing">;
  /** Counts those refusals (`rfq_toxic_swaps_rejected_total`). */
  metrics?: Metrics;
  /**
   * Permissioned tokens the maker issues: holder rules, issuance caps (reserved at claim time like
   * inventory), and the companion mint or burn sent with the fill as one bundle (see signAndBundle).
   */
  issuance?: IssuancePorts;
  now?: () => number;
}

export const DEFAULT_SWAP_BUDGET_MS = 20_000;

/** Time kept back from the chain port's send so that its own answer arrives inside the step (ms). */
const SEND_MARGIN_MS = 250;

/** A failed send in words that say what happened to the transaction. */
function sendFailureText(r: SendResult): string {
  if (r.ok) return "";
  switch (r.reached) {
    case "no":
      return `the transaction did not reach the chain: ${r.error}`;
    case "unknown":
      return `the transaction did not reach the chain as far as any RPC endpoint shows (${r.error})`;
    default:
      return `the chain refused the transaction: ${r.error}`;
  }
}

const DEFAULT_STEPS: SwapStepTimeouts = {
  store: 2_000,
  chainRead: 5_000,
  inventory: 2_000,
  journal: 2_000,
  simulate: 5_000,
  send: 10_000,
};

/** An answer and how it counts toward the fill rate (undefined: not counted, e.g. a duplicate). */
interface Decision {
  response: SwapResponse;
  kind: SwapDecisionKind | undefined;
  /** Nothing was sent: give the quote back instead of recording this answer on its claim. */
  releaseClaim?: boolean;
  /** A duplicate answered from the claim: the first request's decision is the ledger's. */
  duplicate?: boolean;
  /** Why the fill was refused, as a value (the answer's text is rendered from it). */
  refusal?: Refusal;
}

/** What `decide` learned on the way, for the ledger's decision record. */
interface Seen {
  /** When the request arrived (ms epoch). */
  receivedAtMs?: number;
  messageHash?: string;
  quote?: StoredQuote;
  fill?: ValidatedFill;
}

const HONEST: ReadonlySet<RejectionReason> = new Set([
  "insufficientBalance",
  "insufficientBalanceForAtaCreation",
  "signatureVerificationFailed",
  "botActivityDetected",
]);

/** What the claim holder works with in steps 6 to 8. */
interface Held {
  req: SwapRequest;
  quote: StoredQuote;
  tx: VersionedTransaction;
  fill: ValidatedFill;
  budget: Budget;
  log: Logger;
  /** What the request revealed so far (for its ledger record). */
  seen: Seen;
  /** The issuer's part of this fill (mint before it, burn after it); undefined for an ordinary fill. */
  need?: IssuanceNeed;
}

const decided = (response: SwapResponse): Decision => {
  const s = response.state;
  const kind: SwapDecisionKind =
    s === "accepted"
      ? "accepted"
      : typeof s === "object" && HONEST.has(s.rejectedWithReason)
        ? "honestRejection"
        : "rejected";
  return { response, kind };
};

const refused = (req: SwapRequest, r: Refusal): Decision => ({
  ...decided(refusedAnswer(req.quoteId, r)),
  refusal: r,
});

export class SwapExecutor implements SwapHandler {
  private readonly budgetMs: number;
  private readonly steps: SwapStepTimeouts;
  private readonly inFlightPollMs: number;
  private readonly expirySafetySeconds: bigint;
  private readonly expiryGraceSeconds: bigint;
  private readonly reservationTtlMs: number;
  private readonly trackForMs: number;
  private readonly maxFeeLamports: bigint;
  private readonly raisedFeeCapOf: ReturnType<typeof raisedFeeCaps>;
  private readonly blockhashes: RecentBlockhashes;
  private readonly minBlockhashBlocksLeft: bigint;
  private readonly preflight: boolean;
  private readonly now: () => number;

  constructor(private readonly opts: SwapExecutorOptions) {
    this.budgetMs = opts.budgetMs ?? DEFAULT_SWAP_BUDGET_MS;
    this.steps = { ...DEFAULT_STEPS, ...opts.steps };
    this.inFlightPollMs = opts.inFlightPollMs ?? 100;
    this.expirySafetySeconds = opts.expirySafetySeconds ?? 1n;
    this.expiryGraceSeconds = opts.expiryGraceSeconds ?? 5n;
    this.reservationTtlMs = opts.reservationTtlMs ?? 180_000;
    this.trackForMs = opts.trackForMs ?? 180_000;
    this.maxFeeLamports = BigInt(opts.config.file.limits.maxFeeLamports);
    this.raisedFeeCapOf = raisedFeeCaps(opts.config);
    this.blockhashes = opts.blockhashes ?? new RecentBlockhashes(opts.chain);
    this.minBlockhashBlocksLeft = BigInt(opts.config.file.limits.minBlockhashBlocksLeft);
    this.preflight = opts.config.file.limits.preflightSimulation;
    this.now = opts.now ?? Date.now;
  }

  async execute(req: SwapRequest, log: Logger): Promise<SwapResponse> {
    const receivedAtMs = this.now();
    const budget = new Budget(receivedAtMs + this.budgetMs, this.now);
    const seen: Seen = { receivedAtMs };
    let decision: Decision;
    try {
      decision = await this.decide(req, log, budget, seen);
    } catch (err) {
      // A bug, not a verdict on the transaction: answer honestly rather than with a 500 the operator
      // reads as "webhook down". Nothing was sent if we got here before send.
      log.error({ err }, "swap executor failed unexpectedly");
      decision = refused(req, refusal(S.INTERNAL_ERROR, "internal error while processing the swap"));
    }
    if (decision.kind) this.opts.fillRate?.recordDecision(decision.kind);
    if (!decision.duplicate) this.journalDecision(req, decision, seen, receivedAtMs);
    return decision.response;
  }

  /** Appends the decision to the ledger outbox without waiting for it (the answer goes out now). */
  private journalDecision(req: SwapRequest, decision: Decision, seen: Seen, receivedAtMs: number): void {
    const journal = this.opts.ledgerJournal;
    if (!journal) return;
    const record = decisionRecord(this.opts.config, req, decision, seen, receivedAtMs, this.now());
    journal.appendLedger(record).catch((err: unknown) => {
      this.opts.log?.warn(
        { quoteId: req.quoteId, requestId: req.requestId, err },
        "ledger outbox append failed: this decision is missing from the ledger",
      );
    });
  }

  private async decide(req: SwapRequest, routeLog: Logger, budget: Budget, seen: Seen): Promise<Decision> {
    const { quoteId } = req;

    // 1. Bytes -> transaction -> message hash.
    const parsed = deserializeFillTransaction(req.transaction);
    if (!parsed.ok) return refused(req, refusal(FillRejectCode.MALFORMED_TRANSACTION, parsed.problem));
    const tx = parsed.tx;
    const messageBytes = tx.message.serialize();
    const messageHash = messageBytesHash(messageBytes);
    seen.messageHash = messageHash;
    const log = routeLog.child({ messageHash });

    // 2. The quote.
    const got = await bounded(() => this.opts.store.get(quoteId), budget.forStep(this.steps.store));
    if (!got.ok) {
      log.warn({ error: got.error }, "quote store read failed");
      return refused(req, storeUnavailable(got));
    }
    const quote = got.value;
    if (!quote) {
      const why = `unknown quote ${quoteId} (never quoted here, or forgotten long after expiry)`;
      return refused(req, refusal(S.QUOTE_NOT_FOUND, why));
    }
    if (quote.requestId !== req.requestId) {
      const why = `requestId ${req.requestId} does not match the quote's requestId ${quote.requestId}`;
      return refused(req, refusal(S.INVALID_REQUEST_ID, why));
    }
    seen.quote = quote;

    // 3. Every contract rule, against the quote. Time is judged after the claim (step 6).
    const validation = this.validate(tx, quote, messageHash);
    this.countPriceRaise(validation);
    if (!validation.ok) {
      log.info(
        { code: validation.code, rule: validation.rule, detail: validation.context },
        "fill refused by validation",
      );
      return refused(req, refusal(validation.code, validation.context));
    }
    seen.fill = validation.fill;

    // 4. The taker's signature over exactly these message bytes; the maker's slot empty.
    const sigs = checkTakerSignatures(tx, messageBytes, validation.fill.makerSlot);
    if (!sigs.ok) {
      log.info({ detail: sigs.detail }, "fill refused: signatures");
      const code =
        sigs.kind === "signatureInvalid" ? S.SIGNATURE_VERIFICATION_FAILED : S.INVALID_MAKER_SIGNATURE_SLOT;
      return refused(req, refusal(code, sigs.detail));
    }

    // 4b. A quote asked with no taker is priced blind; its filler, now known and signed for, must not
    // be one the toxic-flow controls flagged or denied (a firm quote already answered for its taker).
    const bot = this.botActivity(req, quote, validation.fill, log);
    if (bot) return bot;

    // 4c. Issued tokens: the holder rules and the issuer's own limits, judged on the message alone.
    const issuance = this.issuanceOf(req, quote, validation.fill, log);
    if (issuance && "response" in issuance) return issuance;
    const need = issuance?.need;

    // 5. Bind the message, claim the quote; a refusal or a duplicate's answer ends here.
    const notHeld = await this.bindAndClaim(req, messageHash, budget, log);
    if (notHeld) return notHeld;

    // From here on this caller alone holds the quote; every answer is recorded on the claim.
    const held: Held = {
      req,
      quote,
      tx,
      fill: validation.fill,
      budget,
      log,
      seen,
      ...(need ? { need } : {}),
    };
    const decision =
      (await this.checkTimeAndFunds(held)) ?? (await this.reserve(held)) ?? (await this.signAndSend(held));
    if (decision.releaseClaim) {
      const released = await bounded(
        () => this.opts.store.releaseClaim(quoteId, messageHash),
        Math.max(budget.forStep(this.steps.store), 250),
      );
      if (!released.ok) log.warn({ error: released.error }, "could not release the claim of an unsent fill");
      return decision;
    }
    const recorded = await bounded(
      () => this.opts.store.recordOutcome(quoteId, decision.response),
      Math.max(budget.forStep(this.steps.store), 250),
    );
    if (!recorded.ok) log.warn({ error: recorded.error }, "could not record the swap outcome on its claim");
    return decision;
  }

  /** Step 4b: botActivityDetected for a flagged or denied taker filling an indicative quote. */
  private botActivity(
    req: SwapRequest,
    quote: StoredQuote,
    fill: ValidatedFill,
    log: Logger,
  ): Decision | undefined {
    const takers = this.opts.takers;
    if (!takers || quote.taker !== undefined) return undefined;
    const taker = fill.taker.toBase58();
    const standing = takers.standing(taker, this.now());
    if (standing.kind !== "flagged" && standing.kind !== "denied") return undefined;
    this.opts.metrics?.toxicSwapsRejected.inc({ standing: standing.kind });
    log.warn(
      { taker, quoteId: quote.quoteId, standing: standing.kind, why: standing.entry.reason },
      "swap refused: botActivityDetected (a flagged or denied taker filling an indicative quote)",
    );
    const why = `taker ${taker} is ${standing.kind === "flagged" ? "flagged for toxic flow" : "on the deny list"}`;
    return refused(req, refusal(S.BOT_ACTIVITY_DETECTED, why));
  }

  /**
   * Step 4c, for a pair with a token the maker issues: the taker must be an allowed holder
   * (`HOLDER_NOT_ALLOWED`), the direction switched on and the amount under the per-fill cap, and a
   * bundle engine must be there. What is minted is what leaves the maker (the fill's output amount),
   * what is burned what arrives (its input amount). A refusal here burns no quote: it depends on the
   * message only. Undefined: not an issued pair.
   */
  private issuanceOf(
    req: SwapRequest,
    quote: StoredQuote,
    fill: ValidatedFill,
    log: Logger,
  ): Decision | { need: IssuanceNeed } | undefined {
    const iss = this.opts.issuance;
    if (!iss) return undefined;
    const { tokenIn, tokenOut } = quote.request;
    if (!iss.policies.of(tokenIn) && !iss.policies.of(tokenOut)) return undefined;
    const holder = iss.policies.holderRefusal(tokenIn, tokenOut, fill.taker.toBase58());
    const checked =
      holder ??
      iss.policies.check(
        { tokenIn, tokenOut, amountIn: fill.inputAmount, amountOut: fill.outputAmount },
        undefined,
        this.now(),
      );
    if (!checked.ok) {
      log.info({ code: checked.reason, detail: checked.detail }, "fill refused: issuance");
      return refused(req, refusal(checked.reason, checked.detail));
    }
    if (!checked.need) return undefined;
    if (!iss.bundles) {
      const why = iss.unavailable ?? "no bundle engine is configured";
      return refused(req, refusal(S.ISSUANCE_UNAVAILABLE, why));
    }
    return { need: checked.need };
  }

  /** Step 5: the message bound to this quote, then the claim; undefined when this caller holds it. */
  private async bindAndClaim(
    req: SwapRequest,
    messageHash: string,
    budget: Budget,
    log: Logger,
  ): Promise<Decision | undefined> {
    const { quoteId } = req;
    // 5a. One message, one quote (see the file comment).
    const bound = await bounded(
      () => this.opts.store.bindMessage(messageHash, quoteId),
      budget.forStep(this.steps.store),
    );
    if (!bound.ok) {
      log.warn({ error: bound.error }, "message binding failed");
      return refused(req, storeUnavailable(bound));
    }
    if (bound.value !== quoteId) {
      log.warn({ firstQuoteId: bound.value }, "fill replayed under another quote");
      const why = `the transaction was already submitted for another quote (${bound.value})`;
      return refused(req, refusal(S.MESSAGE_BOUND_TO_OTHER_QUOTE, why));
    }

    // 5b. The exactly-once step.
    const claim = await bounded(
      () => this.opts.store.claim(quoteId, messageHash, this.now()),
      budget.forStep(this.steps.store),
    );
    if (!claim.ok) {
      log.warn({ error: claim.error }, "quote claim failed");
      return refused(req, storeUnavailable(claim));
    }
    if (claim.value.kind === "taken") {
      const existing = claim.value.existing;
      if (existing.messageHash !== messageHash) {
        log.warn({ claimedHash: existing.messageHash }, "quote already claimed by a different transaction");
        return refused(
          req,
          refusal(S.QUOTE_ALREADY_CLAIMED, "quote already claimed by a different transaction"),
        );
      }
      const first = existing.outcome ?? (await this.awaitOutcome(quoteId, messageHash, budget, log));
      log.info({ duplicate: true, state: first?.state }, "duplicate swap: answering the first outcome");
      return {
        response:
          first ??
          refusedAnswer(
            quoteId,
            refusal(
              S.DUPLICATE_IN_FLIGHT,
              "an earlier request for this quote is still in flight; retry later",
            ),
          ),
        kind: undefined,
        duplicate: true,
      };
    }

    return undefined;
  }

  /**
   * Step 6: chain time, the recent blockhash and the taker's funds, read together; a refusal, or
   * nothing when all hold.
   */
  private async checkTimeAndFunds({
    req,
    quote,
    tx,
    fill,
    budget,
    log,
  }: Held): Promise<Decision | undefined> {
    const chainStep = budget.forStep(this.steps.chainRead);
    const [chainTime, funds, blockhash] = await Promise.all([
      bounded(() => this.opts.chain.getUnixTimestamp(), chainStep),
      checkTakerFunds(this.opts.chain, fill, chainStep),
      bounded(
        () => this.blockhashes.check(tx.message.recentBlockhash, this.minBlockhashBlocksLeft),
        chainStep,
      ),
    ]);
    if (!chainTime.ok) {
      return refused(
        req,
        refusal(S.CHAIN_CLOCK_UNAVAILABLE, `could not read the chain clock: ${chainTime.error}`),
      );
    }
    const expired = expiryRefusal({
      quoteExpiresAtMs: quote.expiresAtMs,
      expireAt: fill.expireAt,
      chainTime: chainTime.value,
      safetySeconds: this.expirySafetySeconds,
    });
    if (expired) {
      log.info(
        { code: FillRejectCode.QUOTE_EXPIRED, rule: "expiry", detail: expired },
        "fill refused: expired",
      );
      return refused(req, refusal(FillRejectCode.QUOTE_EXPIRED, expired));
    }
    if (!blockhash.ok) {
      const why = `could not check the recent blockhash: ${blockhash.error}`;
      return refused(req, refusal(S.BLOCKHASH_CHECK_UNAVAILABLE, why));
    }
    if (!blockhash.value.ok) {
      const code =
        blockhash.value.kind === "notFound"
          ? FillRejectCode.BLOCKHASH_NOT_FOUND
          : FillRejectCode.BLOCKHASH_AGE_EXCEEDED;
      log.info({ rule: code, detail: blockhash.value.detail }, "fill refused: recent blockhash");
      return refused(req, refusal(code, blockhash.value.detail));
    }
    if (!funds.ok) {
      log.info({ code: funds.code, detail: funds.detail }, "taker cannot be shown to pay");
      return refused(req, refusal(funds.code, funds.detail));
    }
    return undefined;
  }

  /** Step 7: maker inventory; the whole quoted amountOut leaves (the fee part is owed to the operator). */
  private async reserve({ req, quote, fill, budget, log, need }: Held): Promise<Decision | undefined> {
    const { quoteId } = req;
    // A minted output is not held inventory: its units are reserved in the issuance book below.
    const outAmount = need?.direction === "mint" ? 0n : BigInt(quote.response.amountOut);
    const reserved = await bounded(
      () =>
        this.opts.inventory.reserve({
          quoteId,
          mint: quote.request.tokenOut,
          amount: outAmount,
          inputMint: quote.request.tokenIn,
          inputAmount: fill.inputAmount,
          expiresAtMs: this.now() + this.reservationTtlMs,
        }),
      budget.forStep(this.steps.inventory),
    );
    if (!reserved.ok) {
      // A reserve that timed out may still land later: release so nothing is stranded.
      void this.releaseQuietly(quoteId);
      log.info({ detail: reserved.error }, "maker inventory unavailable");
      return refused(req, refusal(S.INVENTORY_UNAVAILABLE, `inventory unavailable: ${reserved.error}`));
    }
    if (!reserved.value.ok) {
      const { reason, detail } = reserved.value;
      log.info({ code: reason, detail }, "maker inventory refused the fill");
      return refused(req, refusal(reason, detail));
    }
    if (need) {
      const refusal = await this.reserveIssuance(req, need, budget, log);
      if (refusal) return refusal;
    }
    if (budget.left() < 250) {
      await this.releaseQuietly(quoteId);
      return refused(req, refusal(S.BUDGET_EXCEEDED, "the swap ran out of its time budget before signing"));
    }
    return undefined;
  }

  /**
   * Step 7b: the issuance the bundle will mint or burn, reserved under the daily cap in one atomic step
   * shared by every instance; nothing is minted without it.
   */
  private async reserveIssuance(
    req: SwapRequest,
    need: IssuanceNeed,
    budget: Budget,
    log: Logger,
  ): Promise<Decision | undefined> {
    const book = (this.opts.issuance as IssuancePorts).book;
    const got = await bounded(
      () =>
        book.reserve({
          quoteId: req.quoteId,
          mint: need.issued.token.mint,
          direction: need.direction,
          amount: need.amount,
          dailyCap: need.issued.maxPerDay,
          day: utcDay(this.now()),
        }),
      budget.forStep(this.steps.inventory),
    );
    if (got.ok && got.value.ok) return undefined;
    await this.releaseQuietly(req.quoteId);
    const why = got.ok
      ? refusal(S.ISSUANCE_CAP_EXCEEDED, (got.value as { detail: string }).detail)
      : refusal(S.ISSUANCE_STORE_UNAVAILABLE, `issuance unavailable: ${got.error}`);
    log.info({ code: why.code, detail: why.context }, "issuance refused the fill");
    return refused(req, why);
  }

  /**
   * Step 8: pre-flight, co-sign, journal, send, answer. Any refusal before the send releases the
   * reservation; a failed pre-flight also gives the quote back (Decision.releaseClaim).
   */
  private async signAndSend(held: Held): Promise<Decision> {
    const { req, tx, fill, budget, log, need } = held;
    const { quoteId } = req;
    // Defence in depth: never sign a message whose fee payer is not our key (a smart-account fill's
    // is a member, never us), nor one where our key is not the signer in the maker's slot.
    const makerSlot = fill.makerSlot;
    const payerIsMaker = tx.message.staticAccountKeys[0]?.equals(this.opts.signer.publicKey) ?? false;
    if (
      payerIsMaker === (fill.smartAccount !== undefined) ||
      makerSlot >= tx.message.header.numRequiredSignatures ||
      !tx.message.staticAccountKeys[makerSlot]?.equals(this.opts.signer.publicKey)
    ) {
      await this.releaseQuietly(quoteId);
      const why = "the fee payer or the maker's slot is not as validated";
      return refused(req, refusal(FillRejectCode.INVALID_FEE_PAYER, why));
    }
    // 8a. Simulate before anyone signs: a refused fill never gets a maker signature, so none is in a
    // log or in the request an RPC receives. A bundle is judged as a whole instead (signAndBundle).
    if (this.preflight && !need) {
      const refusal = await this.preflightRefusal(req, tx, budget, log);
      if (refusal) {
        await this.releaseQuietly(quoteId);
        return refusal;
      }
    }
    // 8b. Sign: only a fill that passed every rule and the pre-flight.
    try {
      await this.opts.signer.sign(tx, { quoteId });
    } catch (err) {
      await this.releaseQuietly(quoteId);
      if (err instanceof SignerRefusal) {
        log.warn({ code: err.code, detail: err.detail }, "fill refused by the signer");
        return refused(
          req,
          isRefusalCode(err.code)
            ? refusal(err.code, err.detail)
            : refusal(S.SIGNER_REFUSED, `${err.code}: ${err.detail}`),
        );
      }
      // The signer could not be asked (or did not answer): nothing was sent, so the quote is given
      // back; the signer's own record refuses another message for it while this one could land.
      log.warn({ error: (err as Error).message }, "the maker signature could not be produced");
      return {
        ...refused(
          req,
          refusal(
            S.SIGNATURE_UNAVAILABLE,
            `the maker signature could not be produced: ${(err as Error).message}`,
          ),
        ),
        releaseClaim: true,
      };
    }
    const makerSig = tx.signatures[makerSlot];
    if (!makerSig || makerSig.every((b) => b === 0)) {
      await this.releaseQuietly(quoteId);
      return refused(req, refusal(S.SIGNATURE_UNAVAILABLE, "the maker signature could not be produced"));
    }
    // The transaction's id is its first signature: the maker's in a plain fill, the paying member's in
    // a smart-account fill (as the toolkit's server example answers it).
    const txSignature = bs58.encode(tx.signatures[0] as Uint8Array);
    const slog = log.child({ txSignature });
    if (need) return this.signAndBundle(held, need, txSignature, slog);

    // Journal first (a crash after the send still finds the fill), then send.
    const pending = this.pendingOf(held, txSignature);
    const journaled = await this.opts.confirmations.record(
      pending,
      budget.forStep(this.steps.journal, 1_000),
    );
    // The chain port gets the step's time less a margin: an ambiguous failure is looked up and retried
    // in there, and its answer must come back before this bound cuts it off.
    const sendMs = budget.forStep(this.steps.send);
    const sent = await bounded(
      () => this.opts.chain.send(tx, { timeoutMs: Math.max(0, sendMs - SEND_MARGIN_MS) }),
      sendMs,
    );
    const accept = sent.ok && sent.value.ok;
    // Whatever the send said, the chain decides the reservation: a timed-out send may still land. An
    // accepted swap is counted here, so its fill-rate entry can be settled when the chain decides.
    const token = accept ? this.opts.fillRate?.recordDecision("accepted") : undefined;
    this.opts.confirmations.watch(pending, { journaled, ...(token ? { token } : {}) });
    if (!accept) {
      const why = sent.ok
        ? sendFailureText(sent.value)
        : sent.timedOut
          ? `the chain did not acknowledge the transaction in time (${sent.error})`
          : `sending failed: ${sent.error}`;
      slog.warn({ detail: why }, "fill not sent");
      return refused(req, refusal(S.SEND_FAILED, why));
    }
    slog.info(
      {
        inputAmount: fill.inputAmount.toString(),
        outputAmount: fill.outputAmount.toString(),
        feeOwed: fill.feeOwed.toString(),
        feeMint: fill.feeMint.toBase58(),
      },
      "fill co-signed and sent",
    );
    return { response: accepted(quoteId, txSignature), kind: undefined };
  }

  /** The journal's entry for a fill about to be sent (its fee line and, for markouts, the trade). */
  private pendingOf({ req, quote, tx, fill, seen }: Held, txSignature: string): PendingFill {
    const { quoteId } = req;
    const pending: PendingFill = {
      quoteId,
      requestId: req.requestId,
      messageHash: fill.messageHash,
      signature: txSignature,
      blockhash: tx.message.recentBlockhash,
      sentAtMs: this.now(),
      trackUntilMs: this.now() + this.trackForMs,
      fee: { mint: fill.feeMint.toBase58(), amount: fill.feeOwed.toString(), feeBps: fill.feeBps },
    };
    const where = pairSide(this.opts.config, quote.request.tokenIn, quote.request.tokenOut);
    if (where) {
      // The maker's trade: the quoted amounts (the operator's fee is part of what the maker gives or keeps).
      const { amountIn, amountOut } = quote.response;
      pending.trade = {
        pair: where.pair,
        side: where.side,
        taker: fill.taker.toBase58(),
        baseAmount: where.side === "sell" ? amountOut : amountIn,
        quoteAmount: where.side === "sell" ? amountIn : amountOut,
      };
    }
    // The acceptance this fill answers if the send succeeds, journaled with it (see PendingFill.decision).
    if (this.opts.ledgerJournal) {
      pending.decision = decisionRecord(
        this.opts.config,
        req,
        { response: accepted(quoteId, txSignature) },
        seen,
        seen.receivedAtMs ?? this.now(),
        this.now(),
      );
    }
    return pending;
  }

  /**
   * Step 8 for a fill of a token the maker issues (docs/contract.md, "Permissioned tokens"): the fill's
   * message is fixed, so the mint (before it) or the burn (after it) and the engine's tip go in the
   * maker's own companion transaction, and both are sent as one bundle through the bundle port: they
   * land together or not at all. No pre-flight: a fill of a minted token fails alone by design (the
   * maker holds none before the mint), and the bundle is what runs. Journaled first like any fill; the
   * tracker follows the fill's signature and the bundle's status, and settles the inventory and the
   * issuance reservations together.
   */
  private async signAndBundle(
    held: Held,
    need: IssuanceNeed,
    txSignature: string,
    slog: Logger,
  ): Promise<Decision> {
    const { req, tx, fill, budget } = held;
    const { quoteId } = req;
    const iss = this.opts.issuance as IssuancePorts;
    const bundles = iss.bundles as NonNullable<IssuancePorts["bundles"]>;
    const tips = await bounded(() => bundles.getTipAccounts(), budget.forStep(this.steps.chainRead));
    if (!tips.ok || tips.value.length === 0) {
      await this.releaseQuietly(quoteId);
      const why = tips.ok ? "it listed none" : tips.error;
      slog.warn({ detail: why }, "fill not sent: no tip account");
      const context = `the bundle engine's tip accounts could not be read (${why}); not sent`;
      return refused(req, refusal(S.ISSUANCE_UNAVAILABLE, context));
    }
    const tipAccount = tips.value[
      Math.floor(Math.random() * tips.value.length)
    ] as (typeof tips.value)[number];
    let companion: VersionedTransaction;
    try {
      companion = await iss.companions.make({
        need,
        fill: tx,
        makerTokenAccount:
          need.direction === "mint" ? fill.makerOutputTokenAccount : fill.makerInputTokenAccount,
        tipAccount,
        quoteId,
      });
    } catch (err) {
      await this.releaseQuietly(quoteId);
      slog.warn(
        { error: (err as Error).message },
        "fill not sent: the companion transaction could not be signed",
      );
      const why = `the ${need.direction} transaction could not be signed: ${(err as Error).message}; not sent`;
      return refused(req, refusal(S.COMPANION_UNAVAILABLE, why));
    }
    const pending = this.pendingOf(held, txSignature);
    const journaled = await this.opts.confirmations.record(
      pending,
      budget.forStep(this.steps.journal, 1_000),
    );
    const txs = need.direction === "mint" ? [companion, tx] : [tx, companion];
    const sendMs = budget.forStep(this.steps.send);
    const sent = await bounded(
      () => bundles.sendBundle(txs, { timeoutMs: Math.max(0, sendMs - SEND_MARGIN_MS) }),
      sendMs,
    );
    const accept = sent.ok && sent.value.ok;
    if (sent.ok && sent.value.ok) pending.bundleId = sent.value.bundleId;
    const token = accept ? this.opts.fillRate?.recordDecision("accepted") : undefined;
    // Whatever the engine said, the chain decides: the reservations settle when the fill lands, the
    // bundle fails, or the blockhash expires.
    this.opts.confirmations.watch(pending, { journaled, ...(token ? { token } : {}) });
    if (!accept) {
      const why = sent.ok
        ? `the bundle was not accepted: ${(sent.value as { error: string }).error}`
        : `the bundle engine did not answer in time (${sent.error})`;
      slog.warn({ detail: why }, "fill not sent");
      return refused(req, refusal(S.BUNDLE_FAILED, why));
    }
    slog.info(
      {
        bundleId: pending.bundleId,
        issuance: need.direction,
        issuedAmount: need.amount.toString(),
        inputAmount: fill.inputAmount.toString(),
        outputAmount: fill.outputAmount.toString(),
        tipAccount: tipAccount.toBase58(),
      },
      "fill co-signed and sent in a bundle with the issuer's " + need.direction,
    );
    return { response: accepted(quoteId, txSignature), kind: undefined };
  }

  /**
   * Simulates the fill before the maker signs it (Chain.preflight: signatures not verified, the
   * blockhash checked); a refusal when it would fail or cannot be simulated. An honest rejection: the
   * answer names the simulated error, and the claim is given back, since nothing was signed or sent.
   */
  private async preflightRefusal(
    req: SwapRequest,
    tx: VersionedTransaction,
    budget: Budget,
    log: Logger,
  ): Promise<Decision | undefined> {
    const sim = await bounded(() => this.opts.chain.preflight(tx), budget.forStep(this.steps.simulate));
    if (sim.ok && sim.value.ok) return undefined;
    const why = refusal(
      FillRejectCode.SIMULATION_FAILED,
      sim.ok
        ? `the transaction fails in simulation: ${(sim.value as { error: string }).error}`
        : `the pre-flight simulation could not run (${sim.error}); not sent`,
    );
    log.warn(
      {
        rule: FillRejectCode.SIMULATION_FAILED,
        detail: why.context,
        logs: sim.ok ? sim.value.logs.slice(-8) : undefined,
      },
      "fill not sent: pre-flight simulation failed",
    );
    return { ...refused(req, why), releaseClaim: true };
  }

  /** Releases a reservation, ignoring failure: it lapses on its own expiry anyway. */
  private releaseQuietly(quoteId: string): Promise<void> {
    const quiet = (p: Promise<void>) =>
      p.then(
        () => undefined,
        () => undefined,
      );
    const book = this.opts.issuance?.book;
    return Promise.all([
      quiet(this.opts.inventory.release(quoteId)),
      book ? quiet(book.release(quoteId)) : undefined,
    ]).then(() => undefined);
  }

  private validate(tx: VersionedTransaction, quote: StoredQuote, messageHash: string): FillValidation {
    return validateFill({
      tx,
      messageHash,
      quote,
      maker: this.opts.signer.publicKey,
      tokens: this.opts.config.tokensByMint,
      maxFeeLamports: this.maxFeeLamports,
      raisedFeeCap: this.raisedFeeCapOf(quote.request.tokenIn, quote.request.tokenOut),
      expiryGraceSeconds: this.expiryGraceSeconds,
    });
  }

  /** rfq_priority_fee_raises_total: a fill priced above its quote, accepted within the cap or refused. */
  private countPriceRaise(v: FillValidation): void {
    const metrics = this.opts.metrics;
    if (!metrics) return;
    if (v.ok) {
      if (v.fill.priceRaised) metrics.priorityFeeRaises.inc({ outcome: "accepted" });
    } else if (
      v.code === FillRejectCode.RAISED_FEE_CAP_EXCEEDED ||
      v.code === FillRejectCode.COMPUTE_UNIT_PRICE_EXCEEDED
    ) {
      metrics.priorityFeeRaises.inc({ outcome: "refused" });
    }
  }

  /** Polls the claim until the first request records its answer, or the budget (less 1 s) runs out. */
  private async awaitOutcome(
    quoteId: string,
    messageHash: string,
    budget: Budget,
    log: Logger,
  ): Promise<SwapResponse | undefined> {
    while (budget.left() > 1_000 + this.inFlightPollMs) {
      await sleep(this.inFlightPollMs);
      const res = await bounded(
        () => this.opts.store.claim(quoteId, messageHash, this.now()),
        budget.forStep(this.steps.store, 1_000),
      );
      if (!res.ok) continue;
      if (res.value.kind === "claimed") {
        // The first request gave the quote back (its pre-flight failed, nothing was sent) or its
        // claim lapsed: this caller now holds a fresh claim it did not validate for; give it back too.
        await this.opts.store.releaseClaim(quoteId, messageHash).catch(() => false);
        const why = "the earlier request for this quote was not sent and released it; retry";
        return refusedAnswer(quoteId, refusal(S.DUPLICATE_IN_FLIGHT, why));
      }
      if (res.value.existing.outcome) return res.value.existing.outcome;
      // The first request may be gone (its process killed after sending): if this process has seen
      // the fill decided on chain (tracked, or resumed from the journal after a restart), that is
      // the answer, and it is recorded for later duplicates.
      const known = this.opts.confirmations.known(quoteId);
      if (known && known.state !== "pending" && known.fill.messageHash === messageHash) {
        const sig = known.fill.signature;
        const answer =
          known.state === "landed"
            ? accepted(quoteId, sig)
            : refusedAnswer(
                quoteId,
                refusal(
                  S.DUPLICATE_NOT_LANDED,
                  `the transaction ${sig} ${known.state === "expired" ? "expired before it landed" : "failed on chain"}`,
                ),
              );
        log.info(
          { txSignature: sig, state: known.state },
          "duplicate swap: answered from the fill's settled outcome",
        );
        await this.opts.store.recordOutcome(quoteId, answer).catch(() => undefined);
        return answer;
      }
    }
    log.warn("duplicate swap: the first request's answer did not arrive within the budget");
    return undefined;
  }
}

/** The ledger's record of one answer (src/ledger/records.ts). */
export function decisionRecord(
  config: Config,
  req: SwapRequest,
  { response, refusal }: Pick<Decision, "response" | "refusal">,
  seen: Seen,
  receivedAtMs: number,
  decidedAtMs: number,
): DecisionRecord {
  const { quote, fill } = seen;
  const hash = seen.messageHash ?? createHash("sha256").update(req.transaction).digest("hex");
  const state = response.state;
  const where = quote ? pairSide(config, quote.request.tokenIn, quote.request.tokenOut) : undefined;
  const taker = fill?.taker.toBase58() ?? quote?.taker;
  return {
    kind: "decision",
    decisionKey: decisionKey(req.quoteId, hash),
    quoteId: req.quoteId,
    requestId: req.requestId,
    ...(taker ? { taker } : {}),
    ...(where ? { pair: where.pair, side: where.side } : {}),
    ...(quote
      ? {
          quote: {
            inputMint: quote.request.tokenIn,
            outputMint: quote.request.tokenOut,
            amountIn: quote.response.amountIn,
            amountOut: quote.response.amountOut,
            quoteType: quote.request.quoteType,
            ...(quote.taker ? { taker: quote.taker } : {}),
            feeBps: quote.feeBps,
            createdAtMs: quote.createdAtMs,
            expiresAtMs: quote.expiresAtMs,
          },
        }
      : {}),
    ...(fill
      ? {
          filledAmountIn: fill.inputAmount.toString(),
          filledAmountOut: fill.outputAmount.toString(),
          feeBps: fill.feeBps,
          feeMint: fill.feeMint.toBase58(),
          feeOwed: fill.feeOwed.toString(),
        }
      : {}),
    decision: state === "accepted" ? "accepted" : state === "rejected" ? "rejected" : "rejectedWithReason",
    ...(refusal ? { refusal } : {}),
    ...(seen.messageHash ? { messageHash: seen.messageHash } : {}),
    ...(response.txSignature ? { txSignature: response.txSignature } : {}),
    receivedAtMs,
    decidedAtMs,
  };
}

/**
 * The operator-facing reason for a quote store that failed: what happened in plain words (the Redis
 * client's own text, e.g. "Stream isn't writeable and enableOfflineQueue options is false", stays in
 * the log line beside it).
 */
function storeUnavailable(failed: { timedOut: boolean; error: string }): Refusal {
  const why = failed.timedOut
    ? `quote store unavailable: ${failed.error}`
    : /circuit open/i.test(failed.error)
      ? "quote store unavailable: failing fast while it is down"
      : "quote store unavailable: Redis could not be reached";
  return refusal(S.QUOTE_STORE_UNAVAILABLE, why);
}

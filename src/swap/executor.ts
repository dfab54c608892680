/**
 * The swap executor: POST /swap's real answer. Decides one fill transaction for one quote and, when
 * everything holds, co-signs it as fee payer and sends it (docs/contract.md, "POST /swap"). Each step
 * is a file of ./steps/; the order, and why it is this order, is here.
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
 *     an issued token's holder rules and limits    (steps 1 to 4: steps/checks.ts)
 *  5. BIND the message to this quote               (QuoteStore.bindMessage: a message already bound to
 *                                                   another quote is refused, before any claim)
 *     CLAIM the quote for this message hash       (QuoteStore.claim, SET NX: the exactly-once step;
 *                                                   steps/claim.ts)
 *  6. check time, blockhash and funds              (the quote's expiry and expire_at (+1 s safety)
 *                                                   against chain time: QUOTE_EXPIRED; the recent
 *                                                   blockhash from the background cache, one
 *                                                   isBlockhashValid for an unknown one:
 *                                                   BLOCKHASH_NOT_FOUND, BLOCKHASH_AGE_EXCEEDED; the
 *                                                   taker's balances read from the chain:
 *                                                   insufficientBalance, insufficientBalanceForAtaCreation;
 *                                                   steps/chain-checks.ts)
 *  7. reserve maker inventory                      (the quoted amountOut, and an issued token's
 *                                                   issuance; steps/reserve.ts)
 *  8. pre-flight, sign, send                       (simulate the fill WITHOUT the maker's signature
 *                                                   (limits.preflightSimulation; sigVerify off): a
 *                                                   failure is SIMULATION_FAILED, nothing is signed or
 *                                                   sent, the claim and reservation are released; then
 *                                                   co-sign (a remote signer re-checks the fill itself
 *                                                   and may refuse with its own code), journal, send,
 *                                                   answer accepted + txSignature; steps/send.ts, and
 *                                                   the bundle of an issued token src/issuance/bundle.ts)
 *  9. settle the claim                             (steps/settle.ts)
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
import type { Config } from "../../config/load.ts";
import type { SwapRequest, SwapResponse } from "../contract/swap.ts";
import { raisedFeeCaps } from "../fill/raised-fee-cap.ts";
import { type DecisionSeen, decisionRecord } from "../ledger/decision.ts";
import { Budget } from "../lib/bounded.ts";
import type { Logger } from "../observability/logger.ts";
import { refusal, SwapRefusalCode } from "../refusal/codes.ts";
import type { SwapHandler } from "./handler.ts";
import { checkTimeAndFunds } from "./steps/chain-checks.ts";
import { checkBeforeClaim } from "./steps/checks.ts";
import { bindAndClaim } from "./steps/claim.ts";
import { reserve } from "./steps/reserve.ts";
import { signAndSend } from "./steps/send.ts";
import { settleClaim } from "./steps/settle.ts";
import {
  type Decision,
  type Held,
  refused,
  type StepPorts,
  type SwapSettings,
  type SwapStepTimeouts,
} from "./steps/step.ts";

export type { StepPorts, SwapSettings, SwapStepTimeouts };

/**
 * The swap's tunables as a caller gives them; swapSettings applies the defaults. The fields are those
 * of SwapSettings (see there) that have a default.
 */
export interface SwapTuning {
  /** Default 20,000 (the operator waits 25 s). */
  budgetMs?: number;
  steps?: Partial<SwapStepTimeouts>;
  /** Default 100. */
  inFlightPollMs?: number;
  /** Default 1. */
  expirySafetySeconds?: bigint;
  /** Default 5. */
  expiryGraceSeconds?: bigint;
  /** Default 180,000. */
  reservationTtlMs?: number;
  /** Default 180,000. */
  trackForMs?: number;
  /** Default Date.now. */
  now?: () => number;
}

export const DEFAULT_SWAP_BUDGET_MS = 20_000;

const DEFAULT_STEPS: SwapStepTimeouts = {
  store: 2_000,
  chainRead: 5_000,
  inventory: 2_000,
  journal: 2_000,
  simulate: 5_000,
  send: 10_000,
};

/** The swap's settings: the configuration's limits and the tunables, every default applied here. */
export function swapSettings(config: Config, tuning: SwapTuning = {}): SwapSettings {
  const limits = config.file.limits;
  return {
    config,
    budgetMs: tuning.budgetMs ?? DEFAULT_SWAP_BUDGET_MS,
    steps: { ...DEFAULT_STEPS, ...tuning.steps },
    inFlightPollMs: tuning.inFlightPollMs ?? 100,
    expirySafetySeconds: tuning.expirySafetySeconds ?? 1n,
    expiryGraceSeconds: tuning.expiryGraceSeconds ?? 5n,
    reservationTtlMs: tuning.reservationTtlMs ?? 180_000,
    trackForMs: tuning.trackForMs ?? 180_000,
    maxFeeLamports: BigInt(limits.maxFeeLamports),
    raisedFeeCapOf: raisedFeeCaps(config),
    minBlockhashBlocksLeft: BigInt(limits.minBlockhashBlocksLeft),
    preflight: limits.preflightSimulation,
    now: tuning.now ?? Date.now,
  };
}

export class SwapExecutor implements SwapHandler {
  /** The ports and the settings (swapSettings), each kept as given. */
  constructor(
    private readonly ports: StepPorts,
    private readonly settings: SwapSettings,
  ) {}

  async execute(req: SwapRequest, log: Logger): Promise<SwapResponse> {
    const { now } = this.settings;
    const receivedAtMs = now();
    const budget = new Budget(receivedAtMs + this.settings.budgetMs, now);
    const seen: DecisionSeen = { receivedAtMs };
    let decision: Decision;
    try {
      decision = await this.decide(req, log, budget, seen);
    } catch (err) {
      // A bug, not a verdict on the transaction: answer honestly rather than with a 500 the operator
      // reads as "webhook down". Nothing was sent if we got here before send.
      log.error({ err }, "swap executor failed unexpectedly");
      decision = refused(
        req,
        refusal(SwapRefusalCode.INTERNAL_ERROR, "internal error while processing the swap"),
      );
    }
    if (decision.kind) this.ports.fillRate?.recordDecision(decision.kind);
    if (!decision.duplicate) this.journalDecision(req, decision, seen, receivedAtMs);
    return decision.response;
  }

  /** The steps, in order: the first that answers ends the request. */
  private async decide(req: SwapRequest, log: Logger, budget: Budget, seen: DecisionSeen): Promise<Decision> {
    const { ports: p, settings: s } = this;
    const checked = await checkBeforeClaim(p, s, req, log, budget, seen);
    if ("response" in checked) return checked;
    const { tx, messageHash, quote, fill, need } = checked;
    const notHeld = await bindAndClaim(p, s, req, messageHash, budget, checked.log);
    if (notHeld) return notHeld;
    // From here on this caller alone holds the quote; every answer is settled on the claim.
    const held: Held = { req, quote, tx, fill, budget, log: checked.log, seen, ...(need ? { need } : {}) };
    const decision =
      (await checkTimeAndFunds(p, s, held)) ?? (await reserve(p, s, held)) ?? (await signAndSend(p, s, held));
    await settleClaim(p, s, req.quoteId, messageHash, decision, budget, checked.log);
    return decision;
  }

  /** Appends the decision to the ledger outbox without waiting for it (the answer goes out now). */
  private journalDecision(
    req: SwapRequest,
    decision: Decision,
    seen: DecisionSeen,
    receivedAtMs: number,
  ): void {
    const journal = this.ports.ledgerJournal;
    if (!journal) return;
    const record = decisionRecord(
      this.settings.config,
      req,
      decision,
      seen,
      receivedAtMs,
      this.settings.now(),
    );
    // Stryker disable next-line ArrowFunction,BlockStatement: the handler only logs the failure (the answer and the outbox are the same either way)
    journal.appendLedger(record).catch((err: unknown) => {
      this.ports.log?.warn(
        { quoteId: req.quoteId, requestId: req.requestId, err },
        "ledger outbox append failed: this decision is missing from the ledger",
      );
    });
  }
}

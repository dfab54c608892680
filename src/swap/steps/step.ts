/**
 * What the swap's steps (this folder) share: the ports and settings they run with, the request as
 * far as it has come, and the decision a step ends it with. The order of the steps is executor.ts.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../../config/load.ts";
import type { Inventory } from "../../../inventory/interface.ts";
import type { Chain } from "../../chain/interface.ts";
import type { RecentBlockhashes } from "../../chain/recent-blockhashes.ts";
import { honestTag, refusedAnswer, type SwapRequest, type SwapResponse } from "../../contract/swap.ts";
import type { RaisedFeeCap } from "../../fill/raised-fee-cap.ts";
import type { ValidatedFill } from "../../fill/validate.ts";
import type { IssuanceNeed } from "../../issuance/policy.ts";
import type { IssuancePorts } from "../../issuance/ports.ts";
import type { FillJournal } from "../../journal/interface.ts";
import type { DecisionSeen } from "../../ledger/decision.ts";
import type { Budget } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Metrics } from "../../observability/metrics.ts";
import type { QuoteStore, StoredQuote } from "../../quote-store/interface.ts";
import type { Refusal } from "../../refusal/codes.ts";
import type { Signer } from "../../signing/port.ts";
import type { TakerStanding } from "../../toxicity/interface.ts";
import type { ConfirmationTracker } from "../confirmations.ts";
import type { FillRate, SwapDecisionKind } from "../fill-rate.ts";

/** Per-step caps (ms); each is further cut to what is left of the swap's budget. */
export interface SwapStepTimeouts {
  store: number;
  chainRead: number;
  inventory: number;
  journal: number;
  simulate: number;
  send: number;
}

/** The ports the steps call (built by src/wiring/swap-ports.ts, passed as they are). */
export interface StepPorts {
  store: QuoteStore;
  chain: Chain;
  inventory: Inventory;
  signer: Signer;
  confirmations: ConfirmationTracker;
  /** The background cache of recent blockhashes (started by the caller). */
  blockhashes: RecentBlockhashes;
  fillRate?: FillRate;
  /**
   * The journal whose ledger outbox receives one decision record per answer (src/ledger/): appended
   * without waiting, so the ledger never slows the answer. Unset: no ledger.
   */
  ledgerJournal?: FillJournal;
  /**
   * The toxic-flow controls' view of the takers (toxicity.enabled; read in memory): a fill of an
   * indicative quote by a flagged or denied taker is refused botActivityDetected. Unset: never.
   */
  takers?: Pick<TakerStanding, "standing">;
  /** Counts the toxic refusals (`rfq_toxic_swaps_rejected_total`) and the priced-up fills. */
  metrics?: Metrics;
  /**
   * Permissioned tokens the maker issues: holder rules, issuance caps (reserved at claim time like
   * inventory), and the companion mint or burn sent with the fill as one bundle (src/issuance/bundle.ts).
   */
  issuance?: IssuancePorts;
  /** Logs a failed ledger outbox append (the answer is unaffected). */
  log?: Logger;
  /**
   * Each pair's mid now (the markouts' price sources), journaled with a fill about to be sent: the 0 s
   * markout of a fill whose sender dies before it lands (src/ledger/markouts.ts). Unset: not journaled.
   */
  mids?: { liveMid(pair: string): number | undefined };
}

/** The settings every step runs with, defaults applied (swapSettings in ../executor.ts, the one place). */
export interface SwapSettings {
  config: Config;
  /** Total time one swap may take before it answers, ms (the operator waits 25 s). */
  budgetMs: number;
  steps: SwapStepTimeouts;
  /** Interval between store polls while a duplicate waits for the first request's answer, ms. */
  inFlightPollMs: number;
  /** expire_at must be at least this far ahead of chain time when we sign (s): landing takes time. */
  expirySafetySeconds: bigint;
  /**
   * Seconds expire_at may exceed the quote's expiry. The operator stamps expire_at from its own clock
   * when it builds the fill, a moment after we answered; without slack, a second of clock skew would
   * refuse every fill.
   */
  expiryGraceSeconds: bigint;
  /** How long the inventory reservation lives unsettled (ms) before lapsing on its own. */
  reservationTtlMs: number;
  /** How long confirmations are polled after sending (ms), past any blockhash's life. */
  trackForMs: number;
  maxFeeLamports: bigint;
  raisedFeeCapOf: (tokenIn: string, tokenOut: string) => RaisedFeeCap | undefined;
  minBlockhashBlocksLeft: bigint;
  /** limits.preflightSimulation: simulate the fill before the maker signs it. */
  preflight: boolean;
  /** The executor's clock (tests move it to expire quotes). */
  now: () => number;
}

/** An answer and how it counts toward the fill rate (undefined: not counted, e.g. a duplicate). */
export interface Decision {
  response: SwapResponse;
  kind: SwapDecisionKind | undefined;
  /** Nothing was sent: give the quote back instead of recording this answer on its claim. */
  releaseClaim?: boolean;
  /** A duplicate answered from the claim: the first request's decision is the ledger's. */
  duplicate?: boolean;
  /** Why the fill was refused, as a value (the answer's text is rendered from it). */
  refusal?: Refusal;
}

/** What the claim holder works with after the claim. */
export interface Held {
  req: SwapRequest;
  quote: StoredQuote;
  tx: VersionedTransaction;
  fill: ValidatedFill;
  budget: Budget;
  log: Logger;
  /** What the request revealed so far (for its ledger record). */
  seen: DecisionSeen;
  /** The issuer's part of this fill (mint before it, burn after it); undefined for an ordinary fill. */
  need?: IssuanceNeed;
}

/** A refusal's decision: the answer rendered from it, counted as honest when the contract says so. */
export const refused = (req: SwapRequest, r: Refusal): Decision => ({
  response: refusedAnswer(req.quoteId, r),
  kind: honestTag(r.code) ? "honestRejection" : "rejected",
  refusal: r,
});

/** Releases a reservation (inventory and issuance), ignoring failure: it lapses on its own expiry anyway. */
export function releaseQuietly(ports: StepPorts, quoteId: string): Promise<void> {
  const quiet = (p: Promise<void>) =>
    p.then(
      () => undefined,
      () => undefined,
    );
  const usage = ports.issuance?.usage;
  return Promise.all([
    quiet(ports.inventory.release(quoteId)),
    usage ? quiet(usage.release(quoteId)) : undefined,
  ]).then(() => undefined);
}

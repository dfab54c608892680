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
import type { Signer } from "../../keys/index.ts";
import type { DecisionSeen } from "../../ledger/decision.ts";
import type { Budget } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Metrics } from "../../observability/metrics.ts";
import type { QuoteStore, StoredQuote } from "../../quote-store/interface.ts";
import type { Refusal } from "../../refusal/codes.ts";
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

/** The ports and settings every step runs with (SwapExecutorOptions with its defaults applied). */
export interface StepPorts {
  config: Config;
  store: QuoteStore;
  chain: Chain;
  inventory: Inventory;
  signer: Signer;
  confirmations: ConfirmationTracker;
  blockhashes: RecentBlockhashes;
  steps: SwapStepTimeouts;
  fillRate: FillRate | undefined;
  ledgerJournal: FillJournal | undefined;
  takers: Pick<TakerStanding, "standing"> | undefined;
  metrics: Metrics | undefined;
  issuance: IssuancePorts | undefined;
  inFlightPollMs: number;
  expirySafetySeconds: bigint;
  expiryGraceSeconds: bigint;
  reservationTtlMs: number;
  trackForMs: number;
  maxFeeLamports: bigint;
  raisedFeeCapOf: (tokenIn: string, tokenOut: string) => RaisedFeeCap | undefined;
  minBlockhashBlocksLeft: bigint;
  preflight: boolean;
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

/**
 * Step 5: the message bound to this quote (one message serves one quote), then the quote claimed for
 * this message hash (SET NX: the exactly-once step). A duplicate of a claimed request gets the first
 * request's answer, polled for while that one is still in flight.
 */
import { accepted, refusedAnswer, type SwapRequest, type SwapResponse } from "../../contract/swap.ts";
import { type Budget, bounded, sleep } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import { bindMessageOnce } from "../../policy/messages.ts";
import { type Refusal, refusal, SwapRefusalCode as S } from "../../refusal/codes.ts";
import { type Decision, refused, type StepPorts, type SwapSettings } from "./step.ts";

/** Undefined when this caller now holds the claim; otherwise the answer that ends the request. */
export async function bindAndClaim(
  ports: StepPorts,
  settings: SwapSettings,
  req: SwapRequest,
  messageHash: string,
  budget: Budget,
  log: Logger,
): Promise<Decision | undefined> {
  const { quoteId } = req;
  // 5a. One message, one quote (see executor.ts).
  const bound = await bounded(
    () => bindMessageOnce(ports.store, messageHash, quoteId),
    budget.forStep(settings.steps.store),
  );
  if (!bound.ok) {
    log.warn({ error: bound.error }, "message binding failed");
    return refused(req, storeUnavailable(bound));
  }
  if (bound.value) {
    log.warn({ firstQuoteId: bound.value.boundTo }, "fill replayed under another quote");
    return refused(req, refusal(bound.value.code, bound.value.context));
  }

  // 5b. The exactly-once step.
  const claim = await bounded(
    () => ports.store.claim(quoteId, messageHash, settings.now()),
    budget.forStep(settings.steps.store),
  );
  if (!claim.ok) {
    log.warn({ error: claim.error }, "quote claim failed");
    return refused(req, storeUnavailable(claim));
  }
  if (claim.value.kind === "claimed") return undefined;
  const existing = claim.value.existing;
  if (existing.messageHash !== messageHash) {
    log.warn({ claimedHash: existing.messageHash }, "quote already claimed by a different transaction");
    return refused(req, refusal(S.QUOTE_ALREADY_CLAIMED, "quote already claimed by a different transaction"));
  }
  const first = existing.outcome ?? (await awaitOutcome(ports, settings, quoteId, messageHash, budget, log));
  log.info({ duplicate: true, state: first?.state }, "duplicate swap: answering the first outcome");
  const stillInFlight = "an earlier request for this quote is still in flight; retry later";
  return {
    response: first ?? refusedAnswer(quoteId, refusal(S.DUPLICATE_IN_FLIGHT, stillInFlight)),
    kind: undefined,
    duplicate: true,
  };
}

/** Polls the claim until the first request records its answer, or the budget (less 1 s) runs out. */
async function awaitOutcome(
  ports: StepPorts,
  settings: SwapSettings,
  quoteId: string,
  messageHash: string,
  budget: Budget,
  log: Logger,
): Promise<SwapResponse | undefined> {
  while (budget.left() > 1_000 + settings.inFlightPollMs) {
    await sleep(settings.inFlightPollMs);
    const res = await bounded(
      () => ports.store.claim(quoteId, messageHash, settings.now()),
      budget.forStep(settings.steps.store, 1_000),
    );
    if (!res.ok) continue;
    if (res.value.kind === "claimed") {
      // The first request gave the quote back (its pre-flight failed, nothing was sent) or its
      // claim lapsed: this caller now holds a fresh claim it did not validate for; give it back too.
      await ports.store.releaseClaim(quoteId, messageHash).catch(() => undefined);
      const why = "the earlier request for this quote was not sent and released it; retry";
      return refusedAnswer(quoteId, refusal(S.DUPLICATE_IN_FLIGHT, why));
    }
    if (res.value.existing.outcome) return res.value.existing.outcome;
    // The first request may be gone (its process killed after sending): if this process has seen
    // the fill decided on chain (tracked, or resumed from the journal after a restart), that is
    // the answer, and it is recorded for later duplicates.
    const known = ports.confirmations.known(quoteId);
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
      await ports.store.recordOutcome(quoteId, answer).catch(() => undefined);
      return answer;
    }
  }
  log.warn("duplicate swap: the first request's answer did not arrive within the budget");
  return undefined;
}

/**
 * The refusal for a quote store that failed: what happened in plain words (the Redis client's own
 * text, e.g. "Stream isn't writeable and enableOfflineQueue options is false", stays in the log line
 * beside it).
 */
export function storeUnavailable(failed: { timedOut: boolean; error: string }): Refusal {
  const why = failed.timedOut
    ? `quote store unavailable: ${failed.error}`
    : /circuit open/i.test(failed.error)
      ? "quote store unavailable: failing fast while it is down"
      : "quote store unavailable: Redis could not be reached";
  return refusal(S.QUOTE_STORE_UNAVAILABLE, why);
}

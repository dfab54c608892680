/**
 * The last step, holding the claim: the answer is recorded on it (QuoteStore.recordOutcome), so a
 * duplicate gets the same answer; or, when nothing was sent (a failed pre-flight, no maker signature),
 * the quote is given back (QuoteStore.releaseClaim) so a corrected transaction may still fill it.
 */

import { type Budget, bounded } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Decision, StepPorts, SwapSettings } from "./step.ts";

export async function settleClaim(
  ports: StepPorts,
  settings: SwapSettings,
  quoteId: string,
  messageHash: string,
  decision: Decision,
  budget: Budget,
  log: Logger,
): Promise<void> {
  const storeMs = Math.max(budget.forStep(settings.steps.store), 250);
  if (decision.releaseClaim) {
    const released = await bounded(() => ports.store.releaseClaim(quoteId, messageHash), storeMs);
    if (!released.ok) log.warn({ error: released.error }, "could not release the claim of an unsent fill");
    return;
  }
  const recorded = await bounded(() => ports.store.recordOutcome(quoteId, decision.response), storeMs);
  if (!recorded.ok) log.warn({ error: recorded.error }, "could not record the swap outcome on its claim");
}

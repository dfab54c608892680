/**
 * Step 6, holding the claim: chain time, the recent blockhash and the taker's funds, read together.
 * Judged once, after the claim, so a retry of the same bytes always gets the first answer. A read
 * that fails is asked again within the budget (`retried`): reads only, nothing is sent here.
 */

import { retried } from "../../lib/bounded.ts";
import { FillRejectCode, refusal, SwapRefusalCode as S } from "../../refusal/codes.ts";
import { expiryRefusal, unsignableFromMs } from "../expiry.ts";
import { fundsReads, type ReadAgain } from "../reads-again.ts";
import { checkTakerFunds } from "../taker-funds.ts";
import { type Decision, type Held, refused, type StepPorts, type SwapSettings } from "./step.ts";

/** What the reads' retries leave of the budget for the steps after them (reserve, pre-flight, sign, send), ms. */
export const KEPT_AFTER_READS_MS = 8_000;

/** A refusal, or nothing when all hold. */
export async function checkTimeAndFunds(
  ports: StepPorts,
  settings: SwapSettings,
  { req, quote, tx, fill, budget, log }: Held,
): Promise<Decision | undefined> {
  const chainStep = budget.forStep(settings.steps.chainRead);
  // A failed read is asked again (a request sent into a stalled RPC stays unanswered after it is
  // back) while the budget, less what the later steps need, and the fill's expiry leave time for it.
  const unsignableInMs =
    unsignableFromMs({
      quoteExpiresAtMs: quote.expiresAtMs,
      expireAt: fill.expireAt,
      safetySeconds: settings.expirySafetySeconds,
    }) - settings.now();
  const readsMs = Math.max(chainStep, Math.min(budget.left() - KEPT_AFTER_READS_MS, unsignableInMs));
  const again: ReadAgain = (read) => retried(read, readsMs, chainStep);
  const [chainTime, funds, blockhash] = await Promise.all([
    again(() => ports.chain.getUnixTimestamp()),
    checkTakerFunds(fundsReads(ports.chain, again), fill, readsMs),
    again(() => ports.blockhashes.check(tx.message.recentBlockhash, settings.minBlockhashBlocksLeft)),
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
    safetySeconds: settings.expirySafetySeconds,
  });
  if (expired) {
    log.info(
      { code: FillRejectCode.QUOTE_EXPIRED, rule: "expiry", context: expired },
      "fill refused: expired",
    );
    return refused(req, refusal(FillRejectCode.QUOTE_EXPIRED, expired));
  }
  if (!blockhash.ok) {
    const why = `could not check the recent blockhash: ${blockhash.error}`;
    return refused(req, refusal(S.BLOCKHASH_CHECK_UNAVAILABLE, why));
  }
  if (!blockhash.value.ok) {
    const { code, context } = blockhash.value;
    log.info({ rule: code, context }, "fill refused: recent blockhash");
    return refused(req, refusal(code, context));
  }
  if (!funds.ok) {
    log.info({ code: funds.code, context: funds.context }, "taker cannot be shown to pay");
    return refused(req, refusal(funds.code, funds.context));
  }
  return undefined;
}

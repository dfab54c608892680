/**
 * Step 6, holding the claim: chain time, the recent blockhash and the taker's funds, read together.
 * Judged once, after the claim, so a retry of the same bytes always gets the first answer.
 */

import { bounded } from "../../lib/bounded.ts";
import { FillRejectCode, refusal, SwapRefusalCode as S } from "../../refusal/codes.ts";
import { expiryRefusal } from "../expiry.ts";
import { checkTakerFunds } from "../taker-funds.ts";
import { type Decision, type Held, refused, type StepPorts, type SwapSettings } from "./step.ts";

/** A refusal, or nothing when all hold. */
export async function checkTimeAndFunds(
  ports: StepPorts,
  settings: SwapSettings,
  { req, quote, tx, fill, budget, log }: Held,
): Promise<Decision | undefined> {
  const chainStep = budget.forStep(settings.steps.chainRead);
  const [chainTime, funds, blockhash] = await Promise.all([
    bounded(() => ports.chain.getUnixTimestamp(), chainStep),
    checkTakerFunds(ports.chain, fill, chainStep),
    bounded(
      () => ports.blockhashes.check(tx.message.recentBlockhash, settings.minBlockhashBlocksLeft),
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

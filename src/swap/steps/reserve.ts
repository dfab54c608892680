/**
 * Step 7, holding the claim: the maker's inventory (the whole quoted amountOut leaves; the fee part is
 * owed to the operator) and, for a token the maker issues, the issuance under its daily cap.
 */
import { utcDay } from "../../../inventory/issuance/interface.ts";
import type { SwapRequest } from "../../contract/swap.ts";
import type { IssuanceNeed } from "../../issuance/policy.ts";
import type { IssuancePorts } from "../../issuance/ports.ts";
import { type Budget, bounded } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import { type Refusal, refusal, SwapRefusalCode as S } from "../../refusal/codes.ts";
import {
  type Decision,
  type Held,
  refused,
  releaseQuietly,
  type StepPorts,
  type SwapSettings,
} from "./step.ts";

/** A refusal (the reservations released), or nothing when all is reserved. */
export async function reserve(
  ports: StepPorts,
  settings: SwapSettings,
  { req, quote, fill, budget, log, need }: Held,
): Promise<Decision | undefined> {
  const { quoteId } = req;
  // A minted output is not held inventory: its units are reserved as issuance below.
  const outAmount = need?.direction === "mint" ? 0n : BigInt(quote.response.amountOut);
  const reserved = await bounded(
    () =>
      ports.inventory.reserve({
        quoteId,
        mint: quote.request.tokenOut,
        amount: outAmount,
        inputMint: quote.request.tokenIn,
        inputAmount: fill.inputAmount,
        expiresAtMs: settings.now() + settings.reservationTtlMs,
      }),
    budget.forStep(settings.steps.inventory),
  );
  if (!reserved.ok) {
    // A reserve that timed out may still land later: release so nothing is stranded.
    void releaseQuietly(ports, quoteId);
    log.info({ detail: reserved.error }, "maker inventory unavailable");
    return refused(req, refusal(S.INVENTORY_UNAVAILABLE, `inventory unavailable: ${reserved.error}`));
  }
  if (!reserved.value.ok) {
    const { code, context } = reserved.value;
    log.info({ code, context }, "maker inventory refused the fill");
    return refused(req, refusal(code, context));
  }
  if (need) {
    const refusal = await reserveIssuance(ports, settings, req, need, budget, log);
    if (refusal) return refusal;
  }
  if (budget.left() < 250) {
    await releaseQuietly(ports, quoteId);
    return refused(req, refusal(S.BUDGET_EXCEEDED, "the swap ran out of its time budget before signing"));
  }
  return undefined;
}

/**
 * The issuance the bundle will mint or burn, reserved under the daily cap in one atomic step shared
 * by every instance; nothing is minted without it.
 */
async function reserveIssuance(
  ports: StepPorts,
  settings: SwapSettings,
  req: SwapRequest,
  need: IssuanceNeed,
  budget: Budget,
  log: Logger,
): Promise<Decision | undefined> {
  // A need comes only from the issuance ports (checks.ts).
  const usage = (ports.issuance as IssuancePorts).usage;
  const got = await bounded(
    () =>
      usage.reserve({
        quoteId: req.quoteId,
        mint: need.issued.token.mint,
        direction: need.direction,
        amount: need.amount,
        dailyCap: need.issued.maxPerDay,
        day: utcDay(settings.now()),
      }),
    budget.forStep(settings.steps.inventory),
  );
  let why: Refusal;
  if (!got.ok) why = refusal(S.ISSUANCE_STORE_UNAVAILABLE, `issuance unavailable: ${got.error}`);
  else if (!got.value.ok) why = refusal(got.value.code, got.value.context);
  else return undefined;
  await releaseQuietly(ports, req.quoteId);
  log.info({ code: why.code, context: why.context }, "issuance refused the fill");
  return refused(req, why);
}

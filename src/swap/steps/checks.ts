/**
 * Steps 1 to 4, before the claim: the bytes decoded and the message hashed, the quote looked up, every
 * fill rule (validateFill), the taker's signature and standing, and an issued token's holder rules and
 * limits. Nothing here depends on time or chain state, so a refusal burns no quote.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import type { SwapRequest } from "../../contract/swap.ts";
import { checkTakerSignatures } from "../../fill/signatures.ts";
import {
  type FillValidation,
  messageBytesHash,
  type ValidatedFill,
  validateFill,
} from "../../fill/validate.ts";
import type { IssuanceNeed } from "../../issuance/policy.ts";
import type { DecisionSeen } from "../../ledger/decision.ts";
import { type Budget, bounded } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import { blindFillStanding, issuedTrade } from "../../policy/trade.ts";
import { deserializeFillTransaction } from "../../program/decode.ts";
import type { StoredQuote } from "../../quote-store/interface.ts";
import { FillRejectCode, refusal, SwapRefusalCode as S } from "../../refusal/codes.ts";
import { storeUnavailable } from "./claim.ts";
import { type Decision, refused, type StepPorts, type SwapSettings } from "./step.ts";

/** What a request that passed every check before the claim carries into it. */
export interface Checked {
  tx: VersionedTransaction;
  messageHash: string;
  quote: StoredQuote;
  fill: ValidatedFill;
  log: Logger;
  need?: IssuanceNeed;
}

export async function checkBeforeClaim(
  ports: StepPorts,
  settings: SwapSettings,
  req: SwapRequest,
  routeLog: Logger,
  budget: Budget,
  seen: DecisionSeen,
): Promise<Decision | Checked> {
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
  const got = await bounded(() => ports.store.get(quoteId), budget.forStep(settings.steps.store));
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
  const validation = validateFill({
    tx,
    messageHash,
    quote,
    maker: ports.signer.publicKey,
    tokens: settings.config.tokensByMint,
    maxFeeLamports: settings.maxFeeLamports,
    raisedFeeCap: settings.raisedFeeCapOf(quote.request.tokenIn, quote.request.tokenOut),
    expiryGraceSeconds: settings.expiryGraceSeconds,
  });
  countPriceRaise(ports, validation);
  if (!validation.ok) {
    log.info(
      { code: validation.code, rule: validation.rule, context: validation.context },
      "fill refused by validation",
    );
    return refused(req, refusal(validation.code, validation.context));
  }
  const fill = validation.fill;
  seen.fill = fill;

  // 4. The taker's signature over exactly these message bytes; the maker's slot empty.
  const sigs = checkTakerSignatures(tx, messageBytes, fill.makerSlot);
  if (!sigs.ok) {
    log.info({ code: sigs.code, context: sigs.context }, "fill refused: signatures");
    return refused(req, refusal(sigs.code, sigs.context));
  }

  // 4b. A quote asked with no taker is priced blind; its filler, now known and signed for, must not
  // be one the toxic-flow controls flagged or denied (a firm quote already answered for its taker).
  const bot = botActivity(ports, settings, req, quote, fill, log);
  if (bot) return bot;

  // 4c. Issued tokens: the holder rules and the issuer's own limits, judged on the message alone.
  const issuance = issuanceOf(ports, settings, req, quote, fill, log);
  if (issuance && "response" in issuance) return issuance;
  return { tx, messageHash, quote, fill, log, ...(issuance?.need ? { need: issuance.need } : {}) };
}

/** Step 4b: botActivityDetected for a flagged or denied taker filling an indicative quote. */
function botActivity(
  ports: StepPorts,
  settings: SwapSettings,
  req: SwapRequest,
  quote: StoredQuote,
  fill: ValidatedFill,
  log: Logger,
): Decision | undefined {
  const takers = ports.takers;
  if (!takers || quote.taker !== undefined) return undefined;
  const taker = fill.taker.toBase58();
  const blind = blindFillStanding(takers, taker, settings.now());
  if (!blind) return undefined;
  const { standing } = blind;
  ports.metrics?.toxicSwapsRejected.inc({ standing: standing.kind });
  log.warn(
    { taker, quoteId: quote.quoteId, standing: standing.kind, why: standing.entry.reason },
    "swap refused: botActivityDetected (a flagged or denied taker filling an indicative quote)",
  );
  return refused(req, refusal(blind.code, blind.context));
}

/**
 * Step 4c, for a pair with a token the maker issues: the taker must be an allowed holder
 * (`HOLDER_NOT_ALLOWED`), the direction switched on and the amount under the per-fill cap, and a
 * bundle engine must be there. What is minted is what leaves the maker (the fill's output amount),
 * what is burned what arrives (its input amount). Undefined: not an issued pair.
 */
function issuanceOf(
  ports: StepPorts,
  settings: SwapSettings,
  req: SwapRequest,
  quote: StoredQuote,
  fill: ValidatedFill,
  log: Logger,
): Decision | { need: IssuanceNeed } | undefined {
  const iss = ports.issuance;
  if (!iss) return undefined;
  const { tokenIn, tokenOut } = quote.request;
  // The day's cap is held by the reservation after the claim (reserve.ts), not by this instance's view.
  const checked = issuedTrade(
    iss.policies,
    {
      taker: fill.taker.toBase58(),
      tokenIn,
      tokenOut,
      amountIn: fill.inputAmount,
      amountOut: fill.outputAmount,
    },
    undefined,
    settings.now(),
  );
  if (!checked.ok) {
    log.info({ code: checked.code, context: checked.context }, "fill refused: issuance");
    return refused(req, refusal(checked.code, checked.context));
  }
  if (!checked.need) return undefined;
  if (!iss.bundles) {
    // Stryker disable next-line StringLiteral: compose.ts always names why there is no bundle engine (`unavailable`); the fallback is for a caller that does not
    const why = iss.unavailable ?? "no bundle engine is configured";
    return refused(req, refusal(S.ISSUANCE_UNAVAILABLE, why));
  }
  return { need: checked.need };
}

/** rfq_priority_fee_raises_total: a fill priced above its quote, accepted within the cap or refused. */
function countPriceRaise(ports: StepPorts, v: FillValidation): void {
  const metrics = ports.metrics;
  if (!metrics) return;
  if (v.ok) {
    if (v.fill.priceRaised) metrics.priorityFeeRaises.inc({ outcome: "accepted" });
  } else if (
    v.code === FillRejectCode.RAISED_FEE_CAP_EXCEEDED ||
    // Stryker disable next-line ConditionalExpression: the executor always has a raise cap (raisedFeeCaps falls back to limits.raisedFeeCap), so validateFill never refuses COMPUTE_UNIT_PRICE_EXCEEDED here
    v.code === FillRejectCode.COMPUTE_UNIT_PRICE_EXCEEDED
  ) {
    metrics.priorityFeeRaises.inc({ outcome: "refused" });
  }
}

/**
 * Step 8, holding the claim and the reservations: pre-flight (before anyone signs), co-sign, journal,
 * send (or, for a token the maker issues, the bundle issuance prepares and sends), answer. Any refusal
 * before the send releases the reservations; a failed pre-flight also gives the quote back
 * (Decision.releaseClaim), since nothing was signed or sent.
 */
import type { VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { SendResult } from "../../chain/interface.ts";
import { accepted, type SwapRequest } from "../../contract/swap.ts";
import { prepareBundle, sendBundle } from "../../issuance/bundle.ts";
import type { IssuancePorts } from "../../issuance/ports.ts";
import type { PendingFill } from "../../journal/interface.ts";
import { decisionRecord } from "../../ledger/decision.ts";
import { pairSide } from "../../ledger/pairs.ts";
import { type Budget, bounded } from "../../lib/bounded.ts";
import type { Logger } from "../../observability/logger.ts";
import {
  FillRejectCode,
  isRefusalCode,
  type Refusal,
  refusal,
  SwapRefusalCode as S,
} from "../../refusal/codes.ts";
import { SignerRefusal } from "../../signing/port.ts";
import {
  type Decision,
  type Held,
  refused,
  releaseQuietly,
  type StepPorts,
  type SwapSettings,
} from "./step.ts";

/** Time kept back from the chain port's send so that its own answer arrives inside the step (ms). */
const SEND_MARGIN_MS = 250;

export async function signAndSend(ports: StepPorts, settings: SwapSettings, held: Held): Promise<Decision> {
  const { req, tx, fill, budget, log, need } = held;
  const { quoteId } = req;
  // Defence in depth: never sign a message whose fee payer is not our key (a smart-account fill's
  // is a member, never us), nor one where our key is not the signer in the maker's slot.
  const makerSlot = fill.makerSlot;
  const me = ports.signer.publicKey;
  // Stryker disable next-line BooleanLiteral: a decoded message always has its fee payer at key 0, so the fallback is never taken
  const payerIsMaker = tx.message.staticAccountKeys[0]?.equals(me) ?? false;
  if (
    payerIsMaker === (fill.smartAccount !== undefined) ||
    makerSlot >= tx.message.header.numRequiredSignatures ||
    !tx.message.staticAccountKeys[makerSlot]?.equals(me)
  ) {
    await releaseQuietly(ports, quoteId);
    const why = "the fee payer or the maker's slot is not as validated";
    return refused(req, refusal(FillRejectCode.INVALID_FEE_PAYER, why));
  }
  // 8a. Simulate before anyone signs: a refused fill never gets a maker signature, so none is in a
  // log or in the request an RPC receives. A bundle is judged as a whole instead.
  if (settings.preflight && !need) {
    const refusal = await preflightRefusal(ports, settings, req, tx, budget, log);
    if (refusal) {
      await releaseQuietly(ports, quoteId);
      return refusal;
    }
  }
  // 8b. Sign: only a fill that passed every rule and the pre-flight.
  try {
    await ports.signer.sign(tx, { quoteId });
  } catch (err) {
    await releaseQuietly(ports, quoteId);
    if (err instanceof SignerRefusal) {
      log.warn({ code: err.code, context: err.context }, "fill refused by the signer");
      const known = isRefusalCode(err.code);
      return refused(
        req,
        known ? refusal(err.code, err.context) : refusal(S.SIGNER_REFUSED, `${err.code}: ${err.context}`),
      );
    }
    // The signer could not be asked (or did not answer): nothing was sent, so the quote is given
    // back; the signer's own record refuses another message for it while this one could land.
    log.warn({ error: (err as Error).message }, "the maker signature could not be produced");
    const why = `the maker signature could not be produced: ${(err as Error).message}`;
    return { ...refused(req, refusal(S.SIGNATURE_UNAVAILABLE, why)), releaseClaim: true };
  }
  const makerSig = tx.signatures[makerSlot];
  if (!makerSig || makerSig.every((b) => b === 0)) {
    await releaseQuietly(ports, quoteId);
    return refused(req, refusal(S.SIGNATURE_UNAVAILABLE, "the maker signature could not be produced"));
  }
  // The transaction's id is its first signature: the maker's in a plain fill, the paying member's in
  // a smart-account fill (as the toolkit's server example answers it).
  const txSignature = bs58.encode(tx.signatures[0] as Uint8Array);
  const slog = log.child({ txSignature });

  // 8c. A token the maker issues goes out in one bundle with the issuer's mint or burn.
  const iss = ports.issuance as IssuancePorts;
  const prepared = need
    ? await prepareBundle(
        iss,
        {
          need,
          fill: tx,
          makerTokenAccount:
            need.direction === "mint" ? fill.makerOutputTokenAccount : fill.makerInputTokenAccount,
          quoteId,
        },
        budget.forStep(settings.steps.chainRead),
      )
    : undefined;
  if (prepared && !prepared.ok) {
    await releaseQuietly(ports, quoteId);
    slog.warn({ code: prepared.refusal.code, context: prepared.refusal.context }, "fill not sent");
    return refused(req, prepared.refusal);
  }

  // 8d. Journal first (a crash after the send still finds the fill), then send. The chain port gets
  // the step's time less a margin: an ambiguous failure is looked up and retried in there, and its
  // answer must come back before this bound cuts it off.
  const pending = pendingOf(ports, settings, held, txSignature);
  const journaled = await ports.confirmations.record(pending, budget.forStep(settings.steps.journal, 1_000));
  const sendMs = budget.forStep(settings.steps.send);
  const sent: { ok: true; bundleId?: string } | { ok: false; refusal: Refusal } = prepared?.ok
    ? await sendBundle(iss, prepared.bundle, sendMs, SEND_MARGIN_MS)
    : await sendAlone(ports, tx, sendMs);
  if (sent.ok && sent.bundleId) pending.bundleId = sent.bundleId;
  // Whatever the send said, the chain decides the reservations: a timed-out send may still land. An
  // accepted swap is counted here, so its fill-rate entry can be settled when the chain decides.
  const token = sent.ok ? ports.fillRate?.recordDecision("accepted") : undefined;
  ports.confirmations.watch(pending, { journaled, ...(token ? { token } : {}) });
  if (!sent.ok) {
    slog.warn({ code: sent.refusal.code, context: sent.refusal.context }, "fill not sent");
    return refused(req, sent.refusal);
  }
  slog.info(
    {
      ...(need
        ? {
            bundleId: pending.bundleId,
            issuance: need.direction,
            issuedAmount: need.amount.toString(),
            tipAccount: prepared?.ok ? prepared.bundle.tipAccount.toBase58() : undefined,
          }
        : { feeOwed: fill.feeOwed.toString(), feeMint: fill.feeMint.toBase58() }),
      inputAmount: fill.inputAmount.toString(),
      outputAmount: fill.outputAmount.toString(),
    },
    need
      ? `fill co-signed and sent in a bundle with the issuer's ${need.direction}`
      : "fill co-signed and sent",
  );
  return { response: accepted(quoteId, txSignature), kind: undefined };
}

/** A plain fill through the chain port. */
async function sendAlone(
  ports: StepPorts,
  tx: VersionedTransaction,
  sendMs: number,
): Promise<{ ok: true } | { ok: false; refusal: Refusal }> {
  const sent = await bounded(
    () => ports.chain.send(tx, { timeoutMs: Math.max(0, sendMs - SEND_MARGIN_MS) }),
    sendMs,
  );
  let why: string;
  if (sent.ok) {
    const result = sent.value;
    if (result.ok) return { ok: true };
    why = sendFailureText(result);
  } else {
    why = sent.timedOut
      ? `the chain did not acknowledge the transaction in time (${sent.error})`
      : `sending failed: ${sent.error}`;
  }
  return { ok: false, refusal: refusal(S.SEND_FAILED, why) };
}

/** A failed send in words that say what happened to the transaction. */
function sendFailureText(r: Extract<SendResult, { ok: false }>): string {
  switch (r.reached) {
    case "no":
      return `the transaction did not reach the chain: ${r.error}`;
    case "unknown":
      return `the transaction did not reach the chain as far as any RPC endpoint shows (${r.error})`;
    default:
      return `the chain refused the transaction: ${r.error}`;
  }
}

/**
 * Simulates the fill before the maker signs it (Chain.preflight: signatures not verified, the
 * blockhash checked); a refusal when it would fail or cannot be simulated. The claim is given back,
 * since nothing was signed or sent.
 */
async function preflightRefusal(
  ports: StepPorts,
  settings: SwapSettings,
  req: SwapRequest,
  tx: VersionedTransaction,
  budget: Budget,
  log: Logger,
): Promise<Decision | undefined> {
  const sim = await bounded(() => ports.chain.preflight(tx), budget.forStep(settings.steps.simulate));
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
      context: why.context,
      logs: sim.ok ? sim.value.logs.slice(-8) : undefined,
    },
    "fill not sent: pre-flight simulation failed",
  );
  return { ...refused(req, why), releaseClaim: true };
}

/** The journal's entry for a fill about to be sent (its fee line and, for markouts, the trade). */
function pendingOf(
  ports: StepPorts,
  settings: SwapSettings,
  { req, quote, tx, fill, seen }: Held,
  txSignature: string,
): PendingFill {
  const { quoteId } = req;
  const pending: PendingFill = {
    quoteId,
    requestId: req.requestId,
    messageHash: fill.messageHash,
    signature: txSignature,
    blockhash: tx.message.recentBlockhash,
    sentAtMs: settings.now(),
    trackUntilMs: settings.now() + settings.trackForMs,
    fee: { mint: fill.feeMint.toBase58(), amount: fill.feeOwed.toString(), feeBps: fill.feeBps },
  };
  const where = pairSide(settings.config, quote.request.tokenIn, quote.request.tokenOut);
  if (where) {
    // The maker's trade: the quoted amounts (the operator's fee is part of what the maker gives or keeps).
    const { amountIn, amountOut } = quote.response;
    const mid = ports.mids?.liveMid(where.pair);
    pending.trade = {
      pair: where.pair,
      side: where.side,
      taker: fill.taker.toBase58(),
      baseAmount: where.side === "sell" ? amountOut : amountIn,
      quoteAmount: where.side === "sell" ? amountIn : amountOut,
      ...(mid !== undefined ? { midAtSend: mid } : {}),
    };
  }
  // The acceptance this fill answers if the send succeeds, journaled with it (see PendingFill.decision).
  if (ports.ledgerJournal) {
    pending.decision = decisionRecord(
      settings.config,
      req,
      { response: accepted(quoteId, txSignature) },
      seen,
      seen.receivedAtMs ?? settings.now(),
      settings.now(),
    );
  }
  return pending;
}

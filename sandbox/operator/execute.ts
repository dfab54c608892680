/**
 * POST /ultra/v1/execute and POST /swap/v2/execute: the user's signed transaction goes to the maker.
 *
 * The simulator checks the signed transaction against the one it built (identical message bytes, or
 * the same with Lighthouse assertions appended after the fill; a valid taker signature over the
 * message signed; maker slot still empty), refuses an expired order, forwards POST /swap to the
 * maker with the 25 s limit, waits for the chain to confirm the maker's send, records the outcome in
 * the maker's fill rate, and answers with the seed's execute result.
 *
 * The signature check here is deliberately independent of the webhook's own (src/swap): the operator
 * is a different party, and a shared bug must not hide on both sides.
 */

import { getAssociatedTokenAddressSync, unpackAccount } from "@solana/spl-token";
import {
  PublicKey,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import type { SignatureStatus } from "../../src/chain/interface.ts";
import type { RejectionReason } from "../../src/contract/swap.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { COMPUTE_BUDGET_PROGRAM_ID, LIGHTHOUSE_PROGRAM_ID, NATIVE_MINT } from "../../src/program/layout.ts";
import type { OperatorChain } from "./build-order.ts";
import type { CountedOutcome, FillRateTracker } from "./fill-rate.ts";
import type { HttpClient } from "./http-client.ts";
import type { OrderBook, PendingOrder } from "./order-book.ts";
import { endpointUrl, type WebhookRegistry } from "./webhooks.ts";
import { ExecuteCode, type ExecuteResult } from "./wire.ts";

/** The maker has 25 s to answer POST /swap. */
export const SWAP_TIMEOUT_MS = 25_000;

export interface ExecuteDeps {
  http: HttpClient;
  registry: WebhookRegistry;
  fillRate: FillRateTracker;
  chain: OperatorChain;
  orders: OrderBook;
  now: () => number;
  swapTimeoutMs?: number;
  /** How long to wait for confirmation after the maker accepted. */
  confirmTimeoutMs?: number;
  confirmPollMs?: number;
  /** Every finished execute, for logs and reports. */
  onOutcome?: (order: PendingOrder, result: ExecuteResult, counted: CountedOutcome | "notCounted") => void;
}

export interface ExecuteBody {
  signedTransaction: string;
  requestId: string;
}

export type ExecuteAnswer =
  | { status: 200; body: ExecuteResult }
  | { status: 400; body: { error: string; code: number } };

const failed = (code: number, error: string, extra: Partial<ExecuteResult> = {}): ExecuteResult => ({
  status: "Failed",
  code,
  error,
  ...extra,
});

/**
 * True when `signed` is `built` with Lighthouse assertions appended after its last instruction, and
 * nothing else changed: the same fee payer, blockhash and signers, the built instructions in order
 * with the same accounts, flags and data (docs/contract.md: a wallet may append assertions before signing;
 * the maker validates them). Compared instruction by instruction, not byte by byte: appending
 * instructions re-compiles the message (new account keys, another account order).
 *
 * One more difference is accepted, because the operator's own end-to-end client makes it and expects
 * Success (toolkit tests/suites/integration/swap.ts raises the limit to 400,000 before appending its
 * assertion): a different value in the SetComputeUnitLimit instruction. The maker judges it (its fee
 * cap); a stand-in that refused it would be stricter than the operator.
 */
export function differsOnlyByAppendedAssertions(
  built: VersionedTransaction,
  signed: VersionedTransaction,
): boolean {
  if (signed.message.version !== 0 || signed.message.addressTableLookups.length > 0) return false;
  let a: TransactionMessage;
  let b: TransactionMessage;
  try {
    a = TransactionMessage.decompile(built.message);
    b = TransactionMessage.decompile(signed.message);
  } catch {
    return false;
  }
  if (!a.payerKey.equals(b.payerKey) || a.recentBlockhash !== b.recentBlockhash) return false;
  const signers = (m: VersionedTransaction["message"]) =>
    m.staticAccountKeys
      .slice(0, m.header.numRequiredSignatures)
      .map((k) => k.toBase58())
      .sort()
      .join(",");
  if (signers(built.message) !== signers(signed.message)) return false;
  if (b.instructions.length <= a.instructions.length) return false;
  const isLimit = (ix: TransactionInstruction) =>
    ix.programId.equals(COMPUTE_BUDGET_PROGRAM_ID) && ix.data.length === 5 && ix.data[0] === 2;
  const same = (x: TransactionInstruction, y: TransactionInstruction) =>
    x.programId.equals(y.programId) &&
    (Buffer.from(x.data).equals(Buffer.from(y.data)) || (isLimit(x) && isLimit(y))) &&
    x.keys.length === y.keys.length &&
    x.keys.every(
      (k, i) =>
        k.pubkey.equals(y.keys[i]!.pubkey) &&
        k.isSigner === y.keys[i]!.isSigner &&
        k.isWritable === y.keys[i]!.isWritable,
    );
  return (
    a.instructions.every((ix, i) => same(ix, b.instructions[i]!)) &&
    b.instructions.slice(a.instructions.length).every((ix) => ix.programId.equals(LIGHTHOUSE_PROGRAM_ID))
  );
}

/**
 * The order a signed transaction with Lighthouse assertions appended belongs to. A re-quote with the
 * same parameters repeats the requestId, and within one blockhash and expiry second it builds the
 * same transaction as the earlier order: the newest order is the one the user just signed, never an
 * earlier one already executed (whose answer, for a different signed transaction, would be replayed).
 */
export function orderWithAssertions(
  candidates: readonly PendingOrder[],
  signed: VersionedTransaction,
): PendingOrder | undefined {
  for (let i = candidates.length - 1; i >= 0; i--) {
    const o = candidates[i] as PendingOrder;
    if (differsOnlyByAppendedAssertions(o.built.tx, signed)) return o;
  }
  return undefined;
}

/** In-flight and finished executes by order, so a retried execute gets the same answer. */
const results = new WeakMap<PendingOrder, Promise<ExecuteResult>>();

/** Handles one execute call. */
export async function executeOrder(deps: ExecuteDeps, body: ExecuteBody): Promise<ExecuteAnswer> {
  let tx: VersionedTransaction;
  try {
    tx = VersionedTransaction.deserialize(Buffer.from(body.signedTransaction, "base64"));
  } catch (e) {
    return {
      status: 400,
      body: {
        error: `signedTransaction: not a serialized transaction: ${(e as Error).message}`,
        code: ExecuteCode.INVALID_SIGNED_TRANSACTION,
      },
    };
  }
  const candidates = deps.orders.forRequest(body.requestId);
  if (candidates.length === 0) {
    return {
      status: 400,
      body: { error: `no order for requestId ${body.requestId}`, code: ExecuteCode.MISSING_CACHED_ORDER },
    };
  }
  const messageBytes = tx.message.serialize();
  const order = deps.orders.find(body.requestId, messageBytes) ?? orderWithAssertions(candidates, tx);
  if (!order) {
    return {
      status: 400,
      body: {
        error:
          "the signed message differs from the order's transaction (only Lighthouse assertions appended after the fill are accepted)",
        code: ExecuteCode.INVALID_MESSAGE_BYTES,
      },
    };
  }
  // Every signer but the maker has signed: the taker (or, for a smart-account taker, its members).
  const makerKey = new PublicKey(order.quote.response.maker);
  const keys = tx.message.staticAccountKeys;
  const required = tx.message.header.numRequiredSignatures;
  const makerIndex = keys.slice(0, required).findIndex((k) => k.equals(makerKey));
  for (let i = 0; i < required; i++) {
    if (i === makerIndex) continue;
    const sig = tx.signatures[i];
    if (!sig || !verifyEd25519(messageBytes, sig, (keys[i] as PublicKey).toBytes())) {
      return {
        status: 400,
        body: {
          error: "the taker's signature is missing or invalid",
          code: ExecuteCode.INVALID_SIGNED_TRANSACTION,
        },
      };
    }
  }
  if (makerIndex < 0 || !tx.signatures[makerIndex]?.every((b) => b === 0)) {
    return {
      status: 400,
      body: {
        error: "the maker's signature slot must be empty",
        code: ExecuteCode.INVALID_SIGNED_TRANSACTION,
      },
    };
  }

  let pending = results.get(order);
  if (!pending) {
    pending = runExecute(deps, order, tx);
    results.set(order, pending);
  }
  return { status: 200, body: await pending };
}

async function runExecute(
  deps: ExecuteDeps,
  order: PendingOrder,
  tx: VersionedTransaction,
): Promise<ExecuteResult> {
  const hook = order.quote.webhook;
  const heldMs = deps.now() - order.createdAtMs;
  const finish = (result: ExecuteResult, counted: CountedOutcome | "notCounted"): ExecuteResult => {
    if (counted !== "notCounted") deps.fillRate.record(hook.name, counted, heldMs);
    deps.onOutcome?.(order, result, counted);
    return result;
  };

  if (deps.now() > Number(order.built.expireAt) * 1000) {
    return finish(
      failed(ExecuteCode.RFQ_QUOTE_EXPIRED, "the order expired before it was executed"),
      "notCounted",
    );
  }

  const res = await deps.http.request(endpointUrl(hook.baseUrl, "/swap"), {
    method: "POST",
    headers: deps.registry.headersFor(hook),
    body: JSON.stringify({
      requestId: order.requestId,
      quoteId: order.quote.quoteId,
      transaction: Buffer.from(tx.serialize()).toString("base64"),
    }),
    timeoutMs: deps.swapTimeoutMs ?? SWAP_TIMEOUT_MS,
  });
  if (!res.ok)
    return finish(failed(ExecuteCode.RFQ_UNKNOWN, `maker /swap: ${res.error}: ${res.detail}`), "failed");
  if (res.status !== 200) {
    const code = res.status >= 500 ? ExecuteCode.RFQ_UNKNOWN : ExecuteCode.RFQ_INVALID_PAYLOAD;
    return finish(failed(code, `maker /swap answered ${res.status}: ${res.body.slice(0, 300)}`), "failed");
  }
  let answer: { state?: unknown; rejectionReason?: unknown; txSignature?: unknown; quoteId?: unknown };
  try {
    answer = JSON.parse(res.body);
  } catch {
    return finish(
      failed(ExecuteCode.RFQ_UNKNOWN, "maker /swap answered 200 with a body that is not JSON"),
      "failed",
    );
  }
  if (answer.state !== "accepted") {
    const reason =
      answer.state && typeof answer.state === "object" && "rejectedWithReason" in answer.state
        ? String((answer.state as { rejectedWithReason: unknown }).rejectedWithReason)
        : undefined;
    const text = `maker rejected the swap${reason ? ` (${reason})` : ""}${typeof answer.rejectionReason === "string" ? `: ${answer.rejectionReason}` : ""}`;
    const honest = reason ? await rejectionIsHonest(deps.chain, order, reason as RejectionReason) : false;
    return finish(failed(ExecuteCode.RFQ_SWAP_REJECTED, text), honest ? "honestRejection" : "failed");
  }

  // The transaction id is the maker's (first) signature: the maker tells us which it sent.
  const signature = typeof answer.txSignature === "string" ? answer.txSignature : undefined;
  if (!signature || !isSignature(signature)) {
    return finish(
      failed(ExecuteCode.RFQ_UNKNOWN, "maker accepted without a transaction signature"),
      "failed",
    );
  }
  const status = await waitForConfirmation(deps, signature);
  if (status.state !== "confirmed") {
    const why = status.state === "failed" || status.state === "unknown" ? status.error : status.state;
    return finish(
      failed(ExecuteCode.RFQ_FAILED_TO_LAND, `transaction did not land: ${why}`, {
        signature,
        ...(status.state === "failed" && status.slot !== undefined ? { slot: status.slot.toString() } : {}),
      }),
      "failed",
    );
  }
  const b = order.built;
  const i = order.intent;
  // The seed's pairs: totals are what the taker's wallet saw (the fee included on its side), results
  // what went through the route (the maker's quoted amounts).
  const routeIn = order.quote.amountIn.toString();
  const routeOut = order.quote.amountOut.toString();
  return finish(
    {
      status: "Success",
      signature,
      slot: status.slot.toString(),
      code: ExecuteCode.SUCCESS,
      totalInputAmount: b.inputAmount.toString(),
      totalOutputAmount: b.outputAmount.toString(),
      inputAmountResult: routeIn,
      outputAmountResult: routeOut,
      swapEvents: [
        { inputMint: i.inputMint, inputAmount: routeIn, outputMint: i.outputMint, outputAmount: routeOut },
      ],
    },
    "filled",
  );
}

function isSignature(s: string): boolean {
  try {
    return bs58.decode(s).length === 64;
  } catch {
    return false;
  }
}

async function waitForConfirmation(deps: ExecuteDeps, signature: string): Promise<SignatureStatus> {
  const until = deps.now() + (deps.confirmTimeoutMs ?? 60_000);
  const poll = deps.confirmPollMs ?? 200;
  for (;;) {
    const s = await deps.chain.chain.getSignatureStatus(signature);
    if (s.state === "confirmed" || s.state === "failed" || s.state === "expired") return s;
    if (deps.now() >= until) {
      return {
        state: "unknown",
        error: `not confirmed within ${deps.confirmTimeoutMs ?? 60_000} ms (last: ${s.state})`,
      };
    }
    await new Promise((r) => setTimeout(r, poll));
  }
}

/**
 * The operator re-checks a taker-cannot-pay rejection and forgives only the true ones (docs/contract.md,
 * "POST /swap"): the taker's input balance (or SOL for native input) below the order's input amount,
 * or too little SOL for the output ATA's rent.
 */
async function rejectionIsHonest(
  chain: OperatorChain,
  order: PendingOrder,
  reason: RejectionReason,
): Promise<boolean> {
  if (reason !== "insufficientBalance" && reason !== "insufficientBalanceForAtaCreation") return false;
  const taker = new PublicKey(order.intent.taker);
  const inputMint = new PublicKey(order.intent.inputMint);
  const b = order.built;
  const [mintAcc, takerAcc] = await chain.chain.getAccounts([inputMint, taker]);
  const lamports = takerAcc?.lamports ?? 0n;
  if (reason === "insufficientBalanceForAtaCreation") return lamports < b.rentLamports;
  if (b.nativeSolIn && inputMint.equals(NATIVE_MINT)) return lamports < b.inputAmount + b.rentLamports;
  if (!mintAcc) return false;
  const ata = getAssociatedTokenAddressSync(inputMint, taker, true, mintAcc.owner);
  const [acc] = await chain.chain.getAccounts([ata]);
  if (!acc) return true;
  try {
    const parsed = unpackAccount(
      ata,
      {
        data: Buffer.from(acc.data),
        owner: acc.owner,
        lamports: Number(acc.lamports),
        executable: acc.executable,
      },
      mintAcc.owner,
    );
    return parsed.amount < b.inputAmount;
  } catch {
    return true;
  }
}

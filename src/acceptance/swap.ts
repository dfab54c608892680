/**
 * ACCEPTANCE_MODE=1 only: the canned /swap outcomes the operator's public acceptance suite expects
 * (docs/contract.md, "The operator's public acceptance suite"). The suite's transaction is expired and names
 * a maker that is not ours, so nothing here signs or sends anything; the transaction is only decoded,
 * so that a malformed one is still a 400.
 */

import { VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import {
  accepted,
  rejected,
  rejectedWithReason,
  type SwapRequest,
  type SwapResponse,
} from "../contract/swap.ts";
import { AppError, ErrorCode } from "../errors/index.ts";
import type { Logger } from "../observability/logger.ts";
import type { SwapHandler } from "../swap/handler.ts";

const CANNED = "00000000-0000-0000-0000-00000000000";

export class AcceptanceSwapHandler implements SwapHandler {
  async execute(req: SwapRequest, log: Logger): Promise<SwapResponse> {
    let tx: VersionedTransaction;
    try {
      tx = VersionedTransaction.deserialize(Buffer.from(req.transaction, "base64"));
    } catch {
      throw new AppError(ErrorCode.INVALID_REQUEST, "transaction: not a serialized versioned transaction");
    }
    log.warn({ acceptance: true }, "acceptance mode: canned swap answer, nothing signed or sent");
    switch (req.requestId) {
      case `${CANNED}1`:
        return rejected(req.quoteId, "acceptance suite: canned rejection");
      case `${CANNED}2`:
        throw new AppError(ErrorCode.INVALID_REQUEST, "requestId: acceptance suite's malformed-request case");
      case `${CANNED}3`:
        return rejectedWithReason(req.quoteId, "insufficientBalance");
      case `${CANNED}4`:
        return rejectedWithReason(req.quoteId, "signatureVerificationFailed");
      default:
        // The taker's signature identifies the transaction; the maker slot is empty in the suite's bytes.
        return accepted(req.quoteId, bs58.encode((tx.signatures[1] ?? tx.signatures[0]) as Uint8Array));
    }
  }
}

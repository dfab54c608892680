/** The port between POST /swap and whatever answers it (the executor, or acceptance mode's canned answers). */
import type { SwapRequest, SwapResponse } from "../contract/swap.ts";
import type { Logger } from "../observability/logger.ts";

export interface SwapHandler {
  /**
   * Decides one swap. Returns the contract's answer; throws AppError only for a request that is
   * malformed at the transport level (400), never for a rejection.
   */
  execute(request: SwapRequest, log: Logger): Promise<SwapResponse>;
}

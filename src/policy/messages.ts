/**
 * One landable signature per transaction message, whatever id it arrives under: the message's hash is
 * bound to the first id it was presented with (a /swap's quoteId, an RFQ v2 swap's "v2:<swap_uuid>"),
 * atomically across every instance (the quote store's binding: Redis SET NX where the service uses
 * Redis, kept CLAIM_RETAIN_MS, an hour, well past any quote's or level set's life), and refused under
 * any other. The webhook's /swap (src/swap/steps/claim.ts) and its RFQ v2 stream ask it before they
 * reserve anything; the signer service holds the same rule in its own record (SIGNER_ALREADY_SIGNED,
 * src/signer/service/limits.ts), since it trusts no store the webhook writes.
 */
import type { QuoteStore } from "../quote-store/interface.ts";
import { type Refused, SwapRefusalCode as S } from "../refusal/codes.ts";

export type MessageRefusal = Refused<typeof S.MESSAGE_BOUND_TO_OTHER_QUOTE> & {
  /** The id the message was first presented with. */
  boundTo: string;
};

/** Binds the message to `id`; a refusal when it is bound to another. Throws when the store does. */
export async function bindMessageOnce(
  store: Pick<QuoteStore, "bindMessage">,
  messageHash: string,
  id: string,
): Promise<MessageRefusal | undefined> {
  const bound = await store.bindMessage(messageHash, id);
  if (bound === id) return undefined;
  return {
    ok: false,
    code: S.MESSAGE_BOUND_TO_OTHER_QUOTE,
    context: `the transaction was already submitted for another quote or swap (${bound})`,
    boundTo: bound,
  };
}

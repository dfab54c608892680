/**
 * Message shape and the two fixed keys: a v0 message without lookup tables, signed by at least the
 * maker (key 0, the fee payer) and the taker (key 1, a writable signer, the quote's taker when the
 * quote named one), for a quote answered by this maker wallet.
 */
import { FillRejectCode } from "../../refusal/codes.ts";
import { type FillRule, refuse } from "./check.ts";

export const messageIsV0: FillRule = ({ d }) =>
  d.version !== 0
    ? refuse(FillRejectCode.INVALID_MESSAGE_VERSION, `the message is ${d.version}, only v0 is accepted`)
    : undefined;

export const noLookupTables: FillRule = ({ d }) =>
  d.addressTableLookups > 0
    ? refuse(
        FillRejectCode.LOOKUP_TABLES_NOT_SUPPORTED,
        `the message uses ${d.addressTableLookups} address lookup table(s); none are accepted`,
      )
    : undefined;

export const makerAndTakerSign: FillRule = ({ d }) =>
  d.header.numRequiredSignatures < 2
    ? refuse(
        FillRejectCode.INVALID_SIGNER_COUNT,
        `the message requires ${d.header.numRequiredSignatures} signature(s); maker and taker make at least 2`,
      )
    : undefined;

/** A plain fill; the fee payer of a smart-account envelope is one of its members (smart-account.ts). */
export const makerPaysTheFee: FillRule = ({ d, maker, envelope }) => {
  const feePayer = d.staticKeys[0];
  return envelope || feePayer?.equals(maker)
    ? undefined
    : refuse(
        FillRejectCode.INVALID_FEE_PAYER,
        `account key 0 (fee payer, signature slot 0) is ${feePayer?.toBase58()}, not the maker ${maker.toBase58()}`,
      );
};

/**
 * The quote's price, size and inventory check were for the wallet it named; another wallet sharing
 * the quote store (its own key, a rotated key) must not sign it.
 */
export const quoteAnsweredByThisMaker: FillRule = ({ quote, maker }) =>
  quote.response.maker !== maker.toBase58()
    ? refuse(
        FillRejectCode.INVALID_QUOTE_MAKER,
        `the quote was answered for maker ${quote.response.maker}, not for ${maker.toBase58()}`,
      )
    : undefined;

/** Key 1 is a signer (makerAndTakerSign); it must also be writable: it pays its own input. */
export const takerWritable: FillRule = ({ tx, takerIndex }) =>
  tx.message.isAccountWritable(takerIndex)
    ? undefined
    : refuse(FillRejectCode.INVALID_TAKER, `account key ${takerIndex} (the taker) is not writable`);

export const takerIsTheQuotedTaker: FillRule = ({ quote, taker }) => {
  const quotedTaker = quote.taker ?? quote.request.taker;
  return quotedTaker !== undefined && taker.toBase58() !== quotedTaker
    ? refuse(
        FillRejectCode.INVALID_TAKER,
        `the taker is ${taker.toBase58()}, but the quote was for taker ${quotedTaker}`,
      )
    : undefined;
};

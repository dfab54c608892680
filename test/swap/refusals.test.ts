/**
 * Refusals are values until the HTTP edge: the list of codes holds one casing and no code twice, and
 * `refusedAnswer` renders a refusal as the operator reads it (the contract's honest tag, a fill rule's
 * `CODE: context`, or the context alone for the swap path's wordings operators have always read).
 */
import { describe, expect, it } from "vitest";
import { refusalText, refusedAnswer } from "../../src/contract/swap.ts";
import {
  FillRejectCode,
  isRefusalCode,
  refusal,
  SignerRefusalCode,
  SwapRefusalCode,
} from "../../src/refusal/codes.ts";

const ALL = [
  ...Object.values(FillRejectCode),
  ...Object.values(SwapRefusalCode),
  ...Object.values(SignerRefusalCode),
];

describe("the list of refusal codes", () => {
  it("spells every code in UPPER_SNAKE and names each code once across the three lists", () => {
    expect(ALL.filter((c) => !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(c))).toEqual([]);
    expect(new Set(ALL).size).toBe(ALL.length);
  });

  it("keys the fill and swap codes by their own value", () => {
    for (const list of [FillRejectCode, SwapRefusalCode]) {
      expect(Object.entries(list).filter(([k, v]) => k !== v)).toEqual([]);
    }
  });

  it("knows a code the signer sends and not one it does not list", () => {
    expect(isRefusalCode("SIGNER_PRICE_BAND")).toBe(true);
    expect(isRefusalCode("INVALID_MINT")).toBe(true);
    expect(isRefusalCode("SIGNER_SOMETHING_NEW")).toBe(false);
  });
});

describe("refusedAnswer renders a refusal at the HTTP edge", () => {
  it("answers a fill rule's refusal rejected with `CODE: context`", () => {
    const r = refusal(FillRejectCode.INVALID_OUTPUT_AMOUNT, "the fill gives the taker 5");
    expect(refusedAnswer("q-1", r)).toEqual({
      quoteId: "q-1",
      state: "rejected",
      rejectionReason: "INVALID_OUTPUT_AMOUNT: the fill gives the taker 5",
    });
  });

  it("answers the honest codes with the contract's tags and the context as the reason", () => {
    const tags = [
      [SwapRefusalCode.INSUFFICIENT_BALANCE, "insufficientBalance"],
      [SwapRefusalCode.INSUFFICIENT_BALANCE_FOR_ATA_CREATION, "insufficientBalanceForAtaCreation"],
      [SwapRefusalCode.SIGNATURE_VERIFICATION_FAILED, "signatureVerificationFailed"],
      [SwapRefusalCode.BOT_ACTIVITY_DETECTED, "botActivityDetected"],
    ] as const;
    for (const [code, tag] of tags) {
      expect(refusedAnswer("q-2", refusal(code, "why"))).toEqual({
        quoteId: "q-2",
        state: { rejectedWithReason: tag },
        rejectionReason: "why",
      });
    }
  });

  it("answers the swap path's own refusals with their context alone, as operators have always read them", () => {
    const r = refusal(
      SwapRefusalCode.QUOTE_ALREADY_CLAIMED,
      "quote already claimed by a different transaction",
    );
    expect(refusedAnswer("q-3", r).rejectionReason).toBe("quote already claimed by a different transaction");
    expect(refusalText(refusal(SwapRefusalCode.QUOTE_NOT_FOUND, "unknown quote q-3"))).toBe(
      "unknown quote q-3",
    );
  });

  it("prefixes an issuance or inventory code, as the fill rules' codes are", () => {
    expect(refusalText(refusal(SwapRefusalCode.HOLDER_NOT_ALLOWED, "taker T"))).toBe(
      "HOLDER_NOT_ALLOWED: taker T",
    );
    expect(refusalText(refusal(SwapRefusalCode.INVENTORY_INSUFFICIENT, "5 < 6"))).toBe(
      "INVENTORY_INSUFFICIENT: 5 < 6",
    );
  });
});

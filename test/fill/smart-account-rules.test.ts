/**
 * The smart-account signer and vault rules on their own, at the index edges no SDK-built envelope
 * reaches: a maker missing from the message, and slot 0 (the fee payer's, judged by feePayerIsAMember).
 */
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import type { FillCheck } from "../../src/fill/rules/check.ts";
import { signersAreTheMembersAndTheMaker, vaultInTheMessage } from "../../src/fill/rules/smart-account.ts";
import { FillRejectCode } from "../../src/refusal/codes.ts";

/** Two signing members in slots 0 and 1, the maker (when present) a third signer. */
function check(over: Partial<{ makerIndex: number; takerIndex: number }>): FillCheck {
  return {
    envelope: {
      numSigners: 2,
      members: [
        { index: 0, signer: true },
        { index: 1, signer: true },
      ],
    },
    d: { header: { numRequiredSignatures: 3 } },
    makerIndex: 2,
    takerIndex: 5,
    taker: Keypair.generate().publicKey,
    ...over,
  } as unknown as FillCheck;
}

describe("signersAreTheMembersAndTheMaker", () => {
  it("accepts the maker as the signer after the members", () => {
    expect(signersAreTheMembersAndTheMaker(check({}))).toBeUndefined();
  });

  it("refuses a smart-account fill whose maker is not in the message at all", () => {
    expect(signersAreTheMembersAndTheMaker(check({ makerIndex: -1 }))?.code).toBe(
      FillRejectCode.INVALID_SIGNER_COUNT,
    );
  });

  it("refuses a maker that is not among the signers", () => {
    expect(signersAreTheMembersAndTheMaker(check({ makerIndex: 3 }))?.code).toBe(
      FillRejectCode.INVALID_SIGNER_COUNT,
    );
  });

  it("leaves a maker in slot 0 to the fee-payer rule (this rule counts signers only)", () => {
    expect(signersAreTheMembersAndTheMaker(check({ makerIndex: 0 }))).toBeUndefined();
  });
});

describe("vaultInTheMessage", () => {
  it("refuses an envelope whose vault is not in the message", () => {
    expect(vaultInTheMessage(check({ takerIndex: -1 }))?.code).toBe(FillRejectCode.INVALID_TAKER);
  });

  it("leaves a vault in slot 0 to the fee-payer rule (this rule only asks that it is present)", () => {
    expect(vaultInTheMessage(check({ takerIndex: 0 }))).toBeUndefined();
  });
});

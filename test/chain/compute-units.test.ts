/**
 * The compute-unit table (src/fill/compute-units.ts) is what the local chain meters: a fill given
 * exactly its measured units lands, one unit less fails at the meter and the
 * maker still pays the fee; so a limit under the floor (which adds a margin) can never land.
 */
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { fundTaker, lamports } from "../../src/chain/local/seed.ts";
import { COMPUTE_UNITS } from "../../src/fill/compute-units.ts";
import { fillFee, JUP, seededChain, signedFill, USDC } from "./helpers.ts";

describe("the measured compute units against the local chain's metering", () => {
  const need = COMPUTE_UNITS.legs["token->token"]!.measured;

  async function fillWithLimit(computeUnitLimit: number) {
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, {
      sol: 1_000_000_000n,
      tokens: { [JUP.toBase58()]: 5_000_000n, [USDC.toBase58()]: 0n },
    });
    const tx = await signedFill(chain, maker, taker, {
      inputMint: JUP,
      outputMint: USDC,
      inputAmount: 1_000_000n,
      outputAmount: 25_000n,
      computeUnitLimit,
    });
    const before = lamports(chain, maker.publicKey);
    const outcome = chain.submit(tx);
    return { outcome, makerPaid: before - lamports(chain, maker.publicKey) };
  }

  it("lands an SPL-to-SPL fill given exactly its measured compute units", async () => {
    const { outcome } = await fillWithLimit(need);
    expect(outcome.kind).toBe("confirmed");
  });

  it("fails an SPL-to-SPL fill given one unit less, charging the maker its fee all the same", async () => {
    const { outcome, makerPaid } = await fillWithLimit(need - 1);
    expect(outcome.kind).toBe("failed");
    // The runtime stops the program at the meter: ProgramFailedToComplete, "exceeded CUs meter".
    expect(outcome.kind === "failed" && JSON.stringify(outcome.errJson)).toMatch(/ProgramFailedToComplete/);
    expect(outcome.kind === "failed" && outcome.logs.join("\n")).toMatch(/exceeded CUs meter/);
    expect(makerPaid).toBe(fillFee(2, need - 1, 10_000n));
  });
});

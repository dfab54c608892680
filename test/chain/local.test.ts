/**
 * LocalChain against the real SVM: builder-made fills, really signed, executed through the fill
 * emulation (the order-engine binary is not available; see src/chain/local/index.ts).
 */
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { ata, fundTaker, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { fpuStateIsClean } from "./fpu-canary.ts";
import { fillFee, JUP, SOL, seededChain, signedFill, USDC } from "./helpers.ts";

describe("LocalChain fills", () => {
  it("executes a token-for-token fill and moves both parties' balances by exactly the fill amounts", async () => {
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [JUP.toBase58()]: 5_000_000_000n } });
    const before = {
      takerJup: tokenBalance(chain, taker.publicKey, JUP),
      makerJup: tokenBalance(chain, maker.publicKey, JUP),
      makerUsdc: tokenBalance(chain, maker.publicKey, USDC),
      makerSol: lamports(chain, maker.publicKey),
      takerSol: lamports(chain, taker.publicKey),
    };
    const tx = await signedFill(chain, maker, taker, {
      inputMint: JUP,
      outputMint: USDC,
      inputAmount: 1_000_000_000n,
      outputAmount: 24_975_000n,
      createTakerOutputAta: true,
      computeUnitLimit: 60_000,
      computeUnitPrice: 53_770n,
    });
    const sent = await chain.send(tx);
    expect(sent).toEqual({ ok: true, signature: expect.any(String) });
    if (!sent.ok) return;
    expect((await chain.getSignatureStatus(sent.signature)).state).toBe("confirmed");

    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(before.takerJup - 1_000_000_000n);
    expect(tokenBalance(chain, maker.publicKey, JUP)).toBe(before.makerJup + 1_000_000_000n);
    expect(tokenBalance(chain, maker.publicKey, USDC)).toBe(before.makerUsdc - 24_975_000n);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(24_975_000n);
    // The maker pays the fee (fee payer); the taker pays only its new ATA's rent.
    expect(lamports(chain, maker.publicKey)).toBe(before.makerSol - fillFee(2, 60_000, 53_770n));
    const ataRent = await chain.getMinimumBalanceForRentExemption(165);
    expect(lamports(chain, taker.publicKey)).toBe(before.takerSol - ataRent);
  });

  it("leaves the process's FPU state sound after creating an ATA (litesvm 0.8 JIT bug worked around)", async () => {
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, { sol: 1_000_000_000n, tokens: { [JUP.toBase58()]: 1_000_000n } });
    const tx = await signedFill(chain, maker, taker, {
      inputMint: JUP,
      outputMint: USDC,
      inputAmount: 1_000_000n,
      outputAmount: 25_000n,
      createTakerOutputAta: true,
    });
    expect((await chain.send(tx)).ok).toBe(true);
    expect(fpuStateIsClean()).toBe(true);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(25_000n);
  });

  it("takes native SOL from the taker into the maker's wrapped SOL account", async () => {
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, { sol: 3_000_000_000n, tokens: { [USDC.toBase58()]: 0n } });
    const makerWsol = tokenBalance(chain, maker.publicKey, SOL);
    const makerUsdc = tokenBalance(chain, maker.publicKey, USDC);
    const tx = await signedFill(chain, maker, taker, {
      inputMint: SOL,
      outputMint: USDC,
      inputAmount: 2_000_000_000n,
      outputAmount: 360_000_000n,
      nativeSolIn: true,
    });
    const sent = await chain.send(tx);
    expect(sent.ok).toBe(true);
    expect(lamports(chain, taker.publicKey)).toBe(1_000_000_000n);
    expect(tokenBalance(chain, maker.publicKey, SOL)).toBe(makerWsol + 2_000_000_000n);
    // The wrapped SOL account's lamports back its token balance (SyncNative ran).
    const rent = await chain.getMinimumBalanceForRentExemption(165);
    expect(lamports(chain, ata(chain, maker.publicKey, SOL))).toBe(rent + makerWsol + 2_000_000_000n);
    expect(tokenBalance(chain, maker.publicKey, USDC)).toBe(makerUsdc - 360_000_000n);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(360_000_000n);
  });

  it("pays native SOL to the taker out of the maker's wrapped SOL, the maker paying only the fee", async () => {
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, { tokens: { [USDC.toBase58()]: 500_000_000n } });
    const makerWsol = tokenBalance(chain, maker.publicKey, SOL);
    const makerSol = lamports(chain, maker.publicKey);
    const tx = await signedFill(chain, maker, taker, {
      inputMint: USDC,
      outputMint: SOL,
      inputAmount: 180_000_000n,
      outputAmount: 999_000_000n,
      nativeSolOut: true,
    });
    const sent = await chain.send(tx);
    expect(sent.ok).toBe(true);
    if (sent.ok) expect((await chain.getSignatureStatus(sent.signature)).state).toBe("confirmed");
    expect(lamports(chain, taker.publicKey)).toBe(999_000_000n);
    expect(tokenBalance(chain, maker.publicKey, SOL)).toBe(makerWsol - 999_000_000n);
    expect(lamports(chain, maker.publicKey)).toBe(makerSol - fillFee(2, 200_000, 10_000n));
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(320_000_000n);
  });
});

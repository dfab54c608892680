/**
 * What LocalChain refuses or fails, as mainnet with the order-engine program would: bad signatures
 * and stale blockhashes never land; a fill the program rejects lands, fails and only costs the fee.
 */
import {
  createInitializeMintInstruction,
  createInitializeTransferFeeConfigInstruction,
  ExtensionType,
  getMintLen,
} from "@solana/spl-token";
import {
  Keypair,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { creditToken, fundTaker, lamports, tokenBalance } from "../../src/chain/local/seed.ts";
import { LIGHTHOUSE_PROGRAM_ID, TOKEN_2022_PROGRAM_ID } from "../../src/program/layout.ts";
import { fillFee, JUP, seededChain, signedFill, USDC } from "./helpers.ts";

const JUP_TO_USDC = { inputMint: JUP, outputMint: USDC, inputAmount: 1_000_000n, outputAmount: 25_000n };

function fundedTaker(chain: ReturnType<typeof seededChain>["chain"]): Keypair {
  const taker = Keypair.generate();
  fundTaker(chain, taker.publicKey, {
    sol: 100_000_000n,
    tokens: { [JUP.toBase58()]: 10_000_000n, [USDC.toBase58()]: 0n },
  });
  return taker;
}

describe("LocalChain refusals", () => {
  it("refuses a fill the taker did not sign and leaves every balance alone", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const makerSol = lamports(chain, maker.publicKey);
    const tx = await signedFill(chain, maker, taker, JUP_TO_USDC, [maker]);
    const sent = await chain.send(tx);
    expect(sent).toEqual({
      ok: false,
      error: expect.stringMatching(/^signature: missing signature for /),
      reached: "refused",
    });
    expect(lamports(chain, maker.publicKey)).toBe(makerSol);
    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(10_000_000n);
  });

  it("refuses a signature made by another key", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const tx = await signedFill(chain, maker, taker, JUP_TO_USDC);
    const impostor = Keypair.generate();
    const forged = await signedFill(chain, maker, impostor, JUP_TO_USDC, [maker, impostor]);
    tx.signatures[1] = forged.signatures[1] as Uint8Array;
    const sent = await chain.send(tx);
    expect(sent).toEqual({
      ok: false,
      error: `signature: invalid signature for ${taker.publicKey.toBase58()}`,
      reached: "refused",
    });
    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(10_000_000n);
  });

  it("refuses a transaction whose message changed after signing", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const tx = await signedFill(chain, maker, taker, JUP_TO_USDC);
    const fill = tx.message.compiledInstructions.find((ix) => ix.data.length === 35);
    if (!fill) throw new Error("no fill in the built transaction");
    fill.data[16] = (fill.data[16] ?? 0) + 1; // output_amount + 1
    const sent = await chain.send(tx);
    // The maker's signature, checked first, no longer covers the message.
    expect(sent).toEqual({
      ok: false,
      error: `signature: invalid signature for ${maker.publicKey.toBase58()}`,
      reached: "refused",
    });
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(0n);
  });

  it("refuses a stale blockhash and reports the transaction expired", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const tx = await signedFill(chain, maker, taker, JUP_TO_USDC);
    chain.advanceBlocks(151);
    const sent = await chain.send(tx);
    expect(sent).toEqual({
      ok: false,
      error: "blockhash: blockhash not found or expired",
      reached: "refused",
    });
    const signature = (await import("bs58")).default.encode(tx.signatures[0] as Uint8Array);
    expect(await chain.getSignatureStatus(signature)).toEqual({ state: "expired" });
    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(10_000_000n);
  });

  it("accepts a blockhash exactly 150 blocks old, the last block it is valid in (151 is refused above)", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const tx = await signedFill(chain, maker, taker, JUP_TO_USDC);
    chain.advanceBlocks(150);
    const sent = await chain.send(tx);
    expect(sent).toEqual({ ok: true, signature: expect.any(String) });
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(25_000n);
  });

  it("lands a fill past its expire_at as failed, charging only the fee", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const makerSol = lamports(chain, maker.publicKey);
    const now = await chain.getUnixTimestamp();
    const tx = await signedFill(chain, maker, taker, { ...JUP_TO_USDC, expireAt: now - 1n });
    const sent = await chain.send(tx);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    const status = await chain.getSignatureStatus(sent.signature);
    expect(status).toMatchObject({ state: "failed", error: expect.stringMatching(/fill expired/) });
    expect(lamports(chain, maker.publicKey)).toBe(makerSol - fillFee(2, 200_000, 10_000n));
    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(10_000_000n);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(0n);
  });

  it("rolls back the whole transaction when the taker cannot pay, its ATA creation included", async () => {
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, { sol: 100_000_000n, tokens: { [JUP.toBase58()]: 999_999n } });
    const tx = await signedFill(chain, maker, taker, { ...JUP_TO_USDC, createTakerOutputAta: true });
    const sent = await chain.send(tx);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    expect((await chain.getSignatureStatus(sent.signature)).state).toBe("failed");
    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(999_999n);
    expect(chain.account(getTakerUsdcAta(chain, taker))).toBeNull();
    expect(lamports(chain, taker.publicKey)).toBe(100_000_000n);
  });

  it("executes a transaction sent twice only once", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const tx = await signedFill(chain, maker, taker, JUP_TO_USDC);
    const first = await chain.send(tx);
    const second = await chain.send(tx);
    expect(second).toEqual(first);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(25_000n);
  });

  it("refuses a fill whose Token-2022 input mint charges a transfer fee", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const mint = Keypair.generate();
    const space = getMintLen([ExtensionType.TransferFeeConfig]);
    const payer = Keypair.generate();
    chain.airdrop(payer.publicKey, 1_000_000_000n);
    // The mint is made by the real Token-2022 program, not written by hand.
    const ixs = [
      SystemProgram.createAccount({
        fromPubkey: payer.publicKey,
        newAccountPubkey: mint.publicKey,
        lamports: Number(await chain.getMinimumBalanceForRentExemption(space)),
        space,
        programId: TOKEN_2022_PROGRAM_ID,
      }),
      createInitializeTransferFeeConfigInstruction(
        mint.publicKey,
        null,
        null,
        50,
        1_000_000n,
        TOKEN_2022_PROGRAM_ID,
      ),
      createInitializeMintInstruction(mint.publicKey, 6, payer.publicKey, null, TOKEN_2022_PROGRAM_ID),
    ];
    const { blockhash } = await chain.getLatestBlockhash();
    const setup = new VersionedTransaction(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: ixs,
      }).compileToV0Message(),
    );
    setup.sign([payer, mint]);
    const made = await chain.send(setup);
    expect(made.ok && (await chain.getSignatureStatus(made.signature)).state).toBe("confirmed");
    creditToken(chain, taker.publicKey, mint.publicKey, 0n);
    creditToken(chain, maker.publicKey, mint.publicKey, 0n);

    const tx = await signedFill(chain, maker, taker, {
      ...JUP_TO_USDC,
      inputMint: mint.publicKey,
      inputTokenProgram: TOKEN_2022_PROGRAM_ID,
    });
    const sent = await chain.send(tx);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    expect(await chain.getSignatureStatus(sent.signature)).toMatchObject({
      state: "failed",
      error: expect.stringMatching(/transfer fee/),
    });
  });

  it("refuses, without charging, a transaction carrying a Lighthouse instruction it does not emulate (MemoryWrite)", async () => {
    const { chain, maker } = seededChain();
    const taker = fundedTaker(chain);
    const assertion = new TransactionInstruction({
      programId: LIGHTHOUSE_PROGRAM_ID,
      keys: [{ pubkey: taker.publicKey, isSigner: false, isWritable: false }],
      data: Buffer.from([0, 0]),
    });
    const tx = await signedFill(chain, maker, taker, { ...JUP_TO_USDC, lighthouseInstructions: [assertion] });
    const sent = await chain.send(tx);
    expect(sent).toEqual({
      ok: false,
      error: expect.stringMatching(/^unsupported: Lighthouse instruction 0 is not emulated/),
      reached: "refused",
    });
  });
});

import { getAssociatedTokenAddressSync } from "@solana/spl-token";

function getTakerUsdcAta(_chain: unknown, taker: Keypair) {
  return getAssociatedTokenAddressSync(USDC, taker.publicKey, true);
}

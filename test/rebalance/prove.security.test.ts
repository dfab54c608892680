/**
 * The simulation's account check (src/rebalance/prove.ts) on its own, on the local chain (LiteSVM): the
 * second line behind the shape check. Through the rebalancer the shape check refuses these
 * instructions first (hostile-order-api.security.test.ts); an allowed swap program could still do the
 * same from inside (a CPI the shape check cannot see), so each effect is refused here by its own code,
 * whatever instruction caused it. A stranger pays the fees, so only the attack touches the maker; a
 * transaction that does nothing to the maker passes.
 */
import {
  AuthorityType,
  createApproveInstruction,
  createCloseAccountInstruction,
  createSetAuthorityInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from "@solana/spl-token";
import {
  PublicKey as Key,
  Keypair,
  type PublicKey,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { LocalChain } from "../../src/chain/local/index.ts";
import { creditSol, seedFromConfig } from "../../src/chain/local/seed.ts";
import { type OrderAmounts, proveTransaction } from "../../src/rebalance/prove.ts";
import { MINT, testConfig } from "../support/config.ts";

const config = testConfig();
const chain = LocalChain.create();
const maker = Keypair.generate().publicKey;
const payer = Keypair.generate().publicKey;
const stranger = Keypair.generate().publicKey;
seedFromConfig(chain, config.file, maker);
seedFromConfig(chain, config.file, stranger);
creditSol(chain, payer, 10_000_000_000n);

const ata = (mint: string, owner: PublicKey) => getAssociatedTokenAddressSync(new Key(mint), owner, true);
const ORDER: OrderAmounts = {
  inputMint: MINT.USDC,
  outputMint: MINT.JUP,
  inAmount: 1_000_000n,
  outAmount: 0n,
  declaredFeeLamports: 0n,
};

async function prove(ixs: TransactionInstruction[], order: OrderAmounts = ORDER) {
  const { blockhash } = await chain.getLatestBlockhash();
  const msg = new TransactionMessage({ payerKey: payer, recentBlockhash: blockhash, instructions: ixs });
  const tx = new VersionedTransaction(msg.compileToV0Message());
  return proveTransaction({ tx, order, maker, config, chain, maxFeeLamports: 5_000_000n });
}

describe("the simulation's account check alone", () => {
  it.each([
    [
      "refuses a new owner of the maker's USDC account (SetAuthority AccountOwner)",
      () => [
        createSetAuthorityInstruction(ata(MINT.USDC, maker), maker, AuthorityType.AccountOwner, stranger),
      ],
      "REBALANCE_OWNER_CHANGED",
    ],
    [
      "refuses a stranger as close authority of the maker's wSOL account",
      () => [
        createSetAuthorityInstruction(ata(MINT.SOL, maker), maker, AuthorityType.CloseAccount, stranger),
      ],
      "REBALANCE_CLOSE_AUTHORITY_CHANGED",
    ],
    [
      "refuses a stranger approved as delegate of the maker's JUP account",
      () => [createApproveInstruction(ata(MINT.JUP, maker), stranger, maker, 1n)],
      "REBALANCE_DELEGATE_CHANGED",
    ],
    [
      "refuses the maker's wallet assigned to another program",
      () => [SystemProgram.assign({ accountPubkey: maker, programId: stranger })],
      "REBALANCE_WALLET_OWNER_CHANGED",
    ],
    [
      "refuses the maker's wSOL account closed to a stranger (its SOL leaves the maker)",
      () => [createCloseAccountInstruction(ata(MINT.SOL, maker), stranger, maker)],
      "REBALANCE_SOL_LEFT_MAKER",
    ],
    [
      "refuses one lamport sent from the maker's wallet on a gasless order",
      () => [SystemProgram.transfer({ fromPubkey: maker, toPubkey: stranger, lamports: 1 })],
      "REBALANCE_SOL_LEFT_MAKER",
    ],
    [
      "refuses another of the maker's tokens moved (USDT)",
      () => [createTransferInstruction(ata(MINT.USDT, maker), ata(MINT.USDT, stranger), maker, 1n)],
      "REBALANCE_OTHER_TOKEN_MOVED",
    ],
    [
      "refuses one unit more than inAmount of the input mint",
      () => [createTransferInstruction(ata(MINT.USDC, maker), ata(MINT.USDC, stranger), maker, 1_000_001n)],
      "REBALANCE_INPUT_EXCEEDED",
    ],
  ])("%s", async (_name, ixs, code) => {
    const r = await prove(ixs());
    expect(r.ok ? "ok" : `${r.code}: ${r.context}`).toMatch(new RegExp(`^${code}: `));
  });

  it("refuses an order whose output does not arrive (outAmount 1, nothing delivered)", async () => {
    const r = await prove([], { ...ORDER, outAmount: 1n });
    expect(r.ok ? "ok" : r.code).toBe("REBALANCE_OUTPUT_BELOW_ORDER");
  });

  it("caps the fees an order declares for the maker at rebalance.maxFeeLamports: one lamport over the cap is refused, the cap itself passes", async () => {
    // The helper proves with maxFeeLamports 5,000,000; the order declares twice that for the maker.
    const declared = { ...ORDER, declaredFeeLamports: 10_000_000n };
    const pays = (lamports: number) => [
      SystemProgram.transfer({ fromPubkey: maker, toPubkey: stranger, lamports }),
    ];
    const over = await prove(pays(5_000_001), declared);
    expect(over.ok ? "ok" : `${over.code}: ${over.context}`).toMatch(
      /^REBALANCE_SOL_LEFT_MAKER: .*capped at rebalance\.maxFeeLamports, 5000000/,
    );
    expect((await prove(pays(5_000_000), declared)).ok).toBe(true);
  });

  it("accepts exactly inAmount of the input mint leaving, and a lamport sent when the order declares it", async () => {
    const pay = [
      createTransferInstruction(ata(MINT.USDC, maker), ata(MINT.USDC, stranger), maker, 1_000_000n),
    ];
    expect((await prove(pay)).ok).toBe(true);
    const lamport = [SystemProgram.transfer({ fromPubkey: maker, toPubkey: stranger, lamports: 1 })];
    expect((await prove(lamport, { ...ORDER, declaredFeeLamports: 1n })).ok).toBe(true);
    expect((await prove(lamport, { ...ORDER, declaredFeeLamports: 0n })).ok).toBe(false);
  });
});

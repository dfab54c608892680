/**
 * The companion transaction of a permissioned fill (src/issuance/companion.ts) is each fill's own: two
 * takers buying the same amount within one blockhash once got byte-identical companions (one
 * signature), and the second bundle was refused as already processed. Its tip transfer names the quote
 * by a reference key.
 */
import { createHash } from "node:crypto";
import { decodeBurnCheckedInstruction, decodeMintToCheckedInstruction } from "@solana/spl-token";
import {
  ComputeBudgetInstruction,
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemInstruction,
  SystemProgram,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import type { TokenConfig } from "../../config/schema.ts";
import { localTipAccounts } from "../../src/chain/local/bundle-engine.ts";
import { WIRE_ID_MAX } from "../../src/contract/common.ts";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { buildCompanion, companionReference, localCompanions } from "../../src/issuance/companion.ts";
import type { IssuanceNeed, IssuedToken } from "../../src/issuance/policy.ts";
import { TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { KeypairSigner } from "../../src/signing/keypair.ts";

const issuer = new KeypairSigner(Keypair.generate());
const maker = new KeypairSigner(Keypair.generate());
const tipAccount = localTipAccounts()[0] as PublicKey;
const need = (direction: "mint" | "burn"): IssuanceNeed => ({
  issued: {
    token: {
      mint: Keypair.generate().publicKey.toBase58(),
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      decimals: 6,
    } as TokenConfig,
    tipLamports: 10_000n,
  } as IssuedToken,
  direction,
  amount: 100_000_000n,
});

/** One fill's companion: everything but the quoteId fixed by the caller. */
const companion = (n: IssuanceNeed, makerTokenAccount: PublicKey, blockhash: string, quoteId: string) =>
  buildCompanion({
    need: n,
    makerTokenAccount,
    maker,
    issuer,
    tipAccount,
    recentBlockhash: blockhash,
    quoteId,
  });

/** The read-only, non-signing keys of the tip transfer after its two (from, to): the references. */
const referencesOf = (tx: VersionedTransaction): string[] => {
  const keys = tx.message.staticAccountKeys;
  const transfer = tx.message.compiledInstructions.find((i) =>
    keys[i.programIdIndex]?.equals(SystemProgram.programId),
  );
  return (transfer?.accountKeyIndexes.slice(2) ?? []).map((k) => (keys[k] as PublicKey).toBase58());
};

describe("companion transaction", () => {
  for (const direction of ["mint", "burn"] as const) {
    it(`${direction}: two fills of the same amount in one blockhash get different signatures, each naming its quote`, async () => {
      const n = need(direction);
      const blockhash = bs58.encode(Buffer.alloc(32, 7));
      const account = Keypair.generate().publicKey;
      const a = await companion(n, account, blockhash, "quote-a");
      const b = await companion(n, account, blockhash, "quote-b");
      expect(bs58.encode(a.signatures[0]!)).not.toBe(bs58.encode(b.signatures[0]!));
      expect(referencesOf(a)).toEqual([companionReference("quote-a").toBase58()]);
      expect(referencesOf(b)).toEqual([companionReference("quote-b").toBase58()]);
      expect(
        a.message.isAccountSigner(
          a.message.staticAccountKeys.findIndex((k) => k.equals(companionReference("quote-a"))),
        ),
      ).toBe(false);
      // The same quote built twice is the same transaction: a retried /swap sends what it sent.
      const again = await companion(n, account, blockhash, "quote-a");
      expect(Buffer.from(again.serialize())).toEqual(Buffer.from(a.serialize()));
    });
  }

  it("makes the reference a read-only key, so the companion locks nothing more than before", async () => {
    const longest = "q".repeat(WIRE_ID_MAX);
    const tx = await companion(
      need("burn"),
      Keypair.generate().publicKey,
      bs58.encode(Buffer.alloc(32, 1)),
      longest,
    );
    const keys = tx.message.staticAccountKeys;
    const i = keys.findIndex((k) => k.equals(companionReference(longest)));
    expect(i).toBeGreaterThan(0);
    expect(tx.message.isAccountWritable(i)).toBe(false);
    expect(tx.message.isAccountSigner(i)).toBe(false);
  });
});

/** The companion's instructions, decompiled with their accounts. */
const instructionsOf = (tx: VersionedTransaction) => TransactionMessage.decompile(tx.message).instructions;
const signedBy = (tx: VersionedTransaction, key: PublicKey) => {
  const i = tx.message.staticAccountKeys.findIndex((k) => k.equals(key));
  return (
    i >= 0 &&
    i < tx.message.header.numRequiredSignatures &&
    verifyEd25519(tx.message.serialize(), tx.signatures[i] as Uint8Array, key.toBytes())
  );
};

describe("companion transaction: what it does", () => {
  const blockhash = bs58.encode(Buffer.alloc(32, 9));

  it("the reference key is sha256 of 'rfq:' and the quoteId", () => {
    const digest = createHash("sha256").update("rfq:quote-7").digest();
    expect(companionReference("quote-7").toBase58()).toBe(bs58.encode(digest));
  });

  it("a buy's companion: 30,000 compute units, MintToChecked of the amount into the maker's account by the issuer, the tip from the issuer, paid and signed by the issuer alone", async () => {
    const n = need("mint");
    const account = Keypair.generate().publicKey;
    const tx = await companion(n, account, blockhash, "quote-m");
    expect(tx.message.recentBlockhash).toBe(blockhash);
    expect(tx.message.staticAccountKeys[0]?.equals(issuer.publicKey)).toBe(true);
    expect(tx.message.header.numRequiredSignatures).toBe(1);
    expect(signedBy(tx, issuer.publicKey)).toBe(true);
    const [budget, supply, tip] = instructionsOf(tx) as TransactionInstruction[];
    expect(instructionsOf(tx)).toHaveLength(3);
    expect(budget?.programId.equals(ComputeBudgetProgram.programId)).toBe(true);
    expect(ComputeBudgetInstruction.decodeSetComputeUnitLimit(budget as TransactionInstruction).units).toBe(
      30_000,
    );
    const minted = decodeMintToCheckedInstruction(supply as TransactionInstruction, TOKEN_PROGRAM_ID);
    expect(minted.keys.mint.pubkey.toBase58()).toBe(n.issued.token.mint);
    expect(minted.keys.destination.pubkey.equals(account)).toBe(true);
    expect(minted.keys.authority.pubkey.equals(issuer.publicKey)).toBe(true);
    expect(minted.data).toMatchObject({ amount: 100_000_000n, decimals: 6 });
    const transfer = SystemInstruction.decodeTransfer(tip as TransactionInstruction);
    expect(transfer.fromPubkey.equals(issuer.publicKey)).toBe(true);
    expect(transfer.toPubkey.equals(tipAccount)).toBe(true);
    expect(transfer.lamports).toBe(10_000n);
  });

  it("a sell's companion: BurnChecked of the amount from the maker's account by the maker, signed by the issuer and the maker", async () => {
    const n = need("burn");
    const account = Keypair.generate().publicKey;
    const tx = await companion(n, account, blockhash, "quote-b");
    expect(tx.message.header.numRequiredSignatures).toBe(2);
    expect(signedBy(tx, issuer.publicKey)).toBe(true);
    expect(signedBy(tx, maker.publicKey)).toBe(true);
    const supply = instructionsOf(tx)[1] as TransactionInstruction;
    const burned = decodeBurnCheckedInstruction(supply, TOKEN_PROGRAM_ID);
    expect(burned.keys.account.pubkey.equals(account)).toBe(true);
    expect(burned.keys.mint.pubkey.toBase58()).toBe(n.issued.token.mint);
    expect(burned.keys.owner.pubkey.equals(maker.publicKey)).toBe(true);
    expect(burned.data).toMatchObject({ amount: 100_000_000n, decimals: 6 });
  });

  it("a sell's companion when the issuer is the maker: one key, one signature", async () => {
    const tx = await buildCompanion({
      need: need("burn"),
      makerTokenAccount: Keypair.generate().publicKey,
      maker: issuer,
      issuer,
      tipAccount,
      recentBlockhash: blockhash,
      quoteId: "quote-same",
    });
    expect(tx.message.header.numRequiredSignatures).toBe(1);
    expect(signedBy(tx, issuer.publicKey)).toBe(true);
  });

  it("localCompanions: the issuer's key, and the companion built on the fill's blockhash", async () => {
    const maker2 = localCompanions(issuer, maker);
    expect(maker2.issuer.equals(issuer.publicKey)).toBe(true);
    const fill = new VersionedTransaction(
      new TransactionMessage({
        payerKey: maker.publicKey,
        recentBlockhash: blockhash,
        instructions: [],
      }).compileToV0Message(),
    );
    const n = need("burn");
    const account = Keypair.generate().publicKey;
    const made = await maker2.make({
      need: n,
      fill,
      makerTokenAccount: account,
      tipAccount,
      quoteId: "quote-l",
    });
    const direct = await companion(n, account, blockhash, "quote-l");
    expect(Buffer.from(made.serialize())).toEqual(Buffer.from(direct.serialize()));
  });
});

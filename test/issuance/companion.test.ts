/**
 * The companion transaction of a permissioned fill (src/issuance/companion.ts) is each fill's own: two
 * takers buying the same amount within one blockhash once got byte-identical companions (one
 * signature), and the second bundle was refused as already processed. Its tip transfer names the quote
 * by a reference key.
 */
import { Keypair, type PublicKey, SystemProgram, type VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import type { TokenConfig } from "../../config/schema.ts";
import { localTipAccounts } from "../../src/chain/local/bundle-engine.ts";
import { WIRE_ID_MAX } from "../../src/contract/common.ts";
import { buildCompanion, companionReference } from "../../src/issuance/companion.ts";
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

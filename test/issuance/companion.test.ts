/**
 * The companion transaction of a permissioned fill (src/issuance/companion.ts) is each fill's own: two
 * takers buying the same amount within one blockhash once got byte-identical companions (one
 * signature), and the second bundle was refused as already processed. Its tip transfer names the quote
 * by a reference key.
 */
import { Keypair, PublicKey, SystemProgram, type VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import type { TokenConfig } from "../../config/schema.ts";
import { buildCompanion, companionReference } from "../../src/issuance/companion.ts";
import type { IssuanceNeed, IssuedToken } from "../../src/issuance/policy.ts";
import { KeypairSigner } from "../../src/signer/index.ts";

const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const issuer = new KeypairSigner(Keypair.generate());
const maker = new KeypairSigner(Keypair.generate());
const need = (direction: "mint" | "burn"): IssuanceNeed => ({
  issued: {
    token: {
      mint: Keypair.generate().publicKey.toBase58(),
      tokenProgram: TOKEN_PROGRAM,
      decimals: 6,
    } as TokenConfig,
    tipLamports: 10_000n,
  } as IssuedToken,
  direction,
  amount: 100_000_000n,
});

async function companion(n: IssuanceNeed, quoteId: string, blockhash: string): Promise<VersionedTransaction> {
  return buildCompanion({
    need: n,
    makerTokenAccount: Keypair.generate().publicKey,
    maker,
    issuer,
    tipAccount: new PublicKey("96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5"),
    recentBlockhash: blockhash,
    quoteId,
  });
}

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
      const build = (quoteId: string) =>
        buildCompanion({
          need: n,
          makerTokenAccount: account,
          maker,
          issuer,
          tipAccount: new PublicKey("96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5"),
          recentBlockhash: blockhash,
          quoteId,
        });
      const a = await build("quote-a");
      const b = await build("quote-b");
      expect(bs58.encode(a.signatures[0]!)).not.toBe(bs58.encode(b.signatures[0]!));
      expect(referencesOf(a)).toEqual([companionReference("quote-a").toBase58()]);
      expect(referencesOf(b)).toEqual([companionReference("quote-b").toBase58()]);
      expect(
        a.message.isAccountSigner(
          a.message.staticAccountKeys.findIndex((k) => k.equals(companionReference("quote-a"))),
        ),
      ).toBe(false);
      // The same quote built twice is the same transaction: a retried /swap sends what it sent.
      const again = await build("quote-a");
      expect(Buffer.from(again.serialize())).toEqual(Buffer.from(a.serialize()));
    });
  }

  it("makes the reference a read-only key, so the companion locks nothing more than before", async () => {
    const tx = await companion(need("burn"), "q".repeat(128), bs58.encode(Buffer.alloc(32, 1)));
    const keys = tx.message.staticAccountKeys;
    const i = keys.findIndex((k) => k.equals(companionReference("q".repeat(128))));
    expect(i).toBeGreaterThan(0);
    expect(tx.message.isAccountWritable(i)).toBe(false);
    expect(tx.message.isAccountSigner(i)).toBe(false);
  });
});

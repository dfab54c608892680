/**
 * The local chain is as strict as mainnet where a kinder one would land what mainnet drops: it
 * verifies signatures with the chain-strict ed25519 of src/crypto/ed25519.ts (verify_strict: no
 * non-canonical S, no small-order keys), refuses a blockhash it never issued or that has expired, and
 * meters compute units in the SVM (test/chain/compute-units.test.ts). A dropped transaction charges
 * nothing.
 */
import { createHash } from "node:crypto";
import { ED25519_TORSION_SUBGROUP, ed25519 } from "@noble/curves/ed25519";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildFillTransaction } from "../../sandbox/fill/builder.ts";
import { fundTaker, lamports } from "../../src/chain/local/seed.ts";
import { TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { JUP, seededChain, signedFill, USDC } from "./helpers.ts";

const L = 2n ** 252n + 27742317777372353535851937790883648493n;

function setup() {
  const { chain, maker } = seededChain();
  const taker = Keypair.generate();
  fundTaker(chain, taker.publicKey, {
    sol: 1_000_000_000n,
    tokens: { [JUP.toBase58()]: 5_000_000n, [USDC.toBase58()]: 0n },
  });
  return { chain, maker, taker };
}

const FILL = { inputMint: JUP, outputMint: USDC, inputAmount: 1_000_000n, outputAmount: 25_000n };

describe("the local chain's strictness", () => {
  it("drops a fill whose taker signature carries a non-canonical S (S + L), charging nothing", async () => {
    const { chain, maker, taker } = setup();
    const tx = await signedFill(chain, maker, taker, FILL);
    const sig = tx.signatures[1] as Uint8Array;
    let s = 0n;
    for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(sig[32 + i] as number);
    s += L;
    for (let i = 0; i < 32; i++) sig[32 + i] = Number((s >> BigInt(8 * i)) & 0xffn);
    const before = lamports(chain, maker.publicKey);
    const outcome = chain.submit(tx);
    expect(outcome.kind === "dropped" && outcome.reason).toBe("signature");
    expect(lamports(chain, maker.publicKey)).toBe(before);
  });

  it("drops a fill 'signed' by a small-order taker key that the plain RFC 8032 equation accepts", async () => {
    const { chain, maker } = setup();
    // A small-order point (order 8) as the taker's key; R = [r]B and S = r satisfy [S]B = R + [k]A
    // whenever k is a multiple of 8: vary the compute-unit price until the message's k is one.
    const A = ed25519.ExtendedPoint.fromHex(ED25519_TORSION_SUBGROUP[1]!);
    const a = A.toRawBytes();
    const taker = new PublicKey(a);
    fundTaker(chain, taker, {
      sol: 1_000_000_000n,
      tokens: { [JUP.toBase58()]: 5_000_000n, [USDC.toBase58()]: 0n },
    });
    const r = 987654321n;
    const R = ed25519.ExtendedPoint.BASE.multiply(r).toRawBytes();
    const S = new Uint8Array(32);
    for (let i = 0; i < 32; i++) S[i] = Number((r >> BigInt(8 * i)) & 0xffn);
    const { blockhash } = await chain.getLatestBlockhash();
    let forged: ReturnType<typeof buildFillTransaction> | undefined;
    for (let price = 1n; price < 2_000n && !forged; price++) {
      const tx = buildFillTransaction({
        ...FILL,
        maker: maker.publicKey,
        taker,
        inputTokenProgram: TOKEN_PROGRAM_ID,
        outputTokenProgram: TOKEN_PROGRAM_ID,
        expireAt: (await chain.getUnixTimestamp()) + 30n,
        feeBps: 0,
        exactOut: false,
        computeUnitLimit: 60_000,
        computeUnitPrice: price,
        recentBlockhash: blockhash,
        createTakerOutputAta: false,
      });
      const m = tx.message.serialize();
      const digest = createHash("sha512").update(R).update(a).update(m).digest();
      const k = digest.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n) % ed25519.CURVE.n;
      if (A.multiplyUnsafe(k).equals(ed25519.ExtendedPoint.ZERO)) {
        tx.signatures[1] = new Uint8Array([...R, ...S]);
        // The forgery is real: it satisfies RFC 8032's cofactorless equation [S]B = R + [k]A.
        const P = ed25519.ExtendedPoint;
        expect(
          P.BASE.multiply(r).equals(P.fromHex(Buffer.from(R).toString("hex")).add(A.multiplyUnsafe(k))),
        ).toBe(true);
        forged = tx;
      }
    }
    if (!forged) throw new Error("no message with a suitable challenge found");
    forged.sign([maker]);
    const before = lamports(chain, maker.publicKey);
    const outcome = chain.submit(forged);
    expect(outcome.kind === "dropped" && outcome.reason).toBe("signature");
    expect(lamports(chain, maker.publicKey)).toBe(before);
  });

  it("drops a fill whose blockhash it never issued, and one whose blockhash expired", async () => {
    const { chain, maker, taker } = setup();
    const madeUp = await signedFill(chain, maker, taker, {
      ...FILL,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
    });
    expect(chain.submit(madeUp)).toMatchObject({ kind: "dropped", reason: "blockhash" });
    const old = await signedFill(chain, maker, taker, FILL);
    chain.advanceBlocks(151);
    expect(chain.submit(old)).toMatchObject({ kind: "dropped", reason: "blockhash" });
    expect(await chain.isBlockhashValid(old.message.recentBlockhash)).toBe(false);
  });
});

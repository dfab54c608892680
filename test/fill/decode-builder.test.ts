import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { Keypair, MessageV0, PublicKey, VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { buildFillTransaction, fillAmountsFromQuote } from "../../sandbox/fill/builder.ts";
import { decodeFillTransaction, deserializeFillTransaction } from "../../src/program/decode.ts";
import {
  NATIVE_MINT,
  ORDER_ENGINE_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  temporaryWsolAccount,
} from "../../src/program/layout.ts";
import type { StoredQuote } from "../../src/quote-store/interface.ts";
import { MINT } from "../support/config.ts";
import {
  acceptanceFixture,
  acceptanceFixtureBytes,
  acceptanceFixtureTx,
  paramsFromFillTx,
} from "./fixture.ts";

const JUP = new PublicKey(MINT.JUP);
const USDC = new PublicKey(MINT.USDC);

describe("decodeFillTransaction on the acceptance fixture", () => {
  it("decodes the header, keys, compute budget, ATA creation and the fill", () => {
    const r = decodeFillTransaction(acceptanceFixtureTx());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const d = r.decoded;
    expect(d.version).toBe(0);
    expect(d.header).toEqual({
      numRequiredSignatures: 2,
      numReadonlySignedAccounts: 0,
      numReadonlyUnsignedAccounts: 7,
    });
    expect(d.addressTableLookups).toBe(0);
    expect(d.recentBlockhash).toBe(acceptanceFixture.decoded.recentBlockhash);
    expect(d.staticKeys.map((k) => k.toBase58())).toEqual(
      acceptanceFixture.decoded.accountKeys.map((s) => s.split(" ")[0]),
    );
    expect(d.instructions.map((i) => i.kind)).toEqual([
      "computeUnitPrice",
      "computeUnitLimit",
      "ataCreateIdempotent",
      "fill",
    ]);
    const [price, limit] = d.computeBudget;
    expect(price?.kind === "computeUnitPrice" && price.microLamports).toBe(53_770n);
    expect(limit?.kind === "computeUnitLimit" && limit.units).toBe(38_941);
    const ata = d.ataCreations[0]?.named;
    expect(ata?.payer.index).toBe(1);
    expect(ata?.owner.index).toBe(1);
    expect(ata?.mint.key?.equals(USDC)).toBe(true);
    const fill = d.fills[0];
    expect(fill?.args).toEqual({
      inputAmount: 1_000_000_000n,
      outputAmount: 24_975_000n,
      expireAt: 1_739_139_690n,
      feeBps: 10,
      exactOut: false,
    });
    expect(fill?.accounts.map((a) => a.index)).toEqual([1, 0, 2, 5, 4, 3, 8, 9, 12, 9, 6]);
    expect(fill?.named?.inputMint.key?.equals(JUP)).toBe(true);
    expect(fill?.named?.temporaryWsolTokenAccount).toBeUndefined();
    expect(d.lighthouse).toHaveLength(0);
    expect(d.others).toHaveLength(0);
  });

  it("parses the wire bytes and refuses trailing bytes and garbage as problem values", () => {
    expect(deserializeFillTransaction(acceptanceFixture.transactionBase64).ok).toBe(true);
    const trailing = deserializeFillTransaction(Buffer.concat([acceptanceFixtureBytes(), Buffer.from([0])]));
    expect(trailing.ok).toBe(false);
    expect(deserializeFillTransaction(Buffer.from([1, 2, 3])).ok).toBe(false);
    expect(deserializeFillTransaction(new Uint8Array()).ok).toBe(false);
  });
});

describe("decodeFillTransaction structure problems", () => {
  const withParts = (edit: (m: MessageV0) => Partial<ConstructorParameters<typeof MessageV0>[0]>) => {
    const m = acceptanceFixtureTx().message as MessageV0;
    return new VersionedTransaction(
      new MessageV0({
        header: m.header,
        staticAccountKeys: m.staticAccountKeys,
        recentBlockhash: m.recentBlockhash,
        compiledInstructions: m.compiledInstructions,
        addressTableLookups: m.addressTableLookups,
        ...edit(m),
      }),
    );
  };

  it("reports a program index beyond the account keys as a problem, not an exception", () => {
    const tx = withParts((m) => ({
      compiledInstructions: [
        { programIdIndex: 13, accountKeyIndexes: [], data: new Uint8Array() },
        ...m.compiledInstructions,
      ],
    }));
    const r = decodeFillTransaction(tx);
    expect(!r.ok && r.problem).toBe("instruction 0 names program index 13, not a key");
  });

  it("reports an account index beyond the account keys", () => {
    const tx = withParts((m) => ({
      compiledInstructions: m.compiledInstructions.map((ci, i) =>
        i === 3 ? { ...ci, accountKeyIndexes: [...ci.accountKeyIndexes.slice(0, 10), 40] } : ci,
      ),
    }));
    const r = decodeFillTransaction(tx);
    expect(!r.ok && r.problem).toBe("instruction 3 names account index 40, not a key");
  });

  it("reports a signature count that differs from the header", () => {
    const tx = acceptanceFixtureTx();
    tx.signatures.push(new Uint8Array(64));
    const r = decodeFillTransaction(tx);
    expect(!r.ok && r.problem).toMatch(/carries 3 signatures but its message requires 2/);
  });

  it("reports a header with more signers than keys", () => {
    const tx = withParts((m) => ({ header: { ...m.header, numReadonlyUnsignedAccounts: 12 } }));
    const r = decodeFillTransaction(tx);
    expect(r.ok).toBe(false);
  });
});

describe("buildFillTransaction", () => {
  it("rebuilds the acceptance fixture byte for byte from its decoded parameters", () => {
    const original = acceptanceFixtureTx();
    const rebuilt = buildFillTransaction(paramsFromFillTx(original));
    expect(Buffer.from(rebuilt.message.serialize()).toString("hex")).toBe(
      Buffer.from(original.message.serialize()).toString("hex"),
    );
    expect(Buffer.from(rebuilt.serialize())).toEqual(acceptanceFixtureBytes());
  });

  it("passes the program id for a native-SOL output leg and appends the temporary wSOL PDA", () => {
    const maker = Keypair.generate().publicKey;
    const taker = Keypair.generate().publicKey;
    const tx = buildFillTransaction({
      maker,
      taker,
      inputMint: USDC,
      outputMint: NATIVE_MINT,
      inputTokenProgram: TOKEN_PROGRAM_ID,
      outputTokenProgram: TOKEN_PROGRAM_ID,
      inputAmount: 5_000_000n,
      outputAmount: 29_000_000n,
      expireAt: 2_000_000_000n,
      feeBps: 5,
      exactOut: true,
      computeUnitLimit: 60_000,
      computeUnitPrice: 1_000n,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
      createTakerOutputAta: false,
      nativeSolOut: true,
    });
    const r = decodeFillTransaction(tx);
    if (!r.ok) throw new Error(r.problem);
    const n = r.decoded.fills[0]?.named;
    expect(r.decoded.header.numRequiredSignatures).toBe(2);
    expect(r.decoded.staticKeys[0]?.equals(maker)).toBe(true);
    expect(r.decoded.staticKeys[1]?.equals(taker)).toBe(true);
    expect(n?.takerOutputTokenAccount.key?.equals(ORDER_ENGINE_PROGRAM_ID)).toBe(true);
    expect(n?.takerOutputTokenAccount.writable).toBe(false);
    expect(n?.temporaryWsolTokenAccount?.key?.equals(temporaryWsolAccount(maker))).toBe(true);
    expect(n?.temporaryWsolTokenAccount?.writable).toBe(true);
    expect(n?.takerInputTokenAccount.key?.equals(getAssociatedTokenAddressSync(USDC, taker, true))).toBe(
      true,
    );
    expect(r.decoded.fills[0]?.args?.exactOut).toBe(true);
  });

  it("derives Token-2022 ATAs with the mint's own token program", () => {
    const maker = Keypair.generate().publicKey;
    const taker = Keypair.generate().publicKey;
    const mint2022 = Keypair.generate().publicKey;
    const tx = buildFillTransaction({
      maker,
      taker,
      inputMint: mint2022,
      outputMint: USDC,
      inputTokenProgram: TOKEN_2022_PROGRAM_ID,
      outputTokenProgram: TOKEN_PROGRAM_ID,
      inputAmount: 1n,
      outputAmount: 1n,
      expireAt: 1n,
      feeBps: 0,
      exactOut: false,
      computeUnitLimit: 1,
      computeUnitPrice: 0n,
      recentBlockhash: Keypair.generate().publicKey.toBase58(),
      createTakerOutputAta: true,
    });
    const r = decodeFillTransaction(tx);
    if (!r.ok) throw new Error(r.problem);
    const n = r.decoded.fills[0]?.named;
    expect(
      n?.makerInputTokenAccount.key?.equals(
        getAssociatedTokenAddressSync(mint2022, maker, true, TOKEN_2022_PROGRAM_ID),
      ),
    ).toBe(true);
  });
});

describe("fillAmountsFromQuote", () => {
  it("takes the floor fee off the quoted output, as the fixture does (25,000,000 at 10 bps)", () => {
    const quote = {
      request: { feeBps: 10, quoteType: "exactIn" },
      response: { amountIn: "1000000000", amountOut: "25000000" },
    } as unknown as StoredQuote;
    expect(fillAmountsFromQuote(quote)).toEqual({
      inputAmount: 1_000_000_000n,
      outputAmount: 24_975_000n,
      feeBps: 10,
      exactOut: false,
    });
    const odd = {
      request: { feeBps: 3, quoteType: "exactOut" },
      response: { amountIn: "7", amountOut: "3333" },
    } as unknown as StoredQuote;
    // fee = floor(3333 * 3 / 10000) = 0
    expect(fillAmountsFromQuote(odd)).toEqual({
      inputAmount: 7n,
      outputAmount: 3333n,
      feeBps: 3,
      exactOut: true,
    });
  });
});

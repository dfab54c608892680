import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ed25519 } from "@noble/curves/ed25519";
import { Keypair, SystemProgram, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { KeypairSigner, loadOrCreateKeypair, readKeypairFile } from "../../src/signing/keypair.ts";

function txFor(payer: Keypair, other: Keypair): VersionedTransaction {
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: "3egafgGdVLBfYntpABAQueZdedLSSpgR9UWzM7hp4c8D",
    instructions: [
      SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: 1 }),
    ],
  }).compileToV0Message();
  return new VersionedTransaction(message);
}

describe("KeypairSigner", () => {
  it("produces the same ed25519 signature as web3.js's own signer (noble), in the maker's slot", () => {
    const maker = Keypair.generate();
    const taker = Keypair.generate();
    const tx = txFor(maker, taker);
    new KeypairSigner(maker).sign(tx);
    const expected = ed25519.sign(tx.message.serialize(), maker.secretKey.subarray(0, 32));
    expect(Buffer.from(tx.signatures[0]!)).toEqual(Buffer.from(expected));
    expect(tx.signatures[1]!.every((b) => b === 0)).toBe(true);
  });

  it("refuses to sign a message in which the maker is not a required signer", () => {
    const tx = txFor(Keypair.generate(), Keypair.generate());
    const stranger = Keypair.generate();
    expect(() => new KeypairSigner(stranger).sign(tx)).toThrow(
      `Can not add signature; \`${stranger.publicKey.toBase58()}\` is not required to sign this transaction`,
    );
    expect(tx.signatures.every((s) => s.every((b) => b === 0))).toBe(true);
  });
});

describe("keypair files", () => {
  it("creates a key once with owner-only permissions and reads the same key back", () => {
    const path = join(mkdtempSync(join(tmpdir(), "signer-")), "sub", "maker.json");
    const first = loadOrCreateKeypair(path);
    const second = loadOrCreateKeypair(path);
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.keypair.publicKey.equals(first.keypair.publicKey)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, "utf8"))).toHaveLength(64);
  });

  it.each([
    ["not JSON", "{"],
    ["the wrong length", JSON.stringify([1, 2, 3])],
    ["bytes out of range", JSON.stringify(Array.from({ length: 64 }, () => 300))],
  ])("names MAKER_KEYPAIR and the file when it holds %s", (_name, content) => {
    const path = join(mkdtempSync(join(tmpdir(), "signer-")), "bad.json");
    writeFileSync(path, content);
    expect(() => readKeypairFile(path)).toThrow(/MAKER_KEYPAIR: .*bad\.json/);
  });
});

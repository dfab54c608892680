/**
 * Chain-strict ed25519: every signature below satisfies the plain RFC 8032 equation `[S]B = R + [k]A`
 * (each test shows that first, computed with @noble/curves, so the test cannot pass by the signature
 * being plainly wrong; the OpenSSL of Node 20 accepted them all, Node 24's refuses some); Solana's
 * runtime refuses it (ed25519-dalek `verify_strict`), and so must we. The small-order points are built with @noble/curves, independently of the table in
 * src/crypto/ed25519.ts.
 */
import { createHash } from "node:crypto";
import { ED25519_TORSION_SUBGROUP, ed25519 } from "@noble/curves/ed25519";
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { ed25519SigningKey, signEd25519, strictRejection, verifyEd25519 } from "../../src/crypto/ed25519.ts";

const Point = ed25519.ExtendedPoint;
const L = ed25519.CURVE.n;

/** The cofactorless equation [S]B = R + [k]A, with `a` (the key's bytes, hashed into k) read as `A`. */
function equationHolds(
  message: Uint8Array,
  signature: Uint8Array,
  a: Uint8Array,
  A = Point.fromHex(hex(a), true),
): boolean {
  const rBytes = signature.subarray(0, 32);
  const R = Point.fromHex(hex(rBytes), true);
  const S = fromLe(signature.subarray(32));
  return Point.BASE.multiplyUnsafe(S).equals(R.add(A.multiplyUnsafe(challenge(rBytes, a, message))));
}

const le32 = (n: bigint): Uint8Array => {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
};
const fromLe = (b: Uint8Array): bigint => b.reduceRight((acc, x) => (acc << 8n) | BigInt(x), 0n);
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const sig = (r: Uint8Array, s: bigint) => new Uint8Array([...r, ...le32(s)]);

/** k = SHA-512(R || A || M) mod L, as both OpenSSL and dalek compute it. */
function challenge(r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint {
  return fromLe(createHash("sha512").update(r).update(a).update(m).digest()) % L;
}

/**
 * A signature under small-order key `a` that satisfies the cofactorless equation: R = [r]B, S = r, and
 * a message whose challenge k makes [k]A the identity (k a multiple of A's order; tried until found).
 */
function forgeUnderSmallOrderKey(
  a: Uint8Array,
  A = Point.fromHex(hex(a)),
): { message: Uint8Array; signature: Uint8Array } {
  const r = 123456789n;
  const R = Point.BASE.multiply(r).toRawBytes();
  for (let i = 0; i < 1000; i++) {
    const message = new TextEncoder().encode(`any message at all #${i}`);
    if (A.multiplyUnsafe(challenge(R, a, message)).equals(Point.ZERO)) {
      return { message, signature: sig(R, r) };
    }
  }
  throw new Error("no message found");
}

describe("verifyEd25519 refuses what Solana's strict verification refuses", () => {
  it("refuses a signature by the identity point over any message, which the plain equation accepts", () => {
    const identity = Point.ZERO.toRawBytes();
    expect(hex(identity)).toBe(`01${"00".repeat(31)}`);
    const { message, signature } = forgeUnderSmallOrderKey(identity);
    expect(equationHolds(message, signature, identity)).toBe(true);
    expect(verifyEd25519(message, signature, identity)).toBe(false);
    expect(strictRejection(signature, identity)).toBe("small-order public key");
  });

  it("refuses signatures by each of the eight small-order points (all encodings noble lists)", () => {
    // The torsion subgroup, generated here from one order-8 point, matches noble's own list.
    const gen = Point.fromHex(ED25519_TORSION_SUBGROUP[1]!);
    const torsion = Array.from({ length: 8 }, (_, i) => gen.multiplyUnsafe(BigInt(i)));
    expect(new Set(torsion.map((p) => p.toHex()))).toEqual(new Set(ED25519_TORSION_SUBGROUP));
    for (const point of torsion) {
      expect(point.isSmallOrder()).toBe(true);
      const key = point.toRawBytes();
      const { message, signature } = forgeUnderSmallOrderKey(key);
      expect(equationHolds(message, signature, key), point.toHex()).toBe(true);
      expect(verifyEd25519(message, signature, key), point.toHex()).toBe(false);
    }
  });

  it("refuses the x = 0 points written with the sign bit set", () => {
    for (const y of [`01${"00".repeat(31)}`, `ec${"ff".repeat(30)}7f`]) {
      const key = Buffer.from(y, "hex");
      key[31]! |= 0x80;
      expect(strictRejection(new Uint8Array(64), key)).toBe("small-order public key");
    }
  });

  it("refuses non-canonical public keys (y >= p), which the plain equation accepts", () => {
    // y = p + 1: the identity written non-canonically; y = p: the order-4 point y = 0.
    const pPlusOne = Buffer.from(`ee${"ff".repeat(30)}7f`, "hex");
    const p = Buffer.from(`ed${"ff".repeat(30)}7f`, "hex");
    for (const key of [pPlusOne, p]) {
      expect(strictRejection(new Uint8Array(64), key)).toBe("non-canonical public key (y >= p)");
    }
    // A forgery under the identity written as y = p + 1 (the challenge hashes these very bytes).
    const { message, signature } = forgeUnderSmallOrderKey(pPlusOne, Point.ZERO);
    expect(equationHolds(message, signature, pPlusOne, Point.ZERO)).toBe(true);
    expect(verifyEd25519(message, signature, pPlusOne)).toBe(false);
  });

  it("refuses a non-canonical S (S + L, and S = L) on an otherwise valid signature", () => {
    const kp = Keypair.generate();
    const message = new TextEncoder().encode("a fill message");
    const good = signEd25519(message, ed25519SigningKey(kp.secretKey));
    const key = kp.publicKey.toBytes();
    expect(verifyEd25519(message, good, key)).toBe(true);
    const s = fromLe(good.subarray(32));
    const malleated = sig(good.subarray(0, 32), s + L);
    expect(strictRejection(malleated, key)).toBe("non-canonical S (S >= L)");
    expect(verifyEd25519(message, malleated, key)).toBe(false);
    expect(strictRejection(sig(good.subarray(0, 32), L), key)).toBe("non-canonical S (S >= L)");
    expect(strictRejection(sig(good.subarray(0, 32), L - 1n), key)).toBeUndefined();
  });

  it("refuses a small-order R, which the plain equation accepts when S = k * a", () => {
    const kp = Keypair.generate();
    const key = kp.publicKey.toBytes();
    const { scalar } = ed25519.utils.getExtendedPublicKey(kp.secretKey.subarray(0, 32));
    const R = Point.ZERO.toRawBytes();
    const message = new TextEncoder().encode("a fill message");
    const signature = sig(R, (challenge(R, key, message) * scalar) % L);
    expect(equationHolds(message, signature, key)).toBe(true);
    expect(verifyEd25519(message, signature, key)).toBe(false);
    expect(strictRejection(signature, key)).toBe("small-order R");
  });

  it("accepts ordinary signatures by ordinary keys", () => {
    for (let i = 0; i < 50; i++) {
      const kp = Keypair.generate();
      const message = new TextEncoder().encode(`message ${i}`);
      const signature = signEd25519(message, ed25519SigningKey(kp.secretKey));
      expect(verifyEd25519(message, signature, kp.publicKey.toBytes())).toBe(true);
    }
  });
});

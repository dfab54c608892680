/**
 * Property: `isBase58Pubkey` (config/schema.ts), which checks a key without decoding it, says exactly
 * what `bs58.decode(s).length === 32` says (false where bs58 throws), for keys generated from bytes
 * and for strings near them: too short or long by a byte, with leading zero bytes ("1"s), mutated by
 * one character, and built from any characters at all.
 */
import bs58 from "bs58";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isBase58Pubkey } from "../../config/schema.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 58);
const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** The reference: what the check was before, decoding the key. */
function decodesTo32Bytes(s: string): boolean {
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}

/** Bytes of 30-34 length, often with leading zero bytes, encoded: around every length boundary. */
const encoded = fc
  .tuple(
    fc.integer({ min: 30, max: 34 }),
    fc.integer({ min: 0, max: 34 }),
    fc.uint8Array({ minLength: 34, maxLength: 34 }),
  )
  .map(([length, zeroes, random]) => {
    const bytes = random.slice(0, length);
    bytes.fill(0, 0, Math.min(zeroes, length));
    return bs58.encode(bytes);
  });

/** One character replaced, inserted or removed: often still base58, sometimes not. */
const mutated = fc
  .tuple(
    encoded,
    fc.nat(),
    fc.constantFrom("replace", "insert", "remove"),
    fc.oneof(
      fc.constantFrom(...ALPHABET),
      fc.constantFrom("0", "O", "I", "l", " ", "+", "/", "é", "\u0100", "😀", "\u00ff"),
    ),
  )
  .map(([s, at, how, c]) => {
    const i = at % (s.length + 1);
    if (how === "insert") return s.slice(0, i) + c + s.slice(i);
    if (how === "remove") return s.slice(0, i) + s.slice(i + 1);
    return s.slice(0, i) + c + s.slice(i + 1);
  });

const anyAlphabet = fc.string({ unit: fc.constantFrom(...ALPHABET), minLength: 30, maxLength: 46 });
const anyString = fc.string({ unit: "binary", minLength: 30, maxLength: 46 });

describe("isBase58Pubkey says what decoding says", () => {
  it("accepts and refuses as bs58.decode(s).length === 32 does, over generated and mutated keys", () => {
    fc.assert(
      fc.property(fc.oneof(encoded, mutated, anyAlphabet, anyString), (s) => {
        expect(isBase58Pubkey(s)).toBe(decodesTo32Bytes(s));
      }),
      { seed: SEED, numRuns: 20_000 },
    );
  });

  it.each([
    ["32 '1's: the all-zero key (the system program)", "1".repeat(32), true],
    ["31 '1's: 31 zero bytes", "1".repeat(31), false],
    ["33 '1's: 33 zero bytes", "1".repeat(33), false],
    ["2^256 - 1: the largest key", bs58.encode(new Uint8Array(32).fill(255)), true],
    ["2^256: 44 characters, 33 bytes", bs58.encode(Uint8Array.from([1, ...new Uint8Array(32)])), false],
    ["a valid key with an extra leading '1'", `1${bs58.encode(new Uint8Array(32).fill(7))}`, false],
    ["a key with a character outside the alphabet", `${"9".repeat(31)}0`, false],
    ["a character above 255", `${"9".repeat(31)}\u0100`, false],
  ])("%s: %s", (_name, key, valid) => {
    expect(decodesTo32Bytes(key)).toBe(valid);
    expect(isBase58Pubkey(key)).toBe(valid);
  });
});

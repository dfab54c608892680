/**
 * The `fill` instruction's bytes (src/program/layout.ts): what encodeFillData refuses to encode (each
 * field outside its on-chain type, named), where each field sits, what decodeFillData refuses to read,
 * and the operator's fee.
 */
import { describe, expect, it } from "vitest";
import { U64_MAX } from "../../amounts/u64.ts";
import {
  decodeFillData,
  encodeFillData,
  FILL_DATA_LENGTH,
  FILL_DISCRIMINATOR,
  type FillArgs,
  operatorFee,
} from "../../src/program/layout.ts";

const ARGS: FillArgs = {
  inputAmount: 1_000_000_000n,
  outputAmount: 24_975_000n,
  expireAt: 1_739_139_690n,
  feeBps: 10,
  exactOut: false,
};
const I64_MIN = -(1n << 63n);
const I64_MAX = (1n << 63n) - 1n;

describe("encodeFillData", () => {
  it("writes discriminator, amounts, expiry, fee and flags at the operator's offsets", () => {
    const b = encodeFillData({ ...ARGS, exactOut: true });
    expect(b.length).toBe(FILL_DATA_LENGTH);
    expect([...b.subarray(0, 8)]).toEqual([...FILL_DISCRIMINATOR]);
    expect(b.readBigUInt64LE(8)).toBe(1_000_000_000n);
    expect(b.readBigUInt64LE(16)).toBe(24_975_000n);
    expect(b.readBigInt64LE(24)).toBe(1_739_139_690n);
    expect(b.readUInt16LE(32)).toBe(10);
    expect(b[34]).toBe(1);
    expect(encodeFillData(ARGS)[34]).toBe(0);
  });

  it("encodes every field at the ends of its on-chain type", () => {
    for (const args of [
      { ...ARGS, inputAmount: 0n, outputAmount: 0n, expireAt: I64_MIN, feeBps: 0 },
      { ...ARGS, inputAmount: U64_MAX, outputAmount: U64_MAX, expireAt: I64_MAX, feeBps: 0xffff },
    ]) {
      expect(decodeFillData(encodeFillData(args))).toEqual(args);
    }
  });

  it.each([
    ["inputAmount", { inputAmount: -1n }, "inputAmount out of u64"],
    ["inputAmount", { inputAmount: U64_MAX + 1n }, "inputAmount out of u64"],
    ["outputAmount", { outputAmount: -1n }, "outputAmount out of u64"],
    ["outputAmount", { outputAmount: U64_MAX + 1n }, "outputAmount out of u64"],
    ["expireAt", { expireAt: I64_MIN - 1n }, "expireAt out of i64"],
    ["expireAt", { expireAt: I64_MAX + 1n }, "expireAt out of i64"],
    ["feeBps", { feeBps: -1 }, "feeBps out of u16"],
    ["feeBps", { feeBps: 0x10000 }, "feeBps out of u16"],
    ["feeBps", { feeBps: 1.5 }, "feeBps out of u16"],
  ] as const)("refuses %s %o outside its type, naming it", (_field, change, message) => {
    expect(() => encodeFillData({ ...ARGS, ...change })).toThrow(new RangeError(message));
  });
});

describe("decodeFillData", () => {
  it("reads back what encodeFillData wrote, exact-out flag included", () => {
    expect(decodeFillData(encodeFillData(ARGS))).toEqual(ARGS);
    expect(decodeFillData(encodeFillData({ ...ARGS, exactOut: true }))).toEqual({ ...ARGS, exactOut: true });
  });

  it("reads the fill where it sits inside a larger buffer (a subarray with an offset)", () => {
    const outer = Buffer.concat([Buffer.from([9, 9, 9]), encodeFillData(ARGS), Buffer.from([7])]);
    expect(decodeFillData(outer.subarray(3, 3 + FILL_DATA_LENGTH))).toEqual(ARGS);
  });

  it("takes only bit 0 of the flags byte as exact-out", () => {
    const b = encodeFillData(ARGS);
    b[34] = 0x02;
    expect(decodeFillData(b)?.exactOut).toBe(false);
    b[34] = 0x03;
    expect(decodeFillData(b)?.exactOut).toBe(true);
  });

  it("refuses data one byte short or long", () => {
    const b = encodeFillData(ARGS);
    expect(decodeFillData(b.subarray(0, FILL_DATA_LENGTH - 1))).toBeUndefined();
    expect(decodeFillData(Buffer.concat([b, Buffer.from([0])]))).toBeUndefined();
  });

  it.each([0, 7])("refuses a discriminator that differs in byte %i", (i) => {
    const b = encodeFillData(ARGS);
    b[i] = (b[i] ?? 0) ^ 0xff;
    expect(decodeFillData(b)).toBeUndefined();
  });
});

describe("operatorFee", () => {
  it("is the quoted amount times the bps over 10,000 (the fixture: 25,000,000 at 10 bps is 25,000)", () => {
    expect(operatorFee(25_000_000n, 10)).toBe(25_000n);
    expect(operatorFee(25_000_000n, 0)).toBe(0n);
  });

  it("rounds down: the operator never takes more than its bps", () => {
    expect(operatorFee(999n, 10)).toBe(0n);
    expect(operatorFee(19_999n, 5)).toBe(9n);
  });
});

/**
 * @solana/spl-token encodes and decodes every u64 (token amounts, mint supply, Token-2022 fee caps,
 * instruction amounts) through @solana/buffer-layout-utils, which calls `bigint-buffer`. The project
 * overrides `bigint-buffer` with a pure-JS replacement (package.json `overrides`, docs/dependencies.md),
 * so these tests pin that every encoding the service reads or writes is byte-for-byte the u64
 * little-endian the chain uses, at the boundaries: 0, 1, 2^63 and 2^64 - 1. The expected bytes come
 * from Node's own `writeBigUInt64LE`, not from the code under test.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import {
  ACCOUNT_SIZE,
  AccountState,
  createTransferCheckedInstruction,
  decodeTransferCheckedInstruction,
  ExtensionType,
  getTransferFeeConfig,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TRANSFER_FEE_CONFIG_SIZE,
  TransferFeeConfigLayout,
  unpackAccount,
  unpackMint,
} from "@solana/spl-token";
import { Keypair, PublicKey } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { encodeMint, encodeTokenAccount } from "../../src/chain/local/spl-state.ts";

const BOUNDARIES: [string, bigint][] = [
  ["0", 0n],
  ["1", 1n],
  ["2^63", 2n ** 63n],
  ["2^64 - 1", 2n ** 64n - 1n],
];

function u64le(v: bigint): string {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b.toString("hex");
}

const hexAt = (data: Uint8Array, offset: number) =>
  Buffer.from(data.subarray(offset, offset + 8)).toString("hex");

const key = () => Keypair.generate().publicKey;

describe("u64 encodings through @solana/spl-token are unchanged at the boundaries", () => {
  it.each(BOUNDARIES)("a token account's amount %s is written at bytes 64..72 and read back", (_, v) => {
    const data = encodeTokenAccount({ mint: key(), owner: key(), amount: v });
    expect(hexAt(data, 64)).toBe(u64le(v));
    const address = key();
    const acc = unpackAccount(address, {
      data: Buffer.from(data),
      owner: new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
      lamports: 1,
      executable: false,
    });
    expect(acc.amount).toBe(v);
    expect(acc.isInitialized).toBe(true);
  });

  it.each(BOUNDARIES)("a wrapped-SOL account's rent reserve %s is written at bytes 113..121", (_, v) => {
    const data = encodeTokenAccount({ mint: key(), owner: key(), amount: 5n, nativeRentReserve: v });
    expect(data.length).toBe(ACCOUNT_SIZE);
    // state u8 at 108, isNativeOption u32 at 109..113, isNative u64 at 113..121.
    expect(Buffer.from(data.subarray(109, 113)).readUInt32LE(0)).toBe(1);
    expect(hexAt(data, 113)).toBe(u64le(v));
  });

  it.each(BOUNDARIES)("a mint's supply %s is written at bytes 36..44 and unpackMint reads it", (_, v) => {
    const data = encodeMint({ mintAuthority: key(), supply: v, decimals: 6 });
    expect(data.length).toBe(MINT_SIZE);
    expect(hexAt(data, 36)).toBe(u64le(v));
    const mint = unpackMint(key(), {
      data: Buffer.from(data),
      owner: new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
      lamports: 1,
      executable: false,
    });
    expect(mint.supply).toBe(v);
    expect(MintLayout.decode(Buffer.from(data)).supply).toBe(v);
  });

  it.each(BOUNDARIES)(
    "a Token-2022 transfer fee cap %s decodes as the maker's inventory reads it",
    (_, v) => {
      // Token-2022 mint: base mint, padding to the account size, account type 1 (Mint), then the
      // TransferFeeConfig TLV (type u16, length u16, value). inventory/holdings.ts reads it this way.
      const ext = Buffer.alloc(TRANSFER_FEE_CONFIG_SIZE);
      const fee = (epoch: bigint) => ({ epoch, maximumFee: v, transferFeeBasisPoints: 0 });
      TransferFeeConfigLayout.encode(
        {
          transferFeeConfigAuthority: key(),
          withdrawWithheldAuthority: key(),
          withheldAmount: v,
          olderTransferFee: fee(0n),
          newerTransferFee: fee(v),
        },
        ext,
      );
      // Offsets in the extension value: withheld 64, older {epoch 72, max 80, bps 88}, newer {90, 98, 106}.
      expect(hexAt(ext, 64)).toBe(u64le(v));
      expect(hexAt(ext, 80)).toBe(u64le(v));
      expect(hexAt(ext, 90)).toBe(u64le(v));
      expect(hexAt(ext, 98)).toBe(u64le(v));

      const tlv = Buffer.alloc(4);
      tlv.writeUInt16LE(ExtensionType.TransferFeeConfig, 0);
      tlv.writeUInt16LE(TRANSFER_FEE_CONFIG_SIZE, 2);
      const base = Buffer.from(encodeMint({ mintAuthority: key(), supply: 1n, decimals: 6 }));
      const data = Buffer.concat([base, Buffer.alloc(ACCOUNT_SIZE - MINT_SIZE), Buffer.from([1]), tlv, ext]);
      const mint = unpackMint(
        key(),
        { data, owner: TOKEN_2022_PROGRAM_ID, lamports: 1, executable: false },
        TOKEN_2022_PROGRAM_ID,
      );
      const config = getTransferFeeConfig(mint);
      expect(config?.withheldAmount).toBe(v);
      expect(config?.olderTransferFee.maximumFee).toBe(v);
      expect(config?.newerTransferFee.epoch).toBe(v);
      expect(config?.newerTransferFee.maximumFee).toBe(v);
    },
  );

  it.each(BOUNDARIES)("a TransferChecked instruction carries amount %s at data bytes 1..9", (_, v) => {
    const ix = createTransferCheckedInstruction(key(), key(), key(), key(), v, 9);
    expect(ix.data[0]).toBe(12); // TransferChecked
    expect(hexAt(ix.data, 1)).toBe(u64le(v));
    expect(ix.data[9]).toBe(9);
    expect(decodeTransferCheckedInstruction(ix).data.amount).toBe(v);
  });

  it("an account state round-trips with the largest amounts in every u64 field at once", () => {
    const max = 2n ** 64n - 1n;
    const data = encodeTokenAccount({ mint: key(), owner: key(), amount: max, nativeRentReserve: max });
    const acc = unpackAccount(key(), {
      data: Buffer.from(data),
      owner: new PublicKey("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
      lamports: 1,
      executable: false,
    });
    expect([acc.amount, acc.rentExemptReserve, acc.delegatedAmount]).toEqual([max, max, 0n]);
    expect(AccountState.Initialized).toBe(1);
  });
});

describe("bigint-buffer in the production tree", () => {
  it("resolves, from @solana/buffer-layout-utils, to the pure-JS replacement", () => {
    const fromUtils = createRequire(createRequire(import.meta.url).resolve("@solana/buffer-layout-utils"));
    const pkg = fromUtils("bigint-buffer/package.json") as { name: string };
    expect(pkg.name).toBe("@exodus/bigint-buffer");
  });

  it("loading @solana/spl-token loads no addon but ws's allowlisted bufferutil, and prints nothing", () => {
    // The original bigint-buffer loads bigint_buffer.node (or prints "bigint: Failed to load
    // bindings"). What does load natively is ws's optional bufferutil (via @solana/web3.js), which
    // native-addons.json allows with its reason.
    const script =
      "require('@solana/spl-token');" +
      "const n = Object.keys(require.cache).filter((f) => f.endsWith('.node'));" +
      "process.stdout.write(JSON.stringify(n.map((f) => f.replace(/.*node_modules\\//, ''))));";
    const out = execFileSync(process.execPath, ["-e", script], { encoding: "utf8", stdio: "pipe" });
    const loaded = JSON.parse(out) as string[];
    expect(loaded.filter((f) => !f.startsWith("bufferutil/prebuilds/"))).toEqual([]);
  });
});

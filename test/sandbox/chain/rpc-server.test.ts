/**
 * The local JSON-RPC server through @solana/web3.js's own Connection (a real socket): each method
 * web3.js parses with its response schemas, so a wrong envelope fails here.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection, Keypair, SendTransactionError } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChainServer } from "../../../sandbox/chain/main.ts";
import { formatUnits, type RpcServer, startRpcServer } from "../../../sandbox/chain/rpc-server.ts";
import { chainSeedSchema } from "../../../sandbox/chain/seed-file.ts";
import type { LocalChain } from "../../../src/chain/local/index.ts";
import { ata, fundTaker, lamports } from "../../../src/chain/local/seed.ts";
import { TOKEN_PROGRAM_ID } from "../../../src/program/layout.ts";
import { config, fillFee, JUP, SOL, seededChain, signedFill, USDC } from "../../chain/helpers.ts";

let chain: LocalChain;
let maker: Keypair;
let server: RpcServer;
let conn: Connection;

beforeAll(async () => {
  ({ chain, maker } = seededChain());
  server = await startRpcServer(chain, { port: 0 });
  conn = new Connection(server.url, "confirmed");
});

afterAll(async () => {
  await server.close();
});

describe("local JSON-RPC server, read methods", () => {
  it("answers balances, token balances, slots and versions in web3.js's shapes", async () => {
    expect(await conn.getBalance(maker.publicKey)).toBe(Number(lamports(chain, maker.publicKey)));
    const bal = await conn.getTokenAccountBalance(ata(chain, maker.publicKey, USDC));
    expect(bal.value).toEqual({
      amount: "10000000000000",
      decimals: 6,
      uiAmount: 10_000_000,
      uiAmountString: "10000000",
    });
    expect(await conn.getBlockHeight()).toBe(Number(chain.blockHeight()));
    expect(await conn.getSlot()).toBe(Number(chain.blockHeight()));
    expect((await conn.getEpochInfo()).absoluteSlot).toBe(Number(chain.blockHeight()));
    expect((await conn.getVersion())["solana-core"]).toMatch(/^\d+\.\d+\.\d+$/);
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
    expect(lastValidBlockHeight).toBe(Number(chain.blockHeight()) + 150);
    expect((await conn.isBlockhashValid(blockhash)).value).toBe(true);
    expect((await conn.isBlockhashValid("11111111111111111111111111111111")).value).toBe(false);
  });

  it("reads mints at their configured mainnet addresses", async () => {
    const info = await conn.getAccountInfo(JUP);
    expect(info?.owner.equals(TOKEN_PROGRAM_ID)).toBe(true);
    expect(info?.data.length).toBe(82);
    expect(info?.data.readUInt8(44)).toBe(6); // decimals
    expect(await conn.getAccountInfo(Keypair.generate().publicKey)).toBeNull();
  });

  it("airdrops SOL and confirms the airdrop's signature", async () => {
    const who = Keypair.generate().publicKey;
    const sig = await conn.requestAirdrop(who, 2_000_000_000);
    expect(await conn.getBalance(who)).toBe(2_000_000_000);
    const status = await conn.getSignatureStatus(sig);
    expect(status.value?.confirmationStatus).toBe("finalized");
    expect(status.value?.err).toBeNull();
  });

  it("formats token amounts like the RPC's uiAmountString", () => {
    expect(formatUnits(1_500_000n, 6)).toBe("1.5");
    expect(formatUnits(5n, 6)).toBe("0.000005");
    expect(formatUnits(42n, 0)).toBe("42");
  });
});

describe("local JSON-RPC server, transactions", () => {
  async function fillTx(expireIn: bigint) {
    const taker = Keypair.generate();
    fundTaker(chain, taker.publicKey, { sol: 100_000_000n, tokens: { [JUP.toBase58()]: 5_000_000n } });
    const { blockhash } = await conn.getLatestBlockhash();
    const tx = await signedFill(chain, maker, taker, {
      inputMint: JUP,
      outputMint: USDC,
      inputAmount: 1_000_000n,
      outputAmount: 800_000n,
      expireAt: BigInt(Math.floor(Date.now() / 1000)) + expireIn,
      feeBps: 0,
      computeUnitLimit: 100_000,
      computeUnitPrice: 1n,
      recentBlockhash: blockhash,
      createTakerOutputAta: true,
    });
    return { tx, taker };
  }

  it("simulates a fill without committing it and reports the units it used", async () => {
    const { tx, taker } = await fillTx(30n);
    const sim = await conn.simulateTransaction(tx, { sigVerify: true });
    expect(sim.value.err).toBeNull();
    expect(sim.value.unitsConsumed).toBeGreaterThan(0);
    expect(await conn.getAccountInfo(ata(chain, taker.publicKey, USDC))).toBeNull();
  });

  it("with preflight, refuses an expired fill with the simulation's error and lands nothing", async () => {
    const { tx } = await fillTx(-10n);
    const err = await conn.sendTransaction(tx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendTransactionError);
    expect(String((err as Error).message)).toMatch(/fill expired/);
    const status = await conn.getSignatureStatus(
      (await import("bs58")).default.encode(tx.signatures[0] as Uint8Array),
    );
    expect(status.value).toBeNull();
  });

  it("sends a fill with preflight and confirms it", async () => {
    const { tx, taker } = await fillTx(30n);
    const sig = await conn.sendTransaction(tx);
    const status = await conn.getSignatureStatus(sig);
    expect(status.value?.err).toBeNull();
    expect((await conn.getTokenAccountBalance(ata(chain, taker.publicKey, USDC))).value.amount).toBe(
      "800000",
    );
  });

  it("reports a landed fill's fee, compute units, balances and logs as the local chain measured them", async () => {
    const { tx, taker } = await fillTx(30n);
    const keys = tx.message.staticAccountKeys;
    const lamportsBefore = keys.map((k) => lamports(chain, k));
    const makerUsdc = ata(chain, maker.publicKey, USDC);
    const makerUsdcBefore = (await conn.getTokenAccountBalance(makerUsdc)).value.amount;
    const sig = await conn.sendTransaction(tx, { skipPreflight: true });
    const got = await conn.getTransaction(sig, {
      maxSupportedTransactionVersion: 0,
      commitment: "confirmed",
    });
    const measured = chain.transaction(sig)?.meta;
    expect(measured).toBeDefined();
    const meta = got?.meta;
    // What the chain charged and moved, read independently of the meta.
    expect(meta?.fee).toBe(Number(fillFee(2, 100_000, 1n)));
    expect(meta?.fee).toBe(Number(measured?.fee));
    expect(meta?.preBalances).toEqual(lamportsBefore.map(Number));
    expect(meta?.postBalances).toEqual(keys.map((k) => Number(lamports(chain, k))));
    expect(lamportsBefore[0]! - lamports(chain, maker.publicKey)).toBe(BigInt(meta!.fee));
    expect(meta?.computeUnitsConsumed).toBe(Number(measured?.computeUnitsConsumed));
    expect(meta?.computeUnitsConsumed).toBeGreaterThan(0);
    expect(meta?.logMessages).toEqual(measured?.logMessages);
    expect(meta?.logMessages?.length).toBeGreaterThan(0);
    const usdcIndex = keys.findIndex((k) => k.equals(makerUsdc));
    const pre = meta?.preTokenBalances?.find((b) => b.accountIndex === usdcIndex);
    const post = meta?.postTokenBalances?.find((b) => b.accountIndex === usdcIndex);
    expect(pre).toMatchObject({
      mint: USDC.toBase58(),
      owner: maker.publicKey.toBase58(),
      programId: TOKEN_PROGRAM_ID.toBase58(),
      uiTokenAmount: { amount: makerUsdcBefore, decimals: 6 },
    });
    expect(BigInt(pre!.uiTokenAmount.amount) - BigInt(post!.uiTokenAmount.amount)).toBe(800_000n);
    // The taker's output account was created by the fill: only after.
    const takerUsdcIndex = keys.findIndex((k) => k.equals(ata(chain, taker.publicKey, USDC)));
    expect(meta?.preTokenBalances?.some((b) => b.accountIndex === takerUsdcIndex)).toBe(false);
    expect(meta?.postTokenBalances?.find((b) => b.accountIndex === takerUsdcIndex)?.uiTokenAmount).toEqual({
      amount: "800000",
      decimals: 6,
      uiAmount: 0.8,
      uiAmountString: "0.8",
    });
    const status = await conn.getSignatureStatus(sig);
    expect(status.value).toMatchObject({ err: null, confirmationStatus: "finalized", confirmations: null });
    expect(status.value?.slot).toBe(got?.slot);
  });

  it("answers unknown methods with JSON-RPC's method-not-found", async () => {
    const res = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "getNothing", params: [] }),
    });
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32601, message: "Method not found" },
    });
  });
});

describe("npm run chain", () => {
  it("seeds the maker and takers from a seed file and serves them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chain-seed-"));
    const seed = chainSeedSchema.parse({
      port: 0,
      maker: { keypair: join(dir, "maker.json"), inventory: { USDC: "123000000" } },
      takers: [{ keypair: join(dir, "taker.json"), sol: "7000000000", tokens: { SOL: "0", JUP: "5000000" } }],
    });
    const { server: s, banner, chain: c } = await runChainServer(seed, config.tokens);
    try {
      const conn2 = new Connection(s.url, "confirmed");
      const makerKey = Keypair.fromSecretKey(
        Uint8Array.from(JSON.parse((await import("node:fs")).readFileSync(join(dir, "maker.json"), "utf8"))),
      ).publicKey;
      expect((await conn2.getTokenAccountBalance(ata(c, makerKey, USDC))).value.amount).toBe("123000000");
      expect(banner).toContain(makerKey.toBase58());
      expect(banner).toMatch(/taker 1 .* 7000000000 lamports {2}SOL 0 {2}JUP 5000000/);
      expect(await conn2.getAccountInfo(ata(c, makerKey, SOL))).not.toBeNull();
    } finally {
      await s.close();
    }
  });

  it("rejects a seed file naming both a keypair and a pubkey", () => {
    const r = chainSeedSchema.safeParse({ maker: { keypair: "a.json", pubkey: maker.publicKey.toBase58() } });
    expect(r.success).toBe(false);
  });
});

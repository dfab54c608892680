/**
 * RpcChain (@solana/web3.js Connection) against the local chain's JSON-RPC server over a real
 * socket: proves the server answers what web3.js expects, and RpcChain's send / status / expiry, and
 * that its plain reads (src/chain/rpc-read.ts) simulate as the local chain itself does.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy } from "../../sandbox/chain/fault-proxy.ts";
import { type RpcServer, startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import type { UnsignedSimulation } from "../../src/chain/interface.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { ata, fundTaker, tokenBalance } from "../../src/chain/local/seed.ts";
import { readTokenAccount } from "../../src/chain/local/spl-state.ts";
import { RpcChain } from "../../src/chain/rpc.ts";
import { TOKEN_PROGRAM_ID } from "../../src/program/layout.ts";
import { JUP, seededChain, signedFill, USDC } from "./helpers.ts";

let chain: LocalChain;
let maker: Keypair;
let server: RpcServer;
let rpc: RpcChain;

beforeAll(async () => {
  ({ chain, maker } = seededChain());
  server = await startRpcServer(chain, { port: 0 });
  // Re-sending is driven by hand (resendPending) so that nothing here depends on timing.
  rpc = new RpcChain({ urls: [server.url], timeoutMs: 2_000, resendIntervalMs: 3_600_000 });
});

afterAll(async () => {
  await rpc.close();
  await server.close();
});

function newTaker(): Keypair {
  const taker = Keypair.generate();
  fundTaker(chain, taker.publicKey, {
    sol: 100_000_000n,
    tokens: { [JUP.toBase58()]: 10_000_000n, [USDC.toBase58()]: 0n },
  });
  return taker;
}

async function fill(taker: Keypair, expireIn = 30n) {
  // Blockhash and clock as the RPC reports them.
  const { blockhash } = await rpc.getLatestBlockhash();
  return signedFill(chain, maker, taker, {
    inputMint: JUP,
    outputMint: USDC,
    inputAmount: 1_000_000n,
    outputAmount: 812_000n,
    expireAt: (await rpc.getUnixTimestamp()) + expireIn,
    feeBps: 0,
    computeUnitLimit: 100_000,
    computeUnitPrice: 1_000n,
    recentBlockhash: blockhash,
  });
}

describe("RpcChain over the local JSON-RPC server", () => {
  it("reads accounts exactly as the local chain holds them, null for missing ones", async () => {
    const missing = Keypair.generate().publicKey;
    const makerAta = ata(chain, maker.publicKey, USDC);
    const [a, b, c] = await rpc.getAccounts([makerAta, missing, maker.publicKey]);
    expect(b).toBeNull();
    const local = chain.account(makerAta);
    expect(a?.owner.toBase58()).toBe(local?.owner.toBase58());
    expect(a?.lamports).toBe(local?.lamports);
    expect(Buffer.from(a?.data ?? []).equals(Buffer.from(local?.data ?? [1]))).toBe(true);
    expect(a?.executable).toBe(false);
    expect(c?.lamports).toBe(chain.account(maker.publicKey)?.lamports);
    expect(readTokenAccount(makerAta, a ?? null, TOKEN_PROGRAM_ID)?.amount).toBe(
      tokenBalance(chain, maker.publicKey, USDC),
    );
  });

  it("reads rent and the chain clock through the RPC", async () => {
    expect(await rpc.getMinimumBalanceForRentExemption(165)).toBe(
      await chain.getMinimumBalanceForRentExemption(165),
    );
    const viaRpc = await rpc.getUnixTimestamp();
    const local = await chain.getUnixTimestamp();
    expect(local - viaRpc).toBeGreaterThanOrEqual(0n);
    expect(local - viaRpc).toBeLessThanOrEqual(1n);
    expect(await rpc.ping()).toBe(true);
  });

  it("sends a signed fill that confirms and moves balances, then stops re-sending it", async () => {
    const taker = newTaker();
    const tx = await fill(taker);
    const sent = await rpc.send(tx);
    expect(sent).toEqual({ ok: true, signature: bs58.encode(tx.signatures[0] as Uint8Array) });
    if (!sent.ok) return;
    expect(await rpc.getSignatureStatus(sent.signature)).toMatchObject({ state: "confirmed" });
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(812_000n);
    expect(tokenBalance(chain, taker.publicKey, JUP)).toBe(9_000_000n);
    await rpc.resendPending();
    expect(rpc.inFlightCount()).toBe(0);
    // Sending again does not fill twice.
    expect((await rpc.send(tx)).ok).toBe(true);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(812_000n);
  });

  it("pre-flights a fill as the local chain does, and a failing one with the same error and logs", async () => {
    const taker = newTaker();
    const p = { inputMint: JUP, outputMint: USDC, inputAmount: 1_000_000n, outputAmount: 812_000n };
    const good = await signedFill(chain, maker, taker, p);
    const viaRpc = await rpc.preflight(good);
    expect(viaRpc).toEqual(await chain.preflight(good));
    expect(viaRpc.ok).toBe(true);

    const tooMuch = await signedFill(chain, maker, taker, { ...p, inputAmount: 20_000_000n });
    const failed = await rpc.preflight(tooMuch);
    expect(failed.ok).toBe(false);
    expect(failed).toEqual(await chain.preflight(tooMuch));
  });

  it("gives an unsigned simulation's post-state of the watched accounts as the local chain does", async () => {
    const taker = newTaker();
    const tx = await signedFill(
      chain,
      maker,
      taker,
      { inputMint: JUP, outputMint: USDC, inputAmount: 1_000_000n, outputAmount: 812_000n },
      [],
    );
    const watch = [
      ata(chain, taker.publicKey, JUP),
      ata(chain, maker.publicKey, JUP),
      Keypair.generate().publicKey,
    ];
    // The same bytes; the RPC's come as a Buffer (as web3.js gave them), the local chain's as a Uint8Array.
    const bytes = (s: UnsignedSimulation) =>
      s.ok ? { ...s, post: s.post.map((a) => a && { ...a, data: new Uint8Array(a.data) }) } : s;
    const viaRpc = await rpc.simulateUnsigned(tx, watch);
    expect(bytes(viaRpc)).toEqual(bytes(await chain.simulateUnsigned(tx, watch)));
    expect(viaRpc.ok && viaRpc.post.length).toBe(3);
    expect(viaRpc.ok && viaRpc.post[2]).toBeNull();
  });

  it("reports a fill the program rejects as failed", async () => {
    const taker = newTaker();
    const tx = await fill(taker, -5n);
    const sent = await rpc.send(tx);
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    expect(await rpc.getSignatureStatus(sent.signature)).toMatchObject({ state: "failed" });
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(0n);
  });

  it("answers a bad signature as a send failure, as mainnet RPC nodes do", async () => {
    const taker = newTaker();
    const tx = await fill(taker);
    tx.signatures[1] = new Uint8Array(64).fill(1);
    const sent = await rpc.send(tx);
    expect(sent).toEqual({
      ok: false,
      error: expect.stringMatching(/signature verification failure/i),
      reached: "refused",
    });
  });

  it("reports a transaction whose blockhash expired before it landed as expired", async () => {
    const taker = newTaker();
    const tx = await fill(taker);
    chain.advanceBlocks(151);
    const sent = await rpc.send(tx);
    // skipPreflight: the node takes it and the leader drops it, as on mainnet.
    expect(sent.ok).toBe(true);
    if (!sent.ok) return;
    expect(await rpc.getSignatureStatus(sent.signature)).toEqual({ state: "expired" });
    await rpc.resendPending();
    expect(rpc.inFlightCount()).toBe(0);
    expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(0n);
  });

  it("sends through every endpoint and succeeds while one of them is down", async () => {
    const dead = await startRpcServer(chain, { port: 0 });
    const deadUrl = dead.url;
    await dead.close();
    const multi = new RpcChain({
      urls: [server.url, deadUrl],
      timeoutMs: 2_000,
      resendIntervalMs: 3_600_000,
    });
    try {
      const taker = newTaker();
      const sent = await multi.send(await fill(taker));
      expect(sent.ok).toBe(true);
      expect(tokenBalance(chain, taker.publicKey, USDC)).toBe(812_000n);
    } finally {
      await multi.close();
    }
  });

  it("answers failures as values when the RPC is unreachable", async () => {
    const dead = await startRpcServer(chain, { port: 0 });
    const url = dead.url;
    await dead.close();
    const down = new RpcChain({ urls: [url], timeoutMs: 1_000, resendIntervalMs: 3_600_000 });
    try {
      expect(await down.ping()).toBe(false);
      expect((await down.send(await fill(newTaker()))).ok).toBe(false);
      expect(await down.getSignatureStatus(bs58.encode(new Uint8Array(64).fill(3)))).toMatchObject({
        state: "unknown",
      });
      await expect(down.getAccounts([PublicKey.default])).rejects.toThrow(/getMultipleAccounts failed/);
    } finally {
      await down.close();
    }
  });

  it("names every distinct send error over the attempts when none shows the transaction, not only the last attempt's", async () => {
    // The node goes down as the send arrives (the first attempt is cut: ambiguous), then refuses
    // every re-send; the last attempt alone would show only ECONNREFUSED (or its own short timeout).
    const proxy = await startFaultProxy(server.url);
    const cut = new RpcChain({ urls: [proxy.url], timeoutMs: 1_000, resendIntervalMs: 3_600_000 });
    try {
      const tx = await fill(newTaker());
      await proxy.set("refuse", ["sendTransaction"]);
      const sent = await cut.send(tx, { timeoutMs: 1_500 });
      expect(sent).toMatchObject({ ok: false, reached: "unknown" });
      const error = sent.ok ? "" : sent.error;
      expect(error).toMatch(/^not found on any RPC endpoint after \d+ send\(s\): /);
      expect(error).toMatch(/ECONNREFUSED/);
      // The first attempt's own error (the cut connection) is named too, once.
      const parts = error.slice(error.indexOf(": ") + 2).split("; ");
      expect(parts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(parts).size).toBe(parts.length);
    } finally {
      await cut.close();
      await proxy.close();
    }
  });
});

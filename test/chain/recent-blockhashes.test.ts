/**
 * The background cache of recent blockhashes (src/chain/recent-blockhashes.ts) against both Chain
 * adapters: the local chain directly, and RpcChain over the local chain's JSON-RPC server (a real
 * socket). Each adapter is wrapped only to count the isBlockhashValid calls the cache makes.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RpcServer, startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import type { Chain } from "../../src/chain/interface.ts";
import type { LocalChain } from "../../src/chain/local/index.ts";
import { RecentBlockhashes } from "../../src/chain/recent-blockhashes.ts";
import { RpcChain } from "../../src/chain/rpc.ts";
import { seededChain } from "./helpers.ts";

/** The Chain's blockhash calls, counting isBlockhashValid. */
function counted(chain: Chain) {
  const c = {
    validityCalls: 0,
    getLatestBlockhash: () => chain.getLatestBlockhash(),
    getBlockHeight: () => chain.getBlockHeight(),
    isBlockhashValid: (h: string) => {
      c.validityCalls++;
      return chain.isBlockhashValid(h);
    },
  };
  return c;
}

const VALIDITY = 150;
let local: LocalChain;
let server: RpcServer;
let rpc: RpcChain;

beforeAll(async () => {
  // Hour-long blocks: heights move only when a test advances them.
  ({ chain: local } = seededChain());
  server = await startRpcServer(local, { port: 0 });
  rpc = new RpcChain({ urls: [server.url] });
});

afterAll(async () => {
  await rpc.close();
  await server.close();
});

const adapters: [string, () => Chain][] = [
  ["local chain", () => local],
  ["RpcChain over JSON-RPC", () => rpc],
];

describe.each(adapters)("recent blockhashes (%s)", (_label, adapter) => {
  it("judges a blockhash it polled without calling the chain", async () => {
    const chain = counted(adapter());
    const cache = new RecentBlockhashes(chain, { slotMs: 3_600_000 });
    await cache.poll();
    const { blockhash } = await local.getLatestBlockhash();
    const v = await cache.check(blockhash, 20n);
    expect(v).toEqual({ ok: true, known: true, blocksLeft: BigInt(VALIDITY) });
    expect(chain.validityCalls).toBe(0);
  });

  it("refuses a made-up blockhash as not found after exactly one isBlockhashValid call", async () => {
    const chain = counted(adapter());
    const cache = new RecentBlockhashes(chain, { slotMs: 3_600_000 });
    await cache.poll();
    const v = await cache.check(Keypair.generate().publicKey.toBase58(), 20n);
    expect(v.ok ? "ok" : v.code).toBe("BLOCKHASH_NOT_FOUND");
    expect(chain.validityCalls).toBe(1);
  });

  it("accepts with one call a valid blockhash issued after its last poll, its age unknown", async () => {
    const chain = counted(adapter());
    const cache = new RecentBlockhashes(chain, { slotMs: 3_600_000 });
    await cache.poll();
    local.advanceBlocks(3);
    const { blockhash } = await local.getLatestBlockhash();
    expect(await cache.check(blockhash, 20n)).toEqual({ ok: true, known: false });
    expect(chain.validityCalls).toBe(1);
  });

  it("refuses a known blockhash with fewer blocks left than a fill needs to land", async () => {
    const chain = counted(adapter());
    const cache = new RecentBlockhashes(chain, { slotMs: 3_600_000 });
    await cache.poll();
    const { blockhash } = await local.getLatestBlockhash();
    local.advanceBlocks(VALIDITY - 19);
    await cache.poll();
    const v = await cache.check(blockhash, 20n);
    expect(v).toMatchObject({ ok: false, code: "BLOCKHASH_AGE_EXCEEDED", blocksLeft: 19n });
    expect(await cache.check(blockhash, 19n)).toMatchObject({ ok: true, blocksLeft: 19n });
    expect(chain.validityCalls).toBe(0);
  });

  it("refuses a known blockhash that has expired, without calling the chain", async () => {
    const chain = counted(adapter());
    const cache = new RecentBlockhashes(chain, { slotMs: 3_600_000 });
    await cache.poll();
    const { blockhash } = await local.getLatestBlockhash();
    local.advanceBlocks(VALIDITY + 1);
    await cache.poll();
    const v = await cache.check(blockhash, 0n);
    expect(v.ok ? "ok" : v.code).toBe("BLOCKHASH_NOT_FOUND");
    expect(chain.validityCalls).toBe(0);
  });

  it("extrapolates the height between polls at the block time, so a stalled poll ages blockhashes", async () => {
    let nowMs = 1_000_000;
    const cache = new RecentBlockhashes(counted(adapter()), { slotMs: 400, now: () => nowMs });
    await cache.poll();
    const { blockhash } = await local.getLatestBlockhash();
    nowMs += 400 * (VALIDITY - 10);
    expect(await cache.check(blockhash, 20n)).toMatchObject({
      ok: false,
      code: "BLOCKHASH_AGE_EXCEEDED",
      blocksLeft: 10n,
    });
  });
});

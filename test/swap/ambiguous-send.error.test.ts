/**
 * A send that fails after the transaction may have reached the chain is not a rejection. The swap
 * path runs with the production chain adapter (RpcChain, @solana/web3.js) over a real socket to the
 * local chain's JSON-RPC server, through a proxy the test cuts (sandbox/chain/fault-proxy.ts, a
 * stand-in for the network path to the RPC node):
 *
 *  - the node takes the transaction and the connection is reset before the answer: the webhook looks
 *    the signature up, answers `accepted`, and the fill lands and settles once;
 *  - the node cannot be reached at all: the answer says the transaction did not reach the chain, and
 *    the reservation is released as soon as the blockhash has expired (not after a fixed 180 s);
 *  - every send is reset before it reaches the node: no endpoint shows it, and the answer says so
 *    within the send step.
 */
import { Keypair, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultProxy, startFaultProxy } from "../../sandbox/chain/fault-proxy.ts";
import { type RpcServer, startRpcServer } from "../../sandbox/chain/rpc-server.ts";
import { LocalChain } from "../../src/chain/local/index.ts";
import { seedFromConfig, tokenBalance } from "../../src/chain/local/seed.ts";
import { RpcChain } from "../../src/chain/rpc.ts";
import { MINT, testConfig } from "../support/config.ts";
import { CountingSigner, createHarness, type Harness, inProcess, postSwap } from "../support/harness.ts";
import { signedJupFill } from "./setup.ts";

let h: Harness;
let server: RpcServer;
let proxy: FaultProxy;
let rpc: RpcChain;
let signer: CountingSigner;

beforeAll(async () => {
  const maker = Keypair.generate();
  const chain = LocalChain.create();
  seedFromConfig(chain, testConfig().file, maker.publicKey);
  server = await startRpcServer(chain, { port: 0 });
  proxy = await startFaultProxy(server.url);
  rpc = new RpcChain({ urls: [proxy.url], timeoutMs: 1_000, resendIntervalMs: 3_600_000 });
  h = await createHarness({
    chain,
    maker,
    wrapChain: () => rpc,
    wrapSigner: (s) => {
      signer = new CountingSigner(s);
      return signer;
    },
    // A 3 s send step keeps the "never found" case short; the look-up and re-sends happen inside it.
    swap: { steps: { send: 3_000 } },
  });
});

afterAll(async () => {
  await h.close();
  await proxy.close();
  await server.close();
});

const jupOf = (owner: Keypair) => tokenBalance(h.chain, owner.publicKey, new PublicKey(MINT.JUP));

describe("ambiguous sends over JSON-RPC", () => {
  it("answers accepted when the RPC reset the connection after taking the transaction, and the fill lands once", async () => {
    const http = inProcess(h.app);
    const { body, taker, response } = await signedJupFill(h, http, 5_000_000_000n);
    const jupBefore = jupOf(taker);
    await proxy.set("reset-after", ["sendTransaction"]);
    try {
      const res = await postSwap(http, body);
      expect(res.body.state).toBe("accepted");
      expect(res.body.txSignature).toBeDefined();
    } finally {
      await proxy.set("pass");
    }
    expect(proxy.seen.get("sendTransaction")?.faulted).toBeGreaterThanOrEqual(1);
    expect(await h.confirmations.settled(response.quoteId)).toBe("landed");
    expect(jupBefore - jupOf(taker)).toBe(1_000_000_000n);
  });

  it("says the transaction did not reach the chain when the RPC goes down before the send, and releases the reservation once the blockhash expires", {
    timeout: 20_000,
  }, async () => {
    const http = inProcess(h.app);
    const { body, taker, response } = await signedJupFill(h, http, 5_000_000_000n);
    const jupBefore = jupOf(taker);
    const signs = signer.count;
    // The node goes down as the transaction is sent: the reads and the pre-flight simulation worked.
    await proxy.set("refuse", ["sendTransaction"]);
    let answer: Awaited<ReturnType<typeof postSwap>>;
    try {
      answer = await postSwap(http, body);
    } finally {
      await proxy.set("pass");
    }
    expect(answer.body.state).toBe("rejected");
    expect(answer.body.rejectionReason).toMatch(/^the transaction did not reach the chain.*ECONNREFUSED/);
    expect(signer.count - signs).toBe(1); // signed, never delivered
    expect((await h.inventory.reservations()).map((r) => r.quoteId)).toContain(response.quoteId);
    // The blockhash dies: the next confirmation poll settles it, not trackForMs (180 s) later.
    h.chain.advanceBlocks(200);
    const expiredAt = Date.now();
    expect(await h.confirmations.settled(response.quoteId)).toBe("expired");
    expect(Date.now() - expiredAt).toBeLessThan(5_000);
    expect((await h.inventory.reservations()).map((r) => r.quoteId)).not.toContain(response.quoteId);
    expect(jupOf(taker)).toBe(jupBefore);
  });

  it("says no endpoint shows the transaction when every send is reset before reaching the node", {
    timeout: 20_000,
  }, async () => {
    const http = inProcess(h.app);
    const { body, taker } = await signedJupFill(h, http, 5_000_000_000n);
    const jupBefore = jupOf(taker);
    await proxy.set("reset-before", ["sendTransaction"]);
    const t0 = Date.now();
    let answer: Awaited<ReturnType<typeof postSwap>>;
    try {
      answer = await postSwap(http, body);
    } finally {
      await proxy.set("pass");
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(answer.body.state).toBe("rejected");
    expect(answer.body.rejectionReason).toMatch(
      /^the transaction did not reach the chain as far as any RPC endpoint shows \(not found on any RPC endpoint after \d+ send\(s\)/,
    );
    // Several sends, each cut before the node: nothing landed.
    expect(proxy.seen.get("sendTransaction")?.faulted).toBeGreaterThan(1);
    expect(jupOf(taker)).toBe(jupBefore);
  });
});

/**
 * The swap path's RPC reads as plain JSON-RPC calls (src/chain/rpc-read.ts), in place of web3.js'
 * `Connection` and its superstruct checks:
 * - the requests are the ones `Connection` sends for the same calls (captured side by side);
 * - through the local chain's JSON-RPC server, simulations give what the local chain itself gives
 *   (test/chain/rpc.test.ts);
 * - an answer without what is used, or with it in another shape, fails the call naming the method and
 *   the field (counted as a failed call), as web3.js' schema errors did, and never reads as data.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Connection, Keypair, PublicKey, SYSVAR_CLOCK_PUBKEY } from "@solana/web3.js";
import { afterEach, describe, expect, it } from "vitest";
import { ChainUnavailableError, RpcChain } from "../../src/chain/rpc.ts";
import { accountsOf, RpcAnswerError, simulationOf, statusesOf } from "../../src/chain/rpc-read.ts";
import { JUP, seededChain, signedFill, USDC } from "./helpers.ts";

interface Captured {
  method: string;
  params: unknown;
}

/** A JSON-RPC endpoint that records each request and answers it with `answer(method)`. */
async function fakeNode(
  answer: (method: string) => unknown,
): Promise<{ url: string; seen: Captured[]; server: Server }> {
  const seen: Captured[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const r = JSON.parse(body) as { id: unknown; method: string; params: unknown };
      seen.push({ method: r.method, params: r.params });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: r.id, result: answer(r.method) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

/** An RpcChain on an endpoint that answers every request with `body`, as written. */
async function rawNode(body: string): Promise<RpcChain> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return new RpcChain({ urls: [url], timeoutMs: 2_000, resendIntervalMs: 3_600_000 });
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

const slotted = (value: unknown) => ({ context: { slot: 7 }, value });
const account = (over: Record<string, unknown> = {}) => ({
  owner: "11111111111111111111111111111111",
  lamports: 1_000_000,
  data: [Buffer.from("abc").toString("base64"), "base64"],
  executable: false,
  rentEpoch: 0,
  space: 3,
  ...over,
});
const simulation = (over: Record<string, unknown> = {}) =>
  slotted({
    err: null,
    logs: ["Program log: ok"],
    accounts: null,
    unitsConsumed: 1234,
    returnData: null,
    ...over,
  });

/** A valid answer for each method the reads use. */
function validAnswer(method: string): unknown {
  if (method === "getMultipleAccounts") return slotted([account(), null]);
  if (method === "getAccountInfo")
    return slotted(account({ data: [Buffer.alloc(40).toString("base64"), "base64"] }));
  if (method === "getSignatureStatuses")
    return slotted([{ slot: 5, confirmations: null, err: null, confirmationStatus: "confirmed" }]);
  if (method === "simulateTransaction") return simulation();
  throw new Error(`no answer for ${method}`);
}

describe("the swap path's RPC reads ask what web3.js' Connection asks", () => {
  it("sends the same method and params as Connection for accounts, the clock, statuses and both simulations", async () => {
    const ours = await fakeNode(validAnswer);
    const theirs = await fakeNode(validAnswer);
    servers.push(ours.server, theirs.server);
    const rpc = new RpcChain({ urls: [ours.url], timeoutMs: 2_000, resendIntervalMs: 3_600_000 });
    const conn = new Connection(theirs.url, { commitment: "confirmed" });
    const keys = [Keypair.generate().publicKey, Keypair.generate().publicKey];
    const sig = "5cmMCFnetpWGFkjRUb145mBpjqgTHS56nMqXR7U5JYCHMYkoAn5C8abY5oGje1BLwQuwtuuBfjwe5Apf9kVyvZVk";
    const { chain, maker } = seededChain();
    const taker = Keypair.generate();
    const tx = await signedFill(chain, maker, taker, {
      inputMint: JUP,
      outputMint: USDC,
      inputAmount: 1n,
      outputAmount: 1n,
    });

    await rpc.getAccounts(keys);
    await conn.getMultipleAccountsInfo(keys);
    await rpc.getUnixTimestamp();
    await conn.getAccountInfo(SYSVAR_CLOCK_PUBKEY);
    await rpc.getSignatureStatus(sig);
    await conn.getSignatureStatuses([sig], { searchTransactionHistory: false });
    await rpc.preflight(tx);
    await conn.simulateTransaction(tx, {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment: "processed",
    });
    await rpc.simulateUnsigned(tx, keys);
    await conn.simulateTransaction(tx, {
      sigVerify: false,
      replaceRecentBlockhash: false,
      commitment: "processed",
      accounts: { encoding: "base64", addresses: keys.map((k) => k.toBase58()) },
    });
    await rpc.close();

    expect(ours.seen.map((c) => c.method)).toEqual([
      "getMultipleAccounts",
      "getAccountInfo",
      "getSignatureStatuses",
      "simulateTransaction",
      "simulateTransaction",
    ]);
    expect(ours.seen).toEqual(theirs.seen);
  });
});

describe("an RPC answer without what the reads use fails the call, naming the method and the field", () => {
  it("refuses statuses of another count, a slot that is not one, and a confirmation status that is not a string", () => {
    expect(() => statusesOf(slotted([]), 1)).toThrow(
      "getSignatureStatuses answer: value has 0 entries for 1 asked",
    );
    expect(() => statusesOf(slotted([{ slot: "5", err: null }]), 1)).toThrow(
      'getSignatureStatuses answer: value[0].slot is not a slot: "5"',
    );
    expect(() => statusesOf(slotted([{ slot: 5, err: null, confirmationStatus: 2 }]), 1)).toThrow(
      "value[0].confirmationStatus is not a string",
    );
    expect(() => statusesOf({ result: [] }, 1)).toThrow("getSignatureStatuses answer: no value");
    expect(statusesOf(slotted([null, { slot: 5, err: null, confirmationStatus: "processed" }]), 2)).toEqual([
      undefined,
      undefined,
    ]);
    expect(statusesOf(slotted([{ slot: 9, err: { InstructionError: [0, { Custom: 1 }] } }]), 1)).toEqual([
      { state: "failed", error: '{"InstructionError":[0,{"Custom":1}]}', slot: 9n },
    ]);
  });

  it("refuses an account whose owner, lamports, data or executable flag is not what an account has", () => {
    const one = (a: unknown) => () => accountsOf(slotted([a]), 1);
    expect(one(account({ owner: "not-a-key!" }))).toThrow(
      "getMultipleAccounts answer: value[0].owner is not a public key",
    );
    expect(one(account({ lamports: -1 }))).toThrow("value[0].lamports is not an amount: -1");
    expect(one(account({ data: ["abc", "base58"] }))).toThrow('value[0].data is not [data, "base64"]');
    expect(one(account({ executable: "no" }))).toThrow("value[0].executable is not a boolean");
    expect(one(7)).toThrow("value[0] is not an account");
    expect(accountsOf(slotted([account(), null]), 2)).toEqual([
      {
        owner: new PublicKey("11111111111111111111111111111111"),
        lamports: 1_000_000n,
        data: Buffer.from("abc"),
        executable: false,
      },
      null,
    ]);
  });

  it("refuses a simulation without its error field, with a log that is not a string, or with a unit count that is not one", () => {
    expect(() => simulationOf(slotted({ logs: [] }))).toThrow(
      "simulateTransaction answer: value.err is missing",
    );
    expect(() => simulationOf(simulation({ logs: ["a", 3] }))).toThrow("value.logs[1] is not a string");
    expect(() => simulationOf(simulation({ unitsConsumed: 1.5 }))).toThrow(
      "value.unitsConsumed is not a count: 1.5",
    );
    expect(simulationOf(simulation({ err: "AccountNotFound", logs: null, unitsConsumed: null }))).toEqual({
      error: "AccountNotFound",
      logs: [],
      unitsConsumed: 0n,
      accounts: undefined,
    });
  });

  it("fails RpcChain's read as a ChainUnavailableError naming the field, and counts it as a failed call", async () => {
    const node = await fakeNode((m) =>
      m === "getMultipleAccounts" ? slotted([account({ lamports: true })]) : validAnswer(m),
    );
    servers.push(node.server);
    const failed: string[] = [];
    const rpc = new RpcChain({
      urls: [node.url],
      timeoutMs: 2_000,
      resendIntervalMs: 3_600_000,
      onError: (m) => failed.push(m),
    });
    const read = rpc.getAccounts([Keypair.generate().publicKey]);
    await expect(read).rejects.toBeInstanceOf(ChainUnavailableError);
    await expect(read).rejects.toThrow(
      "chain getMultipleAccounts failed: getMultipleAccounts answer: value[0].lamports is not an amount: true",
    );
    expect(failed).toEqual(["getMultipleAccounts"]);
    await rpc.close();
    expect(new RpcAnswerError("m", "x").message).toBe("m answer: x");
  });

  it("reads lamports past 2^53 exactly, as the node wrote them, where a JSON number would round", async () => {
    // 10,000,000,002,039,281 is odd, so no double holds it: JSON.parse alone gives ...280.
    const big = "10000000002039281";
    expect(String(BigInt(JSON.parse(big) as number))).not.toBe(big);
    const owner = "11111111111111111111111111111111";
    // As a node writes it, and once with the spaces a pretty-printing proxy adds.
    const rpc = await rawNode(
      `{"jsonrpc":"2.0","id":1,"result":{"context":{"slot":7},"value":[` +
        `{"data":["","base64"],"executable":false,"lamports":${big},"owner":"${owner}","rentEpoch":18446744073709551615,"space":0},` +
        `{"data":["","base64"],"executable":false,"lamports" : ${big}0,"owner":"${owner}","rentEpoch":0,"space":0},` +
        `{"data":["","base64"],"executable":false,"lamports":2039280,"owner":"${owner}","rentEpoch":0,"space":0}]}}`,
    );
    const keys = [0, 1, 2].map(() => Keypair.generate().publicKey);
    expect((await rpc.getAccounts(keys)).map((a) => a?.lamports)).toEqual([
      10_000_000_002_039_281n,
      100_000_000_020_392_810n,
      2_039_280n,
    ]);
    await rpc.close();
    // A number that already lost its digits is refused, never read rounded; so is one past a u64.
    expect(() => accountsOf(slotted([account({ lamports: 2 ** 53 })]), 1)).toThrow(
      "value[0].lamports is not an amount",
    );
    expect(() => accountsOf(slotted([account({ lamports: "18446744073709551616" })]), 1)).toThrow(
      "value[0].lamports is not an amount",
    );
  });

  it("reports a JSON-RPC error answer with the node's code and message", async () => {
    const rpc = await rawNode(
      JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "Invalid param: WrongSize" } }),
    );
    await expect(rpc.getAccounts([Keypair.generate().publicKey])).rejects.toThrow(
      "chain getMultipleAccounts failed: getMultipleAccounts: the node answered -32602: Invalid param: WrongSize",
    );
    await rpc.close();
  });
});

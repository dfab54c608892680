/**
 * Simulate, then sign (issue 45): the webhook simulates a fill WITHOUT the maker's signature and signs
 * only one that passed. The sandbox stack (the chain's JSON-RPC server, the signer service and the
 * webhook each in their own process, the operator simulator here), with a recording proxy between the
 * webhook and its RPC: every request the webhook sends the chain is kept. A taker appends a Lighthouse
 * assertion naming the maker's wallet that fails; the fill is refused, the maker's accounts are byte
 * for byte unchanged, and the maker's signature of that message (worked out here: Ed25519 is
 * deterministic) is in no log and in no request the webhook sent. An honest fill afterwards shows the
 * search can see a maker signature when there is one: it is in the webhook's sendTransaction.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import {
  PublicKey,
  type TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../sandbox/operator/stack.ts";
import { ed25519SigningKey, signEd25519 } from "../../src/crypto/ed25519.ts";
import { readKeypairFile } from "../../src/signing/keypair.ts";
import { freePort } from "../../tooling/processes.ts";
import { takerLamportsAbove } from "../fill/tamper.ts";
import { MINT } from "../support/config.ts";
import { type RecordingProxy, startRecordingProxy } from "../support/recording-proxy.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("preflight-unsigned");
let stack: Stack;
let proxy: RecordingProxy;

beforeAll(async () => {
  const chainPort = await freePort();
  proxy = await startRecordingProxy(`http://127.0.0.1:${chainPort}`);
  stack = await startStack({
    dir,
    ports: { chain: chainPort },
    remoteSigner: true,
    takers: [{ name: "t", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n, JUP: 5_000_000_000n } }],
    // Debug: every line the webhook can write about a swap is in the log searched below.
    webhookLogLevel: "debug",
    webhookEnv: { RPC_URL: proxy.url },
    operator: { quoteTimeoutMs: 5_000 },
  });
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await proxy?.close();
});

async function rpc(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(stack.chainUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(JSON.stringify(body.error));
  return body.result;
}

/** The maker's wallet and token accounts as raw account bytes: lamports, owner, data (amount, owner, delegate, close authority). */
async function makerAccounts(maker: PublicKey): Promise<unknown> {
  const keys = [
    maker,
    ...[MINT.USDC, MINT.JUP].map((m) => getAssociatedTokenAddressSync(new PublicKey(m), maker, true)),
  ];
  const r = (await rpc("getMultipleAccounts", [keys.map((k) => k.toBase58()), { encoding: "base64" }])) as {
    value: unknown[];
  };
  return r.value;
}

type Order = { transaction: string; requestId: string; maker: string };

async function order(params: Record<string, string>): Promise<Order> {
  const taker = stack.takers[0]!;
  const res = await fetch(
    `${stack.operatorUrl}/ultra/v1/order?${new URLSearchParams({ ...params, taker: taker.keypair.publicKey.toBase58() })}`,
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Order;
}

/** The order's transaction with `extra` appended after the fill, signed by the taker as a wallet does. */
function signWithAppended(o: Order, extra: TransactionInstruction[]): VersionedTransaction {
  const built = VersionedTransaction.deserialize(Buffer.from(o.transaction, "base64"));
  const message = TransactionMessage.decompile(built.message);
  message.instructions.push(...extra);
  const tx = new VersionedTransaction(message.compileToV0Message());
  tx.sign([stack.takers[0]!.keypair]);
  return tx;
}

async function execute(tx: VersionedTransaction, requestId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.operatorUrl}/ultra/v1/execute?swapType=rfq`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ signedTransaction: Buffer.from(tx.serialize()).toString("base64"), requestId }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** The maker's signature of `tx`'s message, and the spellings a log or a request could carry it in. */
function makerSignature(tx: VersionedTransaction): { sig: Buffer; spellings: string[] } {
  const maker = readKeypairFile(join(dir, "maker-keypair.json"));
  const sig = Buffer.from(signEd25519(tx.message.serialize(), ed25519SigningKey(maker.secretKey)));
  return {
    sig,
    spellings: [
      bs58.encode(sig),
      sig.toString("base64"),
      sig.toString("hex"),
      JSON.stringify(Array.from(sig)),
    ],
  };
}

/**
 * Whether a request body carries the signature: as text in any spelling, or as bytes inside any string
 * that decodes as base64 or base58 (a transaction carries its signatures at byte offsets that base64
 * does not align, so a plain text search would miss them).
 */
function bodyCarries(body: string, sig: Buffer, spellings: string[]): boolean {
  if (spellings.some((s) => body.includes(s))) return true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  const strings: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") strings.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(parsed);
  for (const s of strings) {
    if (s.length < 64) continue;
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(s) && Buffer.from(s, "base64").indexOf(sig) >= 0) return true;
    try {
      if (Buffer.from(bs58.decode(s)).indexOf(sig) >= 0) return true;
    } catch {}
  }
  return false;
}

/** Every log line of every process of the stack. */
function allLogs(): string {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}

/** The transactions the webhook asked its RPC to simulate, with the config it asked for. */
function simulations(): { tx: VersionedTransaction; config: Record<string, unknown> }[] {
  const out: { tx: VersionedTransaction; config: Record<string, unknown> }[] = [];
  for (const body of proxy.bodies) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      continue;
    }
    for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
      const c = call as { method?: string; params?: [string, Record<string, unknown>] };
      if (c.method !== "simulateTransaction" || !c.params) continue;
      out.push({
        tx: VersionedTransaction.deserialize(Buffer.from(c.params[0], "base64")),
        config: c.params[1],
      });
    }
  }
  return out;
}

describe("the pre-flight simulates before the maker signs", () => {
  it("refuses a fill whose Lighthouse assertion on the maker's wallet fails: no maker signature in any log or any RPC request, the maker's accounts unchanged", async () => {
    const o = await order({
      inputMint: MINT.USDC,
      outputMint: MINT.JUP,
      amount: "10000000",
      swapMode: "ExactIn",
    });
    expect(o.maker).toBe(stack.maker);
    const maker = new PublicKey(o.maker);
    const tx = signWithAppended(o, [takerLamportsAbove(maker, 10n ** 18n)]);
    const before = await makerAccounts(maker);
    const requestsBefore = proxy.bodies.length;
    const x = await execute(tx, o.requestId);
    expect(x.status).toBe("Failed");
    expect(await makerAccounts(maker)).toEqual(before);

    // The webhook did simulate it, through the proxy, with the maker's slot empty and sigVerify off.
    const message = Buffer.from(tx.message.serialize());
    const ours = simulations().filter((s) => Buffer.from(s.tx.message.serialize()).equals(message));
    expect(ours).toHaveLength(1);
    expect(ours[0]!.config).toMatchObject({ sigVerify: false, replaceRecentBlockhash: false });
    expect(ours[0]!.tx.signatures[0]!.every((b) => b === 0)).toBe(true);
    expect(proxy.bodies.length).toBeGreaterThan(requestsBefore);
    // Its refusal names the simulated error in the webhook's log.
    const logs = allLogs();
    expect(logs).toContain("fill not sent: pre-flight simulation failed");

    const { sig, spellings } = makerSignature(tx);
    for (const s of spellings)
      expect(logs.includes(s), `a log carries the maker signature (${s})`).toBe(false);
    const carrying = proxy.bodies.filter((b) => bodyCarries(b, sig, spellings));
    expect(carrying, "requests to the RPC carrying the maker signature").toEqual([]);
  }, 60_000);

  it("an honest fill lands, and its maker signature is seen where it belongs: the webhook's sendTransaction and the signer's log", async () => {
    const o = await order({
      inputMint: MINT.USDC,
      outputMint: MINT.JUP,
      amount: "10000001",
      swapMode: "ExactIn",
    });
    const maker = new PublicKey(o.maker);
    const tx = signWithAppended(o, [takerLamportsAbove(maker, 1n)]);
    const x = await execute(tx, o.requestId);
    expect(x).toMatchObject({ status: "Success", code: 0 });
    const { sig, spellings } = makerSignature(tx);
    expect(readFileSync(join(dir, "signer.log"), "utf8")).toContain(spellings[0]!);
    const sends = proxy.bodies.filter((b) => b.includes('"sendTransaction"'));
    expect(sends.some((b) => bodyCarries(b, sig, spellings))).toBe(true);
  }, 60_000);
});

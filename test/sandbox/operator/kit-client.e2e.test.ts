/**
 * One client that is not ours: a taker written the way the operator's own end-to-end suite writes
 * it (toolkit tests/suites/integration/swap.ts), with @solana/kit and lighthouse-sdk, against the
 * sandbox as `npm run sandbox` composes it (startStack: the chain's JSON-RPC server and the webhook
 * as their own processes, Redis, the operator simulator). It decodes the order's base64 transaction,
 * partially signs it, re-encodes it and executes it; for the Lighthouse cases it decompiles the
 * message, appends an assertion after the fill and compiles it again, as a wallet does. Balances are
 * read over JSON-RPC with kit's RPC client; the expected movements are worked out here from the
 * maker's quoted figures (the order's routePlan), not taken from the order's own totals.
 */

import {
  type Address,
  address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createKeyPairFromBytes,
  createSolanaRpc,
  decompileTransactionMessage,
  getBase64Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type IInstruction,
  partiallySignTransaction,
  pipe,
} from "@solana/kit";
import { getAssociatedTokenAddressSync } from "@solana/spl-token";
import { PublicKey } from "@solana/web3.js";
import {
  accountInfoAssertion,
  getAssertAccountInfoInstruction,
  getAssertTokenAccountInstruction,
  IntegerOperator,
  tokenAccountAssertion,
} from "lighthouse-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../../sandbox/operator/stack.ts";
import { MINT } from "../../support/config.ts";
import { fileTempDir } from "../../support/tmp.ts";

const dir = fileTempDir("kit-client");
let stack: Stack;
let taker: { address: Address; keyPair: Awaited<ReturnType<typeof createKeyPairFromBytes>> };
let rpc: ReturnType<typeof createSolanaRpc>;

beforeAll(async () => {
  stack = await startStack({
    dir,
    takers: [{ name: "kit", sol: 20_000_000_000n, tokens: { USDC: 5_000_000_000n, JUP: 5_000_000_000n } }],
    webhookLogLevel: "warn",
  });
  const t = stack.takers[0]!;
  taker = {
    address: address(t.keypair.publicKey.toBase58()),
    keyPair: await createKeyPairFromBytes(t.keypair.secretKey),
  };
  rpc = createSolanaRpc(stack.chainUrl);
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

type Order = Record<string, unknown> & { transaction: string; requestId: string; maker: string };

async function order(params: Record<string, string>): Promise<Order> {
  const res = await fetch(
    `${stack.operatorUrl}/ultra/v1/order?${new URLSearchParams({ ...params, taker: taker.address })}`,
  );
  expect(res.status).toBe(200);
  return (await res.json()) as Order;
}

async function execute(signedTransaction: string, requestId: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.operatorUrl}/ultra/v1/execute?swapType=rfq`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ signedTransaction, requestId }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** Decode, partially sign, encode: the toolkit's steps, byte for byte. */
async function signAsIs(b64: string): Promise<string> {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(b64));
  const signed = await partiallySignTransaction([taker.keyPair], tx);
  return getBase64Decoder().decode(getTransactionEncoder().encode(signed));
}

type Message = ReturnType<typeof decompileTransactionMessage>;

/** Decompile, optionally edit, append `extra` after the fill, compile, partially sign, encode. */
async function signWithAppended(
  b64: string,
  extra: IInstruction[],
  edit: (m: Message) => Message = (m) => m,
): Promise<string> {
  const tx = getTransactionDecoder().decode(getBase64Encoder().encode(b64));
  const message = edit(
    decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(tx.messageBytes)),
  );
  const signed = await pipe(
    extra.reduce((m, ix) => appendTransactionMessageInstruction(ix, m) as Message, message),
    (m) => compileTransaction(m),
    (t) => partiallySignTransaction([taker.keyPair], t),
  );
  return getBase64Decoder().decode(getTransactionEncoder().encode(signed));
}

const ata = (owner: string, mint: string) =>
  address(getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true).toBase58());

async function tokens(owner: string, mint: string): Promise<bigint> {
  const { value } = await rpc.getTokenAccountBalance(ata(owner, mint)).send();
  return BigInt(value.amount);
}

async function sol(owner: string): Promise<bigint> {
  return (await rpc.getBalance(address(owner)).send()).value;
}

async function balances(maker: string) {
  return {
    takerSol: await sol(taker.address),
    takerUsdc: await tokens(taker.address, MINT.USDC),
    takerJup: await tokens(taker.address, MINT.JUP),
    makerSol: await sol(maker),
    makerUsdc: await tokens(maker, MINT.USDC),
    makerJup: await tokens(maker, MINT.JUP),
  };
}

const quoted = (o: Order) => {
  const step = (o.routePlan as { swapInfo: { inAmount: string; outAmount: string } }[])[0]!.swapInfo;
  return { in: BigInt(step.inAmount), out: BigInt(step.outAmount) };
};
/** The operator's fee, rounded down: amount x bps / 10,000. */
const feeOn = (amount: bigint, bps: bigint) => (amount * bps) / 10_000n;

describe("a @solana/kit taker against the sandbox", () => {
  it("ExactIn 100 JUP to USDC: Success; the taker pays exactly 100 JUP and receives the quote less 10 bps", async () => {
    const o = await order({
      inputMint: MINT.JUP,
      outputMint: MINT.USDC,
      amount: "100000000",
      swapMode: "ExactIn",
    });
    const q = quoted(o);
    const net = q.out - feeOn(q.out, 10n);
    const before = await balances(o.maker);
    const x = await execute(await signAsIs(o.transaction), o.requestId);
    expect(x).toMatchObject({ status: "Success", code: 0 });
    const after = await balances(o.maker);
    expect(before.takerJup - after.takerJup).toBe(100_000_000n);
    expect(after.takerUsdc - before.takerUsdc).toBe(net);
    expect(after.makerJup - before.makerJup).toBe(100_000_000n);
    expect(before.makerUsdc - after.makerUsdc).toBe(net);
    expect(o.outAmount).toBe(net.toString());
  }, 60_000);

  it("ExactOut SOL for exactly 1 USDC: Success; the taker receives 1,000,000 USDC units and pays the quote plus the fee in SOL", async () => {
    const o = await order({
      inputMint: MINT.SOL,
      outputMint: MINT.USDC,
      amount: "1000000",
      swapMode: "ExactOut",
    });
    const q = quoted(o);
    // The smallest gross G with G - floor(G x 10 / 10,000) = the quoted amountIn.
    let gross = q.in;
    while (gross - feeOn(gross, 10n) < q.in) gross++;
    const before = await balances(o.maker);
    const x = await execute(await signAsIs(o.transaction), o.requestId);
    expect(x).toMatchObject({ status: "Success", code: 0 });
    const after = await balances(o.maker);
    expect(after.takerUsdc - before.takerUsdc).toBe(1_000_000n);
    expect(before.takerSol - after.takerSol).toBe(gross);
    expect(before.makerUsdc - after.makerUsdc).toBe(1_000_000n);
    expect(o).toMatchObject({ outAmount: "1000000", inAmount: gross.toString(), feeMint: MINT.SOL });
  }, 60_000);

  it("ExactIn 10 USDC to JUP with a passing Lighthouse assertion appended (the toolkit's: maker lamports > 5,000,000): Success", async () => {
    const o = await order({
      inputMint: MINT.USDC,
      outputMint: MINT.JUP,
      amount: "10000000",
      swapMode: "ExactIn",
    });
    const q = quoted(o);
    // Fee in USDC, the input: the maker quoted the 10 USDC less 10 bps; its whole quote reaches the taker.
    expect(q.in).toBe(10_000_000n - feeOn(10_000_000n, 10n));
    const assertion = getAssertAccountInfoInstruction({
      targetAccount: address(o.maker),
      assertion: accountInfoAssertion("Lamports", {
        value: 5_000_000,
        operator: IntegerOperator.GreaterThan,
      }),
    });
    const before = await balances(o.maker);
    const x = await execute(await signWithAppended(o.transaction, [assertion]), o.requestId);
    expect(x).toMatchObject({ status: "Success", code: 0 });
    const after = await balances(o.maker);
    expect(before.takerUsdc - after.takerUsdc).toBe(10_000_000n);
    expect(after.takerJup - before.takerJup).toBe(q.out);
    expect(after.makerUsdc - before.makerUsdc).toBe(10_000_000n);
  }, 60_000);

  // Same parameters as the case above, so the same requestId; within one blockhash the same
  // transaction too (execute.ts, orderWithAssertions: the newest order is the one executed).
  it("a failing Lighthouse assertion (taker JUP above what the fill leaves) gives Failed with every balance, the maker's included, unchanged", async () => {
    const o = await order({
      inputMint: MINT.USDC,
      outputMint: MINT.JUP,
      amount: "10000000",
      swapMode: "ExactIn",
    });
    const before = await balances(o.maker);
    const assertion = getAssertTokenAccountInstruction({
      targetAccount: ata(taker.address, MINT.JUP),
      assertion: tokenAccountAssertion("Amount", {
        value: before.takerJup + quoted(o).out + 1n,
        operator: IntegerOperator.GreaterThanOrEqual,
      }),
    });
    const x = await execute(await signWithAppended(o.transaction, [assertion]), o.requestId);
    // The maker simulates a fill before signing (src/swap): the false assertion fails there, so it
    // refuses, nothing is sent, and no balance moves, not even the maker's SOL for a fee.
    expect(x).toMatchObject({ status: "Failed", code: -2004 });
    expect(await balances(o.maker)).toEqual(before);
  }, 60_000);

  it("refuses (400, code -3) a signed transaction with anything but Lighthouse assertions appended", async () => {
    const o = await order({
      inputMint: MINT.USDC,
      outputMint: MINT.JUP,
      amount: "1000000",
      swapMode: "ExactIn",
    });
    const priceAgain: IInstruction = {
      programAddress: address("ComputeBudget111111111111111111111111111111"),
      accounts: [],
      data: new Uint8Array([3, 1, 0, 0, 0, 0, 0, 0, 0]),
    };
    const res = await fetch(`${stack.operatorUrl}/ultra/v1/execute?swapType=rfq`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        signedTransaction: await signWithAppended(o.transaction, [priceAgain]),
        requestId: o.requestId,
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: -3 });
  }, 60_000);

  it("accepts the operator's own client's change: the compute-unit limit raised to 400,000 before its assertion (Success)", async () => {
    const o = await order({
      inputMint: MINT.USDC,
      outputMint: MINT.JUP,
      amount: "1000000",
      swapMode: "ExactIn",
    });
    const raiseLimit = (m: Message) =>
      ({
        ...m,
        instructions: m.instructions.map((ix) =>
          ix.programAddress === "ComputeBudget111111111111111111111111111111" && ix.data?.[0] === 2
            ? { ...ix, data: new Uint8Array([2, 0x80, 0x1a, 0x06, 0x00]) }
            : ix,
        ),
      }) as Message;
    const assertion = getAssertAccountInfoInstruction({
      targetAccount: address(o.maker),
      assertion: accountInfoAssertion("Lamports", {
        value: 5_000_000,
        operator: IntegerOperator.GreaterThan,
      }),
    });
    const x = await execute(await signWithAppended(o.transaction, [assertion], raiseLimit), o.requestId);
    expect(x).toMatchObject({ status: "Success", code: 0 });
  }, 60_000);
});

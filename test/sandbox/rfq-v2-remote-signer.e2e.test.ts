/**
 * The RFQ v2 channel with the remote signer (`npm run sandbox -- --remote-signer`, through startStack):
 * the chain, the signer service and the webhook each in their own process, the webhook with RFQ_V2_URL
 * and SIGNER_URL and no key, the signer with SIGNER_RPC_URL (the chain's JSON-RPC). A taker's v2 swap
 * offered by the operator's stand-in loads accounts from lookup tables on that chain, as the operator's
 * do; it is checked by the webhook, resolved and signed by the signer service on its own reading of the
 * tables (its own record says so) and lands, moving the balances exactly as the levels say. A swap the webhook's own checks let through but the signer's do not (an extra
 * instruction of a program no offered swap holds) is never signed: the maker's balances are unchanged
 * and the webhook counts the signer's code.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type AddressLookupTableAccount,
  Keypair,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Stack } from "../../sandbox/operator/stack.ts";
import { TakerClient } from "../../sandbox/operator/taker.ts";
import { FillRejectCode } from "../../src/refusal/codes.ts";
import { MINT } from "../support/config.ts";
import { BID_IN, bidWalk, liveLevels, offerSolUsdcBid, startRfqV2Stack } from "../support/rfq-v2.ts";
import { fileTempDir } from "../support/tmp.ts";

const dir = fileTempDir("rfq-v2-remote-signer");
let stack: Stack;

beforeAll(async () => {
  stack = await startRfqV2Stack(dir, { remoteSigner: true });
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

const logOf = (name: string) =>
  readFileSync(join(dir, `${name}.log`), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("the RFQ v2 channel with RFQ_V2_URL and SIGNER_URL", () => {
  it("starts the webhook with both set and no key, and lands a v2 swap loading from lookup tables that the signer service resolved itself and signed, moving the balances exactly as the levels say", async () => {
    expect(stack.signerUrl).toMatch(/^unix:\/\//);
    const walk = bidWalk(await liveLevels(stack, MINT.SOL, MINT.USDC), BID_IN);
    const taker = stack.takers[0]!.keypair;
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const before = await client.balances(taker.publicKey, [MINT.SOL, MINT.USDC]);
    const r = await offerSolUsdcBid(stack, { timeoutMs: 30_000 });
    expect(r).toMatchObject({ ok: true });
    expect(r.offered.message.addressTableLookups).toHaveLength(2);
    const after = await client.balances(taker.publicKey, [MINT.SOL, MINT.USDC]);
    expect(after[MINT.USDC]! - before[MINT.USDC]!).toBe(-walk.spent);
    expect(after[MINT.SOL]! - before[MINT.SOL]!).toBe(walk.out);
    // The signature is the signer service's: its log records the swap, what the maker paid out.
    const signed = logOf("signer").find((l) => l.msg === "signed" && l.swapUuid === r.swapUuid);
    // ... and that it read both tables itself.
    expect(signed).toMatchObject({
      channel: "rfq-v2",
      mint: MINT.SOL,
      amount: walk.out.toString(),
      tables: 2,
    });
    expect(
      logOf("webhook").some((l) => l.msg === "rfq v2: swap co-signed" && l.swapUuid === r.swapUuid),
    ).toBe(true);
  }, 60_000);

  it("never signs a swap the webhook passes but the signer refuses (another program beside the route): INVALID_PROGRAM counted, the maker's balances unchanged", async () => {
    await liveLevels(stack, MINT.SOL, MINT.USDC);
    const maker = new PublicKey(stack.maker);
    const client = new TakerClient(stack.operatorUrl, stack.chainUrl);
    const before = await client.balances(maker, [MINT.SOL, MINT.USDC]);
    const taker = stack.takers[0]!.keypair;
    // An instruction of an unknown program naming only the taker: the webhook's checks do not look
    // at other programs; the signer signs only the programs an offered swap holds.
    const addStranger = (
      tx: VersionedTransaction,
      tables: AddressLookupTableAccount[],
    ): VersionedTransaction => {
      const stranger = new TransactionInstruction({
        programId: Keypair.generate().publicKey,
        keys: [{ pubkey: taker.publicKey, isSigner: true, isWritable: true }],
        data: Buffer.from([7]),
      });
      const msg = TransactionMessage.decompile(tx.message, { addressLookupTableAccounts: tables });
      msg.instructions.push(stranger);
      return new VersionedTransaction(msg.compileToV0Message(tables));
    };
    const r = await offerSolUsdcBid(stack, { tamper: addStranger, timeoutMs: 3_000 });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    const after = await client.balances(maker, [MINT.SOL, MINT.USDC]);
    expect(after).toEqual(before);
    const refused = logOf("webhook").find(
      (l) => l.msg === "rfq v2: swap refused" && l.swapUuid === r.swapUuid,
    );
    expect(refused).toMatchObject({ code: FillRejectCode.INVALID_PROGRAM });
    expect(
      logOf("signer").some(
        (l) =>
          l.msg === "signature refused" &&
          l.swapUuid === r.swapUuid &&
          l.code === FillRejectCode.INVALID_PROGRAM,
      ),
    ).toBe(true);
    const metrics = await (await fetch(`${stack.webhookAdminUrl}/metrics`)).text();
    expect(metrics).toMatch(/rfq_v2_swaps_total\{outcome="INVALID_PROGRAM"\} 1/);
  }, 60_000);
});

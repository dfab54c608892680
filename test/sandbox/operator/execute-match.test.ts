/**
 * Which order an executed transaction belongs to, when the taker appended Lighthouse assertions. The
 * operator's requestId is a hash of the order's parameters, so a re-quote repeats it; within one
 * blockhash and expiry second the simulator builds the same transaction for both orders.
 */
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { orderWithAssertions } from "../../../sandbox/operator/execute.ts";
import { OrderBook, type PendingOrder } from "../../../sandbox/operator/order-book.ts";
import { LIGHTHOUSE_PROGRAM_ID } from "../../../src/program/layout.ts";

const maker = Keypair.generate().publicKey;
const taker = Keypair.generate().publicKey;
const blockhash = Keypair.generate().publicKey.toBase58();

function tx(extra: TransactionInstruction[] = []): VersionedTransaction {
  const message = new TransactionMessage({
    payerKey: maker,
    recentBlockhash: blockhash,
    instructions: [
      ComputeBudgetProgram.setComputeUnitLimit({ units: 50_000 }),
      SystemProgram.transfer({ fromPubkey: taker, toPubkey: maker, lamports: 1_000n }),
      ...extra,
    ],
  }).compileToV0Message();
  return new VersionedTransaction(message);
}

const assertion = new TransactionInstruction({
  programId: LIGHTHOUSE_PROGRAM_ID,
  keys: [{ pubkey: taker, isSigner: false, isWritable: false }],
  data: Buffer.from([9, 0, 1, 2, 3]),
});

const order = (name: string): PendingOrder =>
  ({ requestId: "r", built: { tx: tx() }, quote: { quoteId: name } }) as unknown as PendingOrder;

describe("orderWithAssertions", () => {
  it("matches the newest of the request's orders when a re-quote built the same transaction (never the executed one)", () => {
    const earlier = order("earlier");
    const newer = order("newer");
    expect(orderWithAssertions([earlier, newer], tx([assertion]))).toBe(newer);
  });

  it("matches an order whose transaction the signed one extends with assertions only", () => {
    const only = order("only");
    expect(orderWithAssertions([only], tx([assertion]))).toBe(only);
    const notAssertion = new TransactionInstruction({ ...assertion, programId: new PublicKey(maker) });
    expect(orderWithAssertions([only], tx([notAssertion]))).toBeUndefined();
    expect(orderWithAssertions([only], tx())).toBeUndefined();
  });
});

describe("OrderBook.find", () => {
  it("finds the newest of the request's orders with the same message bytes (a re-quote), never the executed earlier one", () => {
    const book = new OrderBook(() => 0);
    const built = (name: string): PendingOrder => {
      const t = tx();
      return {
        requestId: "r",
        built: { tx: t, messageBytes: t.message.serialize(), expireAt: 60n },
        quote: { quoteId: name },
      } as unknown as PendingOrder;
    };
    const earlier = built("earlier");
    const newer = built("newer");
    book.add(earlier);
    book.add(newer);
    expect(book.find("r", tx().message.serialize())).toBe(newer);
  });
});

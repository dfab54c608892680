/**
 * One small fill through an operator simulator, end to end: the taker's order (10 USDC for SOL) is
 * quoted by the stack's maker, signed by the taker and executed, and must land. Returns the quote's
 * id for the caller's own checks (where its keys went, what crossed a proxy).
 */
import { expect } from "vitest";
import type { Stack } from "../../sandbox/operator/stack.ts";
import type { TakerClient } from "../../sandbox/operator/taker.ts";
import { MINT } from "./config.ts";

export async function landSmallSwap(client: TakerClient, stack: Stack): Promise<string | undefined> {
  const taker = stack.takers[0]!.keypair;
  const order = await client.order(
    { inputMint: MINT.USDC, outputMint: MINT.SOL, amount: 10_000_000n },
    taker.publicKey,
  );
  expect(order.ok && order.body.maker).toBe(stack.maker);
  if (!order.ok) return undefined;
  const result = await client.execute(order.body, taker);
  expect(result.ok && result.body.status).toBe("Success");
  return order.body.quoteId;
}

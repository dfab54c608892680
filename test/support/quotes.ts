/** Quote request bodies as the operator sends them. */
import { randomUUID } from "node:crypto";
import { MINT } from "./config.ts";

export function quoteBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    requestId: randomUUID(),
    quoteId: randomUUID(),
    tokenIn: MINT.USDC,
    tokenOut: MINT.SOL,
    amount: "1000000",
    quoteType: "exactIn",
    protocol: "v1",
    feeBps: 10,
    ...over,
  };
}

export function jsonPost(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

/** A response body as loosely typed JSON (tests assert on its shape). */
// biome-ignore lint/suspicious/noExplicitAny: test helper for asserting on arbitrary JSON
export const readJson = async (res: Response): Promise<any> => res.json();

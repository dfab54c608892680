/**
 * A local stand-in for the operator's public acceptance suite (CONTRACT.md, "The operator's public
 * acceptance suite"): the same calls in the same order with the same expectations, runnable against
 * any base URL. `npm run acceptance -- http://127.0.0.1:8080` checks a running ACCEPTANCE_MODE=1
 * instance before registering it.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PublicKey } from "@solana/web3.js";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";
const UNKNOWN_MINT = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "acceptance-fill-tx.json");

/** The suite's fill transaction: the bytes the operator's public suite sends (sandbox/fixtures/). */
export function acceptanceTransaction(): string {
  return JSON.parse(readFileSync(FIXTURE, "utf8")).transactionBase64 as string;
}

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

export async function runAcceptanceSuite(baseUrl: string, apiKey?: string): Promise<CheckResult[]> {
  const base = baseUrl.replace(/\/$/, "");
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (apiKey) headers["x-api-key"] = apiKey;
  const results: CheckResult[] = [];
  const check = (name: string, ok: boolean, detail: string) => results.push({ name, ok, detail });

  const quote = async (tokenIn: string, tokenOut: string, quoteType: string) => {
    const body = {
      requestId: randomUUID(),
      quoteId: randomUUID(),
      tokenIn,
      tokenOut,
      amount: "1000000",
      quoteType,
      protocol: "v1",
      feeBps: 0,
    };
    const res = await fetch(`${base}/quote`, {
      method: "POST",
      headers: { ...headers, "x-request-start": String(Date.now()), "x-request-timeout": "250" },
      body: JSON.stringify(body),
    });
    return {
      body,
      res,
      json: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined,
    };
  };

  const tokensRes = await fetch(`${base}/tokens`, { headers });
  const tokens = (await tokensRes.json().catch(() => [])) as unknown[];
  const validAddress = (t: unknown) => {
    try {
      return typeof t === "string" && new PublicKey(t).toBase58() === t;
    } catch {
      return false;
    }
  };
  check(
    "GET /tokens lists valid addresses",
    tokensRes.status === 200 && Array.isArray(tokens) && tokens.length > 0 && tokens.every(validAddress),
    `status ${tokensRes.status}, ${Array.isArray(tokens) ? tokens.length : "no"} tokens`,
  );

  const exactIn = await quote(USDC, SOL, "exactIn");
  check(
    "exactIn quote: 1 USDC to SOL",
    exactIn.res.status === 200 &&
      exactIn.json?.quoteId === exactIn.body.quoteId &&
      exactIn.json?.amountIn === "1000000" &&
      BigInt(String(exactIn.json?.amountOut ?? "0")) > 0n,
    `status ${exactIn.res.status} ${JSON.stringify(exactIn.json)}`,
  );
  const exactOut = await quote(SOL, USDC, "exactOut");
  check(
    "exactOut quote: SOL for 1 USDC",
    exactOut.res.status === 200 &&
      exactOut.json?.amountOut === "1000000" &&
      BigInt(String(exactOut.json?.amountIn ?? "0")) > 0n,
    `status ${exactOut.res.status} ${JSON.stringify(exactOut.json)}`,
  );
  const unknown = await quote(USDC, UNKNOWN_MINT, "exactIn");
  check("quote for an unknown mint is 404", unknown.res.status === 404, `status ${unknown.res.status}`);

  const tx = acceptanceTransaction();
  const swap = async (requestId: string, withKey = true) => {
    const res = await fetch(`${base}/swap`, {
      method: "POST",
      headers: withKey ? headers : { "content-type": "application/json" },
      body: JSON.stringify({ requestId, quoteId: randomUUID(), transaction: tx }),
    });
    return { res, json: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined };
  };
  const id = (n: number) => `00000000-0000-0000-0000-00000000000${n}`;
  const s1 = await swap(id(1));
  check(
    "swap ...0001 is rejected with a reason text",
    s1.res.status === 200 && s1.json?.state === "rejected" && typeof s1.json?.rejectionReason === "string",
    JSON.stringify(s1.json),
  );
  const s2 = await swap(id(2));
  check("swap ...0002 is a 400 malformed-request error", s2.res.status === 400, `status ${s2.res.status}`);
  const s3 = await swap(id(3));
  check(
    "swap ...0003 is rejectedWithReason insufficientBalance",
    JSON.stringify(s3.json?.state) === JSON.stringify({ rejectedWithReason: "insufficientBalance" }),
    JSON.stringify(s3.json),
  );
  const s4 = await swap(id(4));
  check(
    "swap ...0004 is rejectedWithReason signatureVerificationFailed",
    JSON.stringify(s4.json?.state) === JSON.stringify({ rejectedWithReason: "signatureVerificationFailed" }),
    JSON.stringify(s4.json),
  );
  // The public suite sends this one without the X-API-KEY header (so it is run with no key set).
  const s5 = await swap(randomUUID(), false);
  check(
    "swap with any other id is accepted",
    s5.res.status === 200 && s5.json?.state === "accepted",
    `status ${s5.res.status} ${JSON.stringify(s5.json)}`,
  );
  return results;
}

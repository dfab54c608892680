/**
 * A local stand-in for the operator's public acceptance suite (jup-ag/rfq-webhook-toolkit,
 * tests/suites/acceptance/test.ts; docs/contract.md, "The operator's public acceptance suite"): the same
 * eight calls in the same order, with the same bodies, ids and headers, and the same expectations,
 * runnable against any base URL. `npm run acceptance -- http://127.0.0.1:8080` checks a running
 * ACCEPTANCE_MODE=1 instance before registering it; run it twice against one instance, as the
 * operator may.
 *
 * Repeated on purpose, because they are the original's (a stand-in kinder than the original proves
 * nothing): one quoteId and requestId for all three quotes and every swap; an "unknown mint" that is
 * not a valid public key (46 characters); fee 2 bps and a suggested priority fee of 10,000; no
 * x-request-start/x-request-timeout headers; the first /swap sent without the X-API-KEY header; no
 * check of the ...0002 malformed-request case (the original has none; test/sandbox/acceptance.test.ts
 * checks it). Where the original's checks are looser than they read (its /tokens address check is an
 * un-awaited promise), this one checks what the original meant: every entry decodes to 32 bytes.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import bs58 from "bs58";

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const WSOL = "So11111111111111111111111111111111111111112";
/** The original's MINT_A / MINT_B defaults, AMOUNT and FEE_BPS. */
const MINT_A = WSOL;
const MINT_B = USDC;
const AMOUNT = "1000000";
const FEE_BPS = 2;
/** The ids the original sends with every quote and swap. */
export const ACCEPTANCE_QUOTE_ID = "59db3e19-c7b0-4753-a8aa-206701004498";
export const ACCEPTANCE_REQUEST_ID = "629bddf3-0038-43a6-8956-f5433d6b1191";
const TAKER = "5v2Vd71VoJ1wZhz1PkhTY48mrJwS6wF4LfvDbYPnJ3bc";
/** "this token does not exists": 46 base58 characters that do not decode to 32 bytes. */
export const ACCEPTANCE_UNKNOWN_MINT = "fake3KUxqvJ5erXobKTYFtL2BpTgGzy7B9AcRcXeCwWvFM";
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

type Json = Record<string, unknown> | undefined;

export async function runAcceptanceSuite(baseUrl: string, apiKey?: string): Promise<CheckResult[]> {
  const base = baseUrl.replace(/\/$/, "");
  const keyHeader: Record<string, string> = apiKey ? { "X-API-KEY": apiKey } : {};
  const results: CheckResult[] = [];
  const check = (name: string, ok: boolean, detail: string) => results.push({ name, ok, detail });
  const post = async (path: string, body: unknown, withKey: boolean) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(withKey ? keyHeader : {}) },
      body: JSON.stringify(body),
    });
    return { res, json: (await res.json().catch(() => undefined)) as Json };
  };
  const quoteBody = (tokenIn: string, tokenOut: string, quoteType: string) => ({
    amount: AMOUNT,
    feeBps: FEE_BPS,
    protocol: "v1",
    quoteId: ACCEPTANCE_QUOTE_ID,
    quoteType,
    requestId: ACCEPTANCE_REQUEST_ID,
    suggestedPrioritizationFees: 10000,
    taker: TAKER,
    tokenIn,
    tokenOut,
  });
  const positive = (v: unknown) => {
    try {
      return BigInt(String(v)) > 0n;
    } catch {
      return false;
    }
  };
  const echoes = (json: Json, body: ReturnType<typeof quoteBody>) =>
    json?.quoteId === body.quoteId &&
    json?.requestId === body.requestId &&
    json?.tokenIn === body.tokenIn &&
    json?.tokenOut === body.tokenOut &&
    json?.quoteType === body.quoteType &&
    json !== undefined &&
    "maker" in json &&
    json.taker === body.taker;

  const inBody = quoteBody(MINT_B, MINT_A, "exactIn");
  const exactIn = await post("/quote", inBody, true);
  check(
    "quote ExactIn: 1 USDC to SOL",
    exactIn.res.status === 200 &&
      echoes(exactIn.json, inBody) &&
      exactIn.json?.amountIn === AMOUNT &&
      positive(exactIn.json?.amountOut),
    `status ${exactIn.res.status} ${JSON.stringify(exactIn.json)}`,
  );

  const outBody = quoteBody(MINT_A, MINT_B, "exactOut");
  const exactOut = await post("/quote", outBody, true);
  check(
    "quote ExactOut: SOL for 1 USDC (same quoteId and requestId)",
    exactOut.res.status === 200 &&
      echoes(exactOut.json, outBody) &&
      exactOut.json?.amountOut === AMOUNT &&
      positive(exactOut.json?.amountIn),
    `status ${exactOut.res.status} ${JSON.stringify(exactOut.json)}`,
  );

  const unknown = await post("/quote", quoteBody(MINT_A, ACCEPTANCE_UNKNOWN_MINT, "exactIn"), true);
  check(
    "quote for an unknown mint that is not a public key is 404",
    unknown.res.status === 404,
    `status ${unknown.res.status} ${JSON.stringify(unknown.json)}`,
  );

  const tx = acceptanceTransaction();
  const swap = (requestId: string, withKey: boolean) =>
    post("/swap", { quoteId: ACCEPTANCE_QUOTE_ID, requestId, transaction: tx }, withKey);
  const id = (n: number) => `00000000-0000-0000-0000-00000000000${n}`;

  // The original sends this one without the X-API-KEY header (so it is run with no key set).
  const ok = await swap(ACCEPTANCE_REQUEST_ID, false);
  check(
    "swap is accepted",
    ok.res.status === 200 && ok.json?.quoteId === ACCEPTANCE_QUOTE_ID && ok.json?.state === "accepted",
    `status ${ok.res.status} ${JSON.stringify(ok.json)}`,
  );
  const s1 = await swap(id(1), true);
  check(
    "swap ...0001 is rejected with a reason text",
    s1.res.status === 200 &&
      s1.json?.quoteId === ACCEPTANCE_QUOTE_ID &&
      s1.json?.state === "rejected" &&
      typeof s1.json?.rejectionReason === "string" &&
      s1.json.rejectionReason.length > 0,
    `status ${s1.res.status} ${JSON.stringify(s1.json)}`,
  );
  for (const [n, reason] of [
    [3, "insufficientBalance"],
    [4, "signatureVerificationFailed"],
  ] as const) {
    const s = await swap(id(n), true);
    check(
      `swap ...000${n} is rejectedWithReason ${reason}`,
      s.res.status === 200 &&
        s.json?.quoteId === ACCEPTANCE_QUOTE_ID &&
        JSON.stringify(s.json?.state) === JSON.stringify({ rejectedWithReason: reason }),
      `status ${s.res.status} ${JSON.stringify(s.json)}`,
    );
  }

  const tokensRes = await fetch(`${base}/tokens`, { headers: keyHeader });
  const tokens = (await tokensRes.json().catch(() => undefined)) as unknown;
  const validAddress = (t: unknown) => {
    try {
      return typeof t === "string" && bs58.decode(t).length === 32;
    } catch {
      return false;
    }
  };
  check(
    "GET /tokens lists valid addresses",
    tokensRes.status === 200 && Array.isArray(tokens) && tokens.every(validAddress),
    `status ${tokensRes.status}, ${Array.isArray(tokens) ? tokens.length : "no"} tokens`,
  );
  return results;
}

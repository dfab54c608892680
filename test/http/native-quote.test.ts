/**
 * POST /quote served natively on node:http (src/http/native-quote.ts, the operator's listener in
 * production) answers exactly as the Hono route does: two identical services (same maker key, base
 * path, API key and prices), one asked through Hono (`app.request`), the other over a real socket
 * through the listener main.ts serves with. Every request below must give the same status, body and
 * content type on both, and both must count the same `rfq_http_responses_total` and
 * `rfq_no_quote_total` series.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { KeypairSigner } from "../../src/signer/index.ts";
import { MINT } from "../support/config.ts";
import { listen } from "../support/harness.ts";
import { quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

const KEY = "native-quote-parity-key";
const BASE = "/jupiter/rfq";
const maker = Keypair.generate();
let viaHono: Service;
let viaSocket: Service;
let socket: Awaited<ReturnType<typeof listen>>;
/** Requests that reached the Hono app behind the socket. */
let throughHono: string[] = [];

const make = () =>
  testService({
    env: { API_KEY: KEY },
    vary: (f) => ({ ...f, basePath: BASE }),
    signer: new KeypairSigner(maker),
  });

beforeAll(async () => {
  viaHono = await make();
  viaSocket = await make();
  const fetch = viaSocket.app.fetch;
  viaSocket.app.fetch = (req, ...rest) => {
    throughHono.push(`${req.method} ${new URL(req.url).pathname}`);
    return fetch(req, ...rest);
  };
  socket = await listen(viaSocket.app);
});

afterAll(async () => {
  await socket?.close();
  await viaHono?.close();
  await viaSocket?.close();
});

interface Ask {
  path?: string;
  headers?: Record<string, string>;
  body: string | (() => ReadableStream<Uint8Array>);
}

const keyed = (h: Record<string, string> = {}) => ({
  "content-type": "application/json",
  "x-request-timeout": "10000",
  "x-api-key": KEY,
  ...h,
});

async function both(ask: Ask) {
  const path = ask.path ?? `${BASE}/quote`;
  const init = (): RequestInit => {
    const body = typeof ask.body === "string" ? ask.body : ask.body();
    return {
      method: "POST",
      headers: ask.headers ?? keyed(),
      body,
      ...(typeof ask.body === "string" ? {} : { duplex: "half" }),
    } as RequestInit;
  };
  const answer = async (res: Response) => ({
    status: res.status,
    type: res.headers.get("content-type"),
    body: await res.text(),
  });
  return {
    hono: await answer(await viaHono.app.request(path, init())),
    native: await answer(await socket.fetch(path, init())),
  };
}

/** A fixed request (fixed ids), so both services are asked the very same thing. */
const fixed = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    ...quoteBody(over),
    requestId: "req-1",
    quoteId: `q-${JSON.stringify(over).length}`,
    ...over,
  });

const oversizedStream = () =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode(" ".repeat(1_000)));
      c.close();
    },
  });

const cases: [string, Ask, number][] = [
  ["a priced exactIn quote", { body: fixed() }, 200],
  ["a priced exactOut quote", { body: fixed({ quoteType: "exactOut", quoteId: "q-out" }) }, 200],
  [
    "a quote with a query string on the path",
    { path: `${BASE}/quote?from=operator`, body: fixed({ quoteId: "q-query" }) },
    200,
  ],
  ["an untraded mint (404 TOKEN_NOT_SUPPORTED)", { body: fixed({ tokenOut: "1".repeat(44) }) }, 404],
  [
    "the operator's deadline already passed (404 DEADLINE)",
    {
      headers: keyed({ "x-request-start": String(Date.now() - 5_000), "x-request-timeout": "250" }),
      body: fixed({ quoteId: "q-late" }),
    },
    404,
  ],
  ["malformed JSON (400)", { body: "{not json" }, 400],
  ["a JSON array (400)", { body: "[1,2]" }, 400],
  ["a missing field, named (400)", { body: JSON.stringify({ ...quoteBody(), amount: undefined }) }, 400],
  ["an amount that is no u64 (400)", { body: fixed({ amount: "12abc" }) }, 400],
  ["the same mint on both sides (400)", { body: fixed({ tokenOut: MINT.USDC }) }, 400],
  ["no X-API-KEY (401)", { headers: { "content-type": "application/json" }, body: fixed() }, 401],
  ["a wrong X-API-KEY (401)", { headers: keyed({ "x-api-key": "wrong" }), body: fixed() }, 401],
  [
    "a declared length over the limit, before the key is checked (413)",
    { headers: { "content-type": "application/json" }, body: " ".repeat(20_000) },
    413,
  ],
  ["a chunked body that grows over the limit (413)", { body: oversizedStream }, 413],
];

describe("the operator's listener", () => {
  it("serves POST /quote without the Hono app, and every other route through it", async () => {
    throughHono = [];
    const quote = await socket.fetch(`${BASE}/quote`, {
      method: "POST",
      headers: keyed(),
      body: fixed({ quoteId: "q-route" }),
    });
    expect(quote.status).toBe(200);
    const tokens = await socket.fetch(`${BASE}/tokens`, { headers: { "x-api-key": KEY } });
    expect(tokens.status).toBe(200);
    expect(throughHono).toEqual([`GET ${BASE}/tokens`]);
    // The same two on the Hono side, so that both services' counters stay comparable below.
    await viaHono.app.request(`${BASE}/quote`, {
      method: "POST",
      headers: keyed(),
      body: fixed({ quoteId: "q-route" }),
    });
    await viaHono.app.request(`${BASE}/tokens`, { headers: { "x-api-key": KEY } });
  });
});

describe("POST /quote: native on node:http and through Hono give the same answers", () => {
  for (const [name, ask, status] of cases) {
    it(`${name}: same status, body and content type`, async () => {
      const { hono, native } = await both(ask);
      expect(hono.status).toBe(status);
      expect(native).toEqual(hono);
    });
  }

  it("counts the same responses and no-quote reasons on both", async () => {
    const series = async (s: Service) =>
      (await (await s.opsApp.request("/metrics")).text())
        .split("\n")
        .filter((l) => /^rfq_(http_responses_total|no_quote_total)\{/.test(l))
        .sort();
    const hono = await series(viaHono);
    expect(hono.some((l) => l.includes(`route="${BASE}/quote"`) && l.includes('status="200"'))).toBe(true);
    expect(await series(viaSocket)).toEqual(hono);
  });
});

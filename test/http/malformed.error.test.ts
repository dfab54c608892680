import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { MINT } from "../support/config.ts";
import { jsonPost, quoteBody, readJson } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

let svc: Service;
/** When set, the service's clock stands still at this instant (ms): deadlines then cost no time. */
let frozenNowMs: number | undefined;
beforeAll(async () => {
  svc = await testService({ now: () => frozenNowMs ?? Date.now() });
});
afterAll(() => svc.close());

const U64_MAX = "18446744073709551615";
const withoutKey = (key: string) => {
  const b = quoteBody();
  delete b[key];
  return b;
};

const swapBody = (over: Record<string, unknown> = {}) => ({
  requestId: "r-1",
  quoteId: "q-1",
  transaction: "AQID",
  ...over,
});

/** [name, path, raw body, expected status, text the message must contain (the field named)] */
const cases: [string, string, unknown, number, string][] = [
  ["malformed JSON", "/quote", "{not json", 400, "body"],
  ["a JSON array body", "/quote", "[1,2]", 400, "body"],
  ["a JSON string body", "/quote", '"hello"', 400, "body"],
  ["missing requestId", "/quote", withoutKey("requestId"), 400, "requestId"],
  ["missing quoteId", "/quote", withoutKey("quoteId"), 400, "quoteId"],
  ["missing amount", "/quote", withoutKey("amount"), 400, "amount"],
  ["missing feeBps", "/quote", withoutKey("feeBps"), 400, "feeBps"],
  ["amount zero", "/quote", quoteBody({ amount: "0" }), 400, "amount"],
  ["amount negative", "/quote", quoteBody({ amount: "-5" }), 400, "amount"],
  ["amount not an integer", "/quote", quoteBody({ amount: "1.5" }), 400, "amount"],
  ["amount as a JSON number", "/quote", quoteBody({ amount: 1000000 }), 400, "amount"],
  ["amount above u64", "/quote", quoteBody({ amount: "18446744073709551616" }), 400, "amount"],
  ["amount in hex", "/quote", quoteBody({ amount: "0x10" }), 400, "amount"],
  ["tokenIn a number", "/quote", quoteBody({ tokenIn: 42 }), 400, "tokenIn"],
  ["tokenOut missing", "/quote", withoutKey("tokenOut"), 400, "tokenOut"],
  ["tokenOut empty", "/quote", quoteBody({ tokenOut: "" }), 400, "tokenOut"],
  ["the same mint on both sides", "/quote", quoteBody({ tokenOut: MINT.USDC }), 400, "tokenOut"],
  ["unknown quoteType", "/quote", quoteBody({ quoteType: "exactSideways" }), 400, "quoteType"],
  // Object.prototype's names once passed the alias lookup (`in`) and became a function.
  ["quoteType toString (a prototype key)", "/quote", quoteBody({ quoteType: "toString" }), 400, "quoteType"],
  [
    "quoteType constructor (a prototype key)",
    "/quote",
    quoteBody({ quoteType: "constructor" }),
    400,
    "quoteType",
  ],
  ["unknown protocol", "/quote", quoteBody({ protocol: "v2" }), 400, "protocol"],
  ["feeBps above 10000", "/quote", quoteBody({ feeBps: 10_001 }), 400, "feeBps"],
  ["feeBps fractional", "/quote", quoteBody({ feeBps: 1.5 }), 400, "feeBps"],
  ["feeBps as a string", "/quote", quoteBody({ feeBps: "10" }), 400, "feeBps"],
  ["taker not a public key", "/quote", quoteBody({ taker: "bob" }), 400, "taker"],
  ["receiver not a public key", "/quote", quoteBody({ receiver: 42 }), 400, "receiver"],
  [
    "negative suggested priority fee",
    "/quote",
    quoteBody({ suggestedPrioritizationFees: -1 }),
    400,
    "suggestedPrioritizationFees",
  ],
  ["isWsol not a boolean", "/quote", quoteBody({ isWsol: "yes" }), 400, "isWsol"],
  ["oversized body", "/quote", JSON.stringify({ ...quoteBody(), pad: "x".repeat(64 * 1024) }), 413, "body"],
  ["swap: malformed JSON", "/swap", "{", 400, "body"],
  ["swap: missing transaction", "/swap", { requestId: "r", quoteId: "q" }, 400, "transaction"],
  ["swap: transaction not base64", "/swap", swapBody({ transaction: "***" }), 400, "transaction"],
  ["swap: transaction empty", "/swap", swapBody({ transaction: "" }), 400, "transaction"],
  ["swap: transaction too long", "/swap", swapBody({ transaction: "A".repeat(5000) }), 400, "transaction"],
  ["swap: quoteId empty", "/swap", swapBody({ quoteId: "" }), 400, "quoteId"],
  ["swap: requestId a number", "/swap", swapBody({ requestId: 7 }), 400, "requestId"],
  ["quoteId with a Redis hash-tag brace", "/quote", quoteBody({ quoteId: "a}b{c" }), 400, "quoteId"],
  ["swap: quoteId naming an internal id", "/swap", swapBody({ quoteId: "#message:00" }), 400, "quoteId"],
  ["swap: oversized body", "/swap", JSON.stringify(swapBody({ pad: "x".repeat(64 * 1024) })), 413, "body"],
];

describe("malformed quote and swap bodies", () => {
  it.each(cases)(
    "answers %s with the right status and the field named",
    async (_name, path, body, status, field) => {
      const res = await svc.app.request(path, jsonPost(body));
      expect(res.status).toBe(status);
      const json = await readJson(res);
      expect(Object.keys(json)).toEqual(["message"]);
      expect(json.message).toContain(field);
    },
  );

  it("still answers a good quote after every malformed one", async () => {
    for (const [, path, body] of cases) await svc.app.request(path, jsonPost(body));
    const res = await svc.app.request("/quote", jsonPost(quoteBody()));
    expect(res.status).toBe(200);
  });

  it("accepts the largest u64 amount as well-formed (and declines it as too large, with 404)", async () => {
    const res = await svc.app.request("/quote", jsonPost(quoteBody({ amount: U64_MAX })));
    expect(res.status).toBe(404);
  });
});

describe("quotes we decline (404, never penalised)", () => {
  it("declines an unknown mint with 404 and a message", async () => {
    const res = await svc.app.request(
      "/quote",
      jsonPost(quoteBody({ tokenOut: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263" })),
    );
    expect(res.status).toBe(404);
    expect((await readJson(res)).message).toMatch(/tokenOut .* not supported/);
  });

  it.each([
    [
      "the acceptance suite's 46-character non-key",
      { tokenOut: "fake3KUxqvJ5erXobKTYFtL2BpTgGzy7B9AcRcXeCwWvFM" },
      "tokenOut",
    ],
    ["a string that is not base58", { tokenIn: "not-a-mint-0OIl" }, "tokenIn"],
    ["a string too short for a key", { tokenOut: "abc" }, "tokenOut"],
    ["a very long string", { tokenIn: "x".repeat(500) }, "tokenIn"],
  ])(
    "declines a mint we do not trade given as %s with 404 not supported, not 400",
    async (_n, over, field) => {
      const res = await svc.app.request("/quote", jsonPost(quoteBody(over)));
      expect(res.status).toBe(404);
      const { message } = await readJson(res);
      expect(message).toContain(field);
      expect(message).toMatch(/not supported/);
      expect(message.length).toBeLessThan(200);
    },
  );

  it("declines with 404 when the operator's deadline has already passed (x-request-start too old)", async () => {
    const res = await svc.app.request(
      "/quote",
      jsonPost(quoteBody(), { "x-request-start": String(Date.now() - 300), "x-request-timeout": "250" }),
    );
    expect(res.status).toBe(404);
    expect((await readJson(res)).message).toMatch(/deadline/);
  });

  it("quotes when the deadline headers are absurd, using arrival time and 250 ms instead", async () => {
    // The clock stands still, so the 250 ms from arrival are all left however slow the machine is.
    frozenNowMs = Date.now();
    const res = await Promise.resolve(
      svc.app.request(
        "/quote",
        jsonPost(quoteBody(), { "x-request-start": "yesterday", "x-request-timeout": "-4" }),
      ),
    ).finally(() => {
      frozenNowMs = undefined;
    });
    expect(res.status).toBe(200);
  });

  it("answers unknown routes with 404 in the contract's error body", async () => {
    const res = await svc.app.request("/nope");
    expect(res.status).toBe(404);
    expect(await readJson(res)).toHaveProperty("message");
  });
});

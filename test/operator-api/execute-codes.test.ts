/**
 * Every execute code of the contract read through the client over a real socket, and the retry rules.
 *
 * The answers here come from a canned HTTP server on loopback that stands in for the operator's
 * execute endpoint: it answers each code in the contract's body shapes (a swap execute result with
 * status Failed, or the `{error, code}` error body). The sandbox simulator produces only some codes
 * (client.test.ts runs those end to end); the aggregator's codes (-1000..-1004) and the RFQ router's
 * failures need a maker or a chain to misbehave, so they are canned here.
 */
import { type AddressInfo, createServer } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXECUTE_CODES } from "../../src/operator-api/codes.ts";
import { HttpOperatorSwapApi } from "../../src/operator-api/http.ts";

type Reply = { status: number; body: unknown; delayMs?: number };
let script: Reply[] = [];
const seen: { path: string; key: string | undefined; body: unknown }[] = [];
let server: ReturnType<typeof serve>;
let url: string;

beforeAll(async () => {
  const app = new Hono();
  const handle = async (c: import("hono").Context) => {
    seen.push({
      path: c.req.path,
      key: c.req.header("x-api-key"),
      body: c.req.method === "POST" ? await c.req.json() : undefined,
    });
    const r = script.shift() ?? { status: 500, body: { error: "script exhausted" } };
    if (r.delayMs) await new Promise((res) => setTimeout(res, r.delayMs));
    return c.json(r.body as object, r.status as 200);
  };
  app.post("/swap/v2/execute", handle);
  app.get("/ultra/v1/order", handle);
  server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((r) => server.once("listening", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const req = { signedTransaction: "c2lnbmVk", requestId: "req-1", lastValidBlockHeight: 123n };
const client = (over: Partial<ConstructorParameters<typeof HttpOperatorSwapApi>[0]> = {}) =>
  new HttpOperatorSwapApi({ baseUrl: url, apiKey: "k-123", retryPauseMs: 5, ...over });

const failed = (code: number, extra: Record<string, unknown> = {}) => ({
  status: "Failed",
  code,
  error: `code ${code}`,
  ...extra,
});

describe("every execute code maps to its named outcome", () => {
  const cases: [number, string, Record<string, unknown>, string][] = [
    [-1, "missing cached order", {}, "retrySafe"],
    [-2, "invalid signed transaction", {}, "retrySafe"],
    [-3, "invalid message bytes", {}, "retrySafe"],
    [-1000, "failed to land", { signature: "sig", slot: "77" }, "failedOnChain"],
    [-1000, "failed to land", { signature: "sig" }, "notRetrySafe"],
    [-1001, "unknown", {}, "notRetrySafe"],
    [-1002, "invalid transaction", {}, "retrySafe"],
    [-1003, "not fully signed", {}, "retrySafe"],
    [-1004, "invalid block height", {}, "retrySafe"],
    [-2000, "failed to land", { signature: "sig", slot: "78" }, "failedOnChain"],
    [-2000, "failed to land", {}, "notRetrySafe"],
    [-2001, "unknown", {}, "notRetrySafe"],
    [-2002, "invalid payload", {}, "retrySafe"],
    [-2003, "quote expired", {}, "expired"],
    [-2004, "swap rejected", {}, "retrySafe"],
  ];

  it("covers every code in the contract's table", () => {
    const tested = new Set(cases.map((c) => c[0]));
    const codes = Object.keys(EXECUTE_CODES)
      .map(Number)
      .filter((c) => c !== 0);
    expect(codes.sort()).toEqual([...tested].sort());
    expect(codes).toHaveLength(13);
  });

  it.each(cases)("%i (%s, %o) in a Failed result is %s", async (code, meaning, extra, kind) => {
    script = [{ status: 200, body: failed(code, extra) }];
    const x = await client().execute(req);
    expect(x).toMatchObject({ kind, code, meaning, attempts: 1 });
  });

  it.each(cases.filter((c) => !("slot" in c[2])))(
    "%i (%s) in the {error, code} error body is %s",
    async (code, meaning, _extra, kind) => {
      script = [{ status: 400, body: { error: `code ${code}`, code } }];
      expect(await client().execute(req)).toMatchObject({ kind, code, meaning });
    },
  );

  it("0 with status Success is landed, with the amounts kept", async () => {
    script = [
      {
        status: 200,
        body: {
          status: "Success",
          code: 0,
          signature: "s",
          slot: "9",
          totalInputAmount: "5",
          extraField: true,
        },
      },
    ];
    const x = await client().execute(req);
    expect(x).toMatchObject({ kind: "landed", code: 0, signature: "s", slot: "9" });
    expect(x.result?.totalInputAmount).toBe("5");
  });

  it("an unmapped code, a status that contradicts its code, or a {signature, error} body is not retry-safe", async () => {
    script = [
      { status: 200, body: failed(-4242) },
      { status: 200, body: { status: "Success", code: -2004 } },
      { status: 200, body: { status: "Failed", code: 0 } },
      { status: 500, body: { signature: "abc", error: "boom" } },
      { status: 502, body: "<html>" },
    ];
    const c = client();
    const kinds = [];
    for (let i = 0; i < 5; i++) kinds.push((await c.execute(req)).kind);
    expect(kinds).toEqual(["notRetrySafe", "notRetrySafe", "notRetrySafe", "notRetrySafe", "notRetrySafe"]);
  });

  it("posts signedTransaction, requestId, lastValidBlockHeight with x-api-key", async () => {
    seen.length = 0;
    script = [{ status: 200, body: failed(-2003) }];
    await client().execute(req);
    expect(seen[0]).toEqual({
      path: "/swap/v2/execute",
      key: "k-123",
      body: { signedTransaction: "c2lnbmVk", requestId: "req-1", lastValidBlockHeight: "123" },
    });
  });
});

describe("retries only where they cannot double a trade", () => {
  it("an order is retried after a timeout and after a 5xx, and answers from the attempt that worked", async () => {
    seen.length = 0;
    script = [
      { status: 200, body: {}, delayMs: 300 },
      { status: 503, body: { error: "busy" } },
      { status: 400, body: { error: "Failed to get quotes" } },
    ];
    const r = await client({ orderTimeoutMs: 100 }).order({ inputMint: "a", outputMint: "b", amount: 1n });
    expect(r).toMatchObject({ ok: false, kind: "refused", status: 400, attempts: 3 });
    expect(seen).toHaveLength(3);
  });

  it("a malformed order (a required field missing) is named, not retried", async () => {
    script = [{ status: 200, body: { mode: "ultra" } }];
    const r = await client().order({ inputMint: "a", outputMint: "b", amount: 1n });
    expect(r).toMatchObject({ ok: false, kind: "malformed", attempts: 1 });
    expect(!r.ok && r.error).toMatch(/inputMint/);
  });

  it("an execute whose answer timed out is asked again with the same bytes; a refusal then is not retry-safe", async () => {
    seen.length = 0;
    script = [
      { status: 200, body: { status: "Success", code: 0 }, delayMs: 300 },
      { status: 400, body: { error: "swap rejected", code: -2004 } },
    ];
    const x = await client({ executeTimeoutMs: 100 }).execute(req);
    expect(x.kind).toBe("notRetrySafe");
    expect(x.meaning).toMatch(/earlier attempt whose fate is unknown/);
    const sent = { signedTransaction: "c2lnbmVk", requestId: "req-1", lastValidBlockHeight: "123" };
    expect(seen.map((s) => s.body)).toEqual([sent, sent]);
  });

  it("an execute whose answer timed out and whose second attempt says landed is landed", async () => {
    script = [
      { status: 200, body: {}, delayMs: 300 },
      { status: 200, body: { status: "Success", code: 0, signature: "s2" } },
    ];
    expect(await client({ executeTimeoutMs: 100 }).execute(req)).toMatchObject({
      kind: "landed",
      attempts: 2,
    });
  });

  it("an execute to a refused connection is sent again, and when it never left is retry-safe", async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const x = await new HttpOperatorSwapApi({
      baseUrl: `http://127.0.0.1:${port}`,
      retryPauseMs: 5,
      executeAttempts: 3,
    }).execute(req);
    expect(x).toMatchObject({ kind: "retrySafe", attempts: 3 });
    expect(x.meaning).toMatch(/not sent: .*ECONNREFUSED/);
  });
});

/**
 * GET /openapi.json (src/contract/openapi.ts): the document validates as OpenAPI 3.1, lists exactly
 * the operator routes the composed app serves (and nothing else), is served outside the operator's
 * base path and its API key, and the service's real requests and answers validate against its schemas.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { MINT } from "../support/config.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

const BASE = "/jupiter/rfq";
const API_KEY = "an-operator-key-of-some-length";
const auth = { "x-api-key": API_KEY };

let svc: Service;
// biome-ignore lint/suspicious/noExplicitAny: a JSON document read back from the wire
let doc: any;
let ajv: Ajv2020;

beforeAll(async () => {
  svc = await testService({ env: { API_KEY }, vary: (f) => ({ ...f, basePath: BASE }) });
  const res = await svc.app.request("/openapi.json");
  expect(res.status).toBe(200);
  doc = await res.json();
  ajv = new Ajv2020({ strict: false });
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  }
});
afterAll(() => svc.close());

/** Asserts that `value` matches the document's schema `name`, naming the mismatch when not. */
function expectValid(name: string, value: unknown): void {
  const validate = ajv.getSchema(`#/components/schemas/${name}`)!;
  const ok = validate(value);
  expect(ok ? [] : validate.errors).toEqual([]);
}

describe("GET /openapi.json", () => {
  it("validates as an OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.openapi).toBe("3.1.0");
  });

  it("lists exactly the operator routes the app serves under the base path, and no other", () => {
    const served = svc.app.routes
      .filter((r) => r.method !== "ALL" && r.path.startsWith(`${BASE}/`))
      .map((r) => `${r.method.toLowerCase()} ${r.path}`)
      .sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
      .sort();
    expect(served.length).toBeGreaterThan(0);
    expect(documented).toEqual(served);
  });

  it("is served at the root, outside the operator's base path, without the operator's key", async () => {
    expect((await svc.app.request(`${BASE}/openapi.json`, { headers: auth })).status).toBe(404);
    expect((await svc.app.request("/openapi.json")).status).toBe(200);
    expect((await svc.app.request(`${BASE}/tokens`)).status).toBe(401);
  });

  it("compiles every component schema as JSON Schema 2020-12", () => {
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`#/components/schemas/${name}`), name).toBeTypeOf("function");
    }
  });
});

describe("the service's real traffic matches the document", () => {
  it("a quote request and our 200 answer", async () => {
    const body = quoteBody({ taker: "5tzFkiKscXHK5ZXCGbXZxdw7gTjjD1mBwuoFbhUvuAi9" });
    expectValid("QuoteRequest", body);
    const res = await svc.app.request(`${BASE}/quote`, jsonPost(body, auth));
    expect(res.status).toBe(200);
    expectValid("QuoteResponse", await res.json());
  });

  it("the token lists", async () => {
    for (const path of ["/tokens", "/permissioned-tokens"]) {
      const res = await svc.app.request(`${BASE}${path}`, { headers: auth });
      expect(res.status).toBe(200);
      expectValid("TokenList", await res.json());
    }
  });

  it("error bodies: 400 naming the field, 404 no quote, 401", async () => {
    const bad = await svc.app.request(`${BASE}/quote`, jsonPost(quoteBody({ amount: "-1" }), auth));
    expect(bad.status).toBe(400);
    expectValid("ErrorBody", await bad.json());
    const none = await svc.app.request(
      `${BASE}/quote`,
      jsonPost(quoteBody({ amount: "1", tokenIn: MINT.USDC, tokenOut: MINT.USDT }), auth),
    );
    expect(none.status).toBe(404);
    expectValid("ErrorBody", await none.json());
    const denied = await svc.app.request(`${BASE}/quote`, jsonPost(quoteBody()));
    expect(denied.status).toBe(401);
    expectValid("ErrorBody", await denied.json());
  });

  it("a swap request and our answer (an unknown quote is rejected)", async () => {
    const body = { requestId: "r-1", quoteId: "never-quoted", transaction: "AQID" };
    expectValid("SwapRequest", body);
    const res = await svc.app.request(`${BASE}/swap`, jsonPost(body, auth));
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer).toMatchObject({ state: "rejected" });
    expectValid("SwapResponse", answer);
  });

  it("refuses, by schema, a quote request the service refuses", () => {
    const validate = ajv.getSchema("#/components/schemas/QuoteRequest")!;
    expect(validate(quoteBody({ protocol: "v2" }))).toBe(false);
    expect(validate(quoteBody({ amount: "12.5" }))).toBe(false);
    expect(validate(quoteBody({ quoteType: "exactly" }))).toBe(false);
  });
});

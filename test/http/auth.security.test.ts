import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Service } from "../../src/compose.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

const KEY = "k3y-that-is-long-enough-for-prod";
let svc: Service;
beforeAll(async () => {
  svc = await testService({ env: { API_KEY: KEY } });
});
afterAll(() => svc.close());

describe("X-API-KEY", () => {
  it.each([
    ["GET", "/tokens"],
    ["GET", "/permissioned-tokens"],
    ["POST", "/quote"],
    ["POST", "/swap"],
  ])("refuses %s %s without the key with 401 and the contract's error body", async (method, path) => {
    const res = await svc.app.request(path, method === "POST" ? jsonPost(quoteBody()) : {});
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: "missing X-API-KEY header" });
  });

  it("refuses a wrong key, including one that shares a prefix with the right one", async () => {
    for (const wrong of ["nope", KEY.slice(0, -1), `${KEY}x`, ""]) {
      const res = await svc.app.request("/quote", jsonPost(quoteBody(), { "x-api-key": wrong }));
      expect(res.status).toBe(401);
    }
  });

  it("checks the key before parsing the body, so an unauthenticated caller learns nothing of the schema", async () => {
    const res = await svc.app.request("/quote", jsonPost("{broken"));
    expect(res.status).toBe(401);
  });

  it("serves the operator with the right key (header name is case-insensitive)", async () => {
    const res = await svc.app.request("/quote", jsonPost(quoteBody(), { "X-API-KEY": KEY }));
    expect(res.status).toBe(200);
  });

  it("leaves /health and /ready open on both listeners and /metrics on the operations one only", async () => {
    for (const path of ["/health", "/ready"]) {
      expect((await svc.app.request(path)).status).toBe(200);
      expect((await svc.opsApp.request(path)).status).toBe(200);
    }
    expect((await svc.opsApp.request("/metrics")).status).toBe(200);
    // On the operator's listener /metrics is nobody's route: 401 without the key, 404 with it.
    expect((await svc.app.request("/metrics")).status).toBe(401);
    expect((await svc.app.request("/metrics", { headers: { "x-api-key": KEY } })).status).toBe(404);
  });
});

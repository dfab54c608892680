import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ACCEPTANCE_QUOTE_ID,
  acceptanceTransaction,
  runAcceptanceSuite,
} from "../../sandbox/acceptance/suite.ts";
import type { Service } from "../../src/compose.ts";
import { jsonPost } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

let svc: Service;
let server: ServerType;
let url: string;
beforeAll(async () => {
  svc = await testService({ env: { ACCEPTANCE_MODE: "1" } });
  server = serve({ fetch: svc.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((r) => server.once("listening", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await svc.close();
});

describe("ACCEPTANCE_MODE=1 over a real socket", () => {
  it("passes all 8 checks of the operator's acceptance suite, and all 8 again on a second run", async () => {
    for (const run of [1, 2]) {
      const results = await runAcceptanceSuite(url);
      expect({ run, failed: results.filter((r) => !r.ok) }).toEqual({ run, failed: [] });
      expect(results).toHaveLength(8);
    }
  });

  it("answers the canned ...0002 swap with a 400 malformed-request error", async () => {
    const res = await fetch(`${url}/swap`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        quoteId: ACCEPTANCE_QUOTE_ID,
        requestId: "00000000-0000-0000-0000-000000000002",
        transaction: acceptanceTransaction(),
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toHaveProperty("message");
  });

  it("still answers 400 to a /swap whose transaction does not decode", async () => {
    const res = await svc.app.request(
      "/swap",
      jsonPost({ requestId: "x", quoteId: "y", transaction: "AAAA" }),
    );
    expect(res.status).toBe(400);
  });
});

describe("normal mode", () => {
  it("fails the acceptance suite's canned swap checks (they exist only in acceptance mode)", async () => {
    const normal = await testService();
    const s = serve({ fetch: normal.app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => s.once("listening", r));
    try {
      const results = await runAcceptanceSuite(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
      const accepted = results.find((r) => r.name === "swap is accepted");
      expect(accepted?.ok).toBe(false);
      // The quote checks pass in every mode.
      expect(results.filter((r) => r.name.includes("quote")).every((r) => r.ok)).toBe(true);
    } finally {
      await new Promise((r) => s.close(r));
      await normal.close();
    }
  });
});

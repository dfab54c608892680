/**
 * The quote route's shedding before Hono (src/routes/quote.ts, `quoteGate`), through a real socket: a
 * shed quote gets the route's own 404 without passing through Hono, counted as the route counts it;
 * every request the gate does not shed reaches Hono with its decision taken once; what Hono would
 * refuse first (the API key, the body limit) is still refused by Hono. Why the gate exists:
 * docs/capacity.md, "Past capacity" (the shed 404 through Hono cost 1.55x a bare answer).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Service } from "../../src/compose.ts";
import { requestListener } from "../../src/http/listener.ts";
import { QuoteAdmission } from "../../src/routes/quote.ts";
import { jsonPost, quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

const KEY = "k3y-that-is-long-enough-for-prod";
const BASE = "/jupiter/rfq";

/** `svc.app` served on node:http as main.ts serves it (requestListener), on a free port. */
async function serve(svc: Service): Promise<{ url: string; server: Server }> {
  const server = createServer(requestListener(svc.app));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Closes `server` and the connections fetch keeps alive to it. */
const stop = (server: Server) =>
  new Promise((r) => {
    server.close(r);
    server.closeAllConnections();
  });

/** Serves `svc.app` with Hono's fetch spied on: the listener reads it when it is made. */
async function serveSpied(svc: Service) {
  const fetched = vi.spyOn(svc.app, "fetch");
  const served = await serve(svc);
  return { ...served, fetched };
}

const sentAgo = (ms: number) => ({ "x-request-start": String(Date.now() - ms), "x-api-key": KEY });
const value = async (svc: Service, metric: keyof Service["metrics"], labels: Record<string, string>) => {
  const m = svc.metrics[metric] as unknown as {
    get(): Promise<{ values: { labels: Record<string, string | number>; value: number }[] }>;
  };
  const found = (await m.get()).values.filter((v) =>
    Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l),
  );
  return found.reduce((a, v) => a + v.value, 0);
};

let svc: Service;
let url: string;
let server: Server;
beforeAll(async () => {
  svc = await testService({ env: { API_KEY: KEY }, vary: (f) => ({ ...f, basePath: BASE }) });
  ({ url, server } = await serve(svc));
});
afterAll(async () => {
  await stop(server);
  await svc.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("quoteGate: the shed 404 before Hono", () => {
  it("answers a quote that waited 7 s of its 10 s budget with the route's own 404 (status, content type, body), without Hono", async () => {
    const spied = await serveSpied(svc);
    const viaGate = await fetch(`${spied.url}${BASE}/quote`, jsonPost(quoteBody(), sentAgo(7_000)));
    await stop(spied.server);
    expect(spied.fetched).not.toHaveBeenCalled();
    // The same quote in-process (no node:http listener, so no gate): what the route itself answers.
    const viaRoute = await svc.app.request(`${BASE}/quote`, jsonPost(quoteBody(), sentAgo(7_000)));
    expect(viaGate.status).toBe(404);
    expect(viaRoute.status).toBe(404);
    expect(viaGate.headers.get("content-type")).toBe(viaRoute.headers.get("content-type"));
    expect(await viaGate.json()).toEqual(await viaRoute.json());
  });

  it("counts a shed quote as the route does: rfq_no_quote_total{reason}, rfq_http_responses_total{route,status}, the latency by outcome", async () => {
    const before = {
      overloaded: await value(svc, "noQuotes", { reason: "OVERLOADED" }),
      deadline: await value(svc, "noQuotes", { reason: "DEADLINE" }),
      answers: await value(svc, "responses", { route: `${BASE}/quote`, status: "404" }),
      shedLatency: await value(svc, "quoteLatency", { outcome: "shed" }),
      deadlineLatency: await value(svc, "quoteLatency", { outcome: "deadline" }),
    };
    await fetch(`${url}${BASE}/quote`, jsonPost(quoteBody(), sentAgo(7_000)));
    await fetch(
      `${url}${BASE}/quote`,
      jsonPost("{not json", { ...sentAgo(5_000), "x-request-timeout": "5000" }),
    );
    expect((await value(svc, "noQuotes", { reason: "OVERLOADED" })) - before.overloaded).toBe(1);
    expect((await value(svc, "noQuotes", { reason: "DEADLINE" })) - before.deadline).toBe(1);
    expect((await value(svc, "responses", { route: `${BASE}/quote`, status: "404" })) - before.answers).toBe(
      2,
    );
    // The histogram's value summed over its series grows by what it observed: each series moved.
    expect(await value(svc, "quoteLatency", { outcome: "shed" })).toBeGreaterThan(before.shedLatency);
    expect(await value(svc, "quoteLatency", { outcome: "deadline" })).toBeGreaterThan(before.deadlineLatency);
  });

  it("hands a quote it does not shed to Hono with its decision taken once: priced 200, judged by one decide()", async () => {
    const decide = vi.spyOn(QuoteAdmission.prototype, "decide");
    const res = await fetch(`${url}${BASE}/quote`, jsonPost(quoteBody(), sentAgo(10)));
    expect(res.status).toBe(200);
    expect(decide).toHaveBeenCalledTimes(1);
    // In-process (no gate) the route decides, once too.
    const inProcess = await svc.app.request(`${BASE}/quote`, jsonPost(quoteBody(), sentAgo(10)));
    expect(inProcess.status).toBe(200);
    expect(decide).toHaveBeenCalledTimes(2);
  });

  it("leaves a quote without the right API key to Hono: 401, even when it would be shed", async () => {
    const headers = { "x-request-start": String(Date.now() - 7_000) };
    const missing = await fetch(`${url}${BASE}/quote`, jsonPost(quoteBody(), headers));
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ message: "missing X-API-KEY header" });
    const wrong = await fetch(
      `${url}${BASE}/quote`,
      jsonPost(quoteBody(), { ...headers, "x-api-key": `${KEY}x` }),
    );
    expect(wrong.status).toBe(401);
  });

  it("leaves a quote whose declared body is over the limit to Hono: 413, even when it would be shed", async () => {
    const big = JSON.stringify(quoteBody({ pad: "x".repeat(svc.config.file.limits.maxBodyBytes) }));
    const res = await fetch(`${url}${BASE}/quote`, jsonPost(big, sentAgo(7_000)));
    expect(res.status).toBe(413);
  });

  it("judges only POST on the route's own path: the path without basePath, another method and another route pass to Hono", async () => {
    const { url, server, fetched } = await serveSpied(svc);
    const unprefixed = await fetch(`${url}/quote`, jsonPost(quoteBody(), sentAgo(7_000)));
    expect(unprefixed.status).toBe(404);
    expect(await unprefixed.json()).toEqual({ message: "no route POST /quote" });
    const get = await fetch(`${url}${BASE}/quote`, { headers: sentAgo(7_000) });
    expect(get.status).toBe(404);
    expect(await get.json()).toEqual({ message: `no route GET ${BASE}/quote` });
    const swap = await fetch(`${url}${BASE}/swap`, jsonPost("{}", sentAgo(7_000)));
    expect(swap.status).toBe(400);
    expect(fetched).toHaveBeenCalledTimes(3);
    // A query string does not hide the route from the gate.
    const queried = await fetch(`${url}${BASE}/quote?x=1`, jsonPost(quoteBody(), sentAgo(7_000)));
    expect(queried.status).toBe(404);
    expect(fetched).toHaveBeenCalledTimes(3);
    await stop(server);
  });
});

describe("QuoteAdmission: the gate's decision read back once", () => {
  it("gives a kept decision to the first take() and nothing after; a request never kept has none", () => {
    const admission = new QuoteAdmission({
      now: () => 1_000_000,
      minBudgetMs: 15,
      // Off: the process's own event-loop delay would otherwise take part (src/http/shed.ts).
      shedShare: 0,
      metrics: svc.metrics,
    });
    const req = {} as Parameters<QuoteAdmission["keep"]>[0];
    const a = admission.decide(String(1_000_000 - 10), "250");
    expect(a).toEqual({ deadline: { atMs: 1_000_240, startMs: 999_990, source: "header" } });
    admission.keep(req, a);
    expect(admission.take(req)).toBe(a);
    expect(admission.take(req)).toBeUndefined();
    expect(admission.take({} as typeof req)).toBeUndefined();
    expect(admission.take(undefined)).toBeUndefined();
  });
});

/**
 * The makers here are minimal HTTP servers whose answers each test scripts (better price, slower,
 * late, malformed): fakes, because the real webhook cannot be told to answer late or wrongly. The
 * fan-out reaches them over real sockets.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fanOutQuote, type QuoteIntent, requestIdFor } from "../../../sandbox/operator/fanout.ts";
import { FillRateTracker } from "../../../sandbox/operator/fill-rate.ts";
import { HttpClient } from "../../../sandbox/operator/http-client.ts";
import { WebhookRegistry } from "../../../sandbox/operator/webhooks.ts";
import { MINT } from "../../support/config.ts";

const MAKER_KEY = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

interface Script {
  /** Quoted amount on the free side, or a status to answer instead. */
  quote?: bigint;
  status?: number;
  delayMs?: number;
  tamper?: (body: Record<string, unknown>) => void;
}

interface FakeMaker {
  name: string;
  url: string;
  script: Script;
  seen: { headers: http.IncomingHttpHeaders; body: Record<string, unknown> }[];
  server: http.Server;
}

const makers: FakeMaker[] = [];
const client = new HttpClient();

async function fakeMaker(name: string): Promise<FakeMaker> {
  const m = { name, url: "", script: {} as Script, seen: [] as FakeMaker["seen"] } as FakeMaker;
  m.server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/tokens") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify([MINT.SOL, MINT.USDC, MINT.USDT]));
      }
      if (req.url === "/permissioned-tokens") {
        res.writeHead(404);
        return res.end();
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      m.seen.push({ headers: req.headers, body });
      const s = m.script;
      const answer = () => {
        if (s.status) {
          res.writeHead(s.status, { "content-type": "application/json" });
          return res.end(JSON.stringify({ message: "scripted" }));
        }
        const exactIn = body.quoteType === "exactIn";
        const out: Record<string, unknown> = {
          requestId: body.requestId,
          quoteId: body.quoteId,
          tokenIn: body.tokenIn,
          tokenOut: body.tokenOut,
          quoteType: body.quoteType,
          protocol: "v1",
          amountIn: exactIn ? body.amount : String(s.quote),
          amountOut: exactIn ? String(s.quote) : body.amount,
          maker: MAKER_KEY,
          prioritizationFeeToUse: 1000,
        };
        s.tamper?.(out);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(out));
      };
      if (s.delayMs) setTimeout(answer, s.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => m.server.listen(0, "127.0.0.1", r));
  m.url = `http://127.0.0.1:${(m.server.address() as AddressInfo).port}`;
  makers.push(m);
  return m;
}

let a: FakeMaker;
let b: FakeMaker;
let registry: WebhookRegistry;
let fillRate: FillRateTracker;

beforeAll(async () => {
  a = await fakeMaker("a");
  b = await fakeMaker("b");
  registry = new WebhookRegistry({ http: client });
  registry.register({ name: "a", baseUrl: a.url, apiKey: "a".repeat(20) });
  registry.register({ name: "b", baseUrl: b.url });
  await registry.syncAll();
  fillRate = new FillRateTracker({ minSamples: 1 });
});

afterAll(async () => {
  client.close();
  await Promise.all(makers.map((m) => new Promise((r) => m.server.close(r))));
});

const intent = (over: Partial<QuoteIntent> = {}): QuoteIntent => ({
  inputMint: MINT.SOL,
  outputMint: MINT.USDC,
  amount: 1_000_000_000n,
  quoteType: "exactIn",
  feeBps: 10,
  ...over,
});

function reset(sa: Script, sb: Script) {
  a.script = sa;
  b.script = sb;
  a.seen = [];
  b.seen = [];
}

describe("quote fan-out", () => {
  it("picks the highest amountOut for exactIn", async () => {
    reset({ quote: 180_000_000n }, { quote: 180_100_000n });
    const r = await fanOutQuote({ http: client, registry, fillRate }, intent());
    expect(r.quotes.map((q) => q.webhook.name)).toEqual(["b", "a"]);
    expect(r.quotes[0]?.amountOut).toBe(180_100_000n);
  });

  it("picks the lowest amountIn for exactOut", async () => {
    reset({ quote: 999_000n }, { quote: 1_001_000n });
    const r = await fanOutQuote(
      { http: client, registry, fillRate },
      intent({ quoteType: "exactOut", amount: 180_000_000n }),
    );
    expect(r.quotes[0]?.webhook.name).toBe("a");
    expect(r.quotes[0]?.amountIn).toBe(999_000n);
  });

  it("breaks a tie in favour of the faster answer", async () => {
    reset({ quote: 180_000_000n, delayMs: 60 }, { quote: 180_000_000n });
    const r = await fanOutQuote({ http: client, registry, fillRate }, intent());
    expect(r.quotes.map((q) => q.webhook.name)).toEqual(["b", "a"]);
  });

  it("drops an answer that arrives after the deadline, however good", async () => {
    reset({ quote: 999_000_000n, delayMs: 400 }, { quote: 180_000_000n });
    const r = await fanOutQuote({ http: client, registry, fillRate, timeoutMs: 100 }, intent());
    expect(r.quotes.map((q) => q.webhook.name)).toEqual(["b"]);
    expect(r.attempts.find((x) => x.webhook === "a")?.outcome).toBe("late");
  });

  it("ignores an answer that does not echo the requested amount", async () => {
    reset({ quote: 999_000_000n, tamper: (o) => (o.amountIn = "1") }, { quote: 180_000_000n });
    const r = await fanOutQuote({ http: client, registry, fillRate }, intent());
    expect(r.quotes.map((q) => q.webhook.name)).toEqual(["b"]);
    expect(r.attempts.find((x) => x.webhook === "a")).toMatchObject({ outcome: "invalid" });
  });

  it("counts a 404 as no quote and a 500 as an error", async () => {
    reset({ status: 404 }, { status: 500 });
    const r = await fanOutQuote({ http: client, registry, fillRate }, intent());
    expect(r.quotes).toEqual([]);
    expect(Object.fromEntries(r.attempts.map((x) => [x.webhook, x.outcome]))).toEqual({
      a: "noQuote",
      b: "error",
    });
  });

  it("sends the contract's body and headers: x-request-start, x-request-timeout 250, the API key", async () => {
    reset({ quote: 1n }, { quote: 1n });
    const before = Date.now();
    await fanOutQuote(
      { http: client, registry, fillRate },
      intent({ taker: MAKER_KEY, suggestedPrioritizationFees: 5 }),
    );
    const seenA = a.seen[0]!;
    expect(seenA.headers["x-request-timeout"]).toBe("250");
    expect(Number(seenA.headers["x-request-start"])).toBeGreaterThanOrEqual(before);
    expect(seenA.headers["x-api-key"]).toBe("a".repeat(20));
    expect(b.seen[0]!.headers["x-api-key"]).toBeUndefined();
    expect(seenA.body).toMatchObject({
      tokenIn: MINT.SOL,
      tokenOut: MINT.USDC,
      amount: "1000000000",
      quoteType: "exactIn",
      protocol: "v1",
      feeBps: 10,
      taker: MAKER_KEY,
      suggestedPrioritizationFees: 5,
    });
    // Same request id for both makers, distinct quote ids.
    expect(seenA.body.requestId).toBe(b.seen[0]!.body.requestId);
    expect(seenA.body.quoteId).not.toBe(b.seen[0]!.body.quoteId);
  });

  it("repeats the request id for identical parameters and changes it for different ones", () => {
    expect(requestIdFor(intent())).toBe(requestIdFor(intent()));
    expect(requestIdFor(intent())).not.toBe(requestIdFor(intent({ amount: 2n })));
  });

  it("asks no maker that does not support the pair, and none that is suspended", async () => {
    reset({ quote: 1n }, { quote: 1n });
    await fanOutQuote({ http: client, registry, fillRate }, intent({ outputMint: MINT.JUP }));
    expect(a.seen.length + b.seen.length).toBe(0);
    fillRate.record("a", "failed");
    expect(fillRate.isSuspended("a")).toBe(true);
    await fanOutQuote({ http: client, registry, fillRate }, intent());
    expect(a.seen.length).toBe(0);
    expect(b.seen.length).toBe(1);
  });
});

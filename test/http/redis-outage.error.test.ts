/**
 * Redis going away under the webhook, with the Redis client exactly as production makes it
 * (src/redis/client.ts: no offline queue, short command timeout, bounded retries) against a real
 * redis-server of this file's own that it kills, freezes and restarts (tooling/redis-server.ts).
 *
 * Pinned: a quote is a 404 with a reason, answered before the operator's deadline, never a 5xx;
 * the circuit opens after repeated failures and a frozen store costs no more waiting; an outage is
 * reported as one (reason label, /ready naming the store, the controls' reason) and not as a pause;
 * quoting resumes once Redis is back; a /swap during the outage is an honest rejection and nothing is
 * signed. Times here are correctness bounds relative to x-request-start, with wide margins, not speed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createRedisClient, waitReady } from "../../src/redis/client.ts";
import { type KillableRedis, killableRedis } from "../../tooling/redis-server.ts";
import { type CountingSigner, type Harness, inProcess, postSwap } from "../support/harness.ts";
import { jsonPost, quoteBody, readJson } from "../support/quotes.ts";
import { faultyHarness, signedJupFill } from "../swap/setup.ts";

let server: KillableRedis;
let h: Harness;
let signer: CountingSigner;

beforeAll(async () => {
  server = await killableRedis();
  const redis = createRedisClient(server.url);
  await waitReady(redis, "REDIS_URL", server.url);
  ({ h, signer } = await faultyHarness({ redis: { redis, prefix: "outage:" } }));
  return async () => {
    await h.close();
    redis.disconnect();
    await server.stop();
  };
});

const TIMEOUT_MS = 250;
/**
 * What a loaded 2-core machine may add to an answer (timer and event-loop lag, the test's own reading
 * of the body). Without the deadline bound a frozen store would hold a quote for the 1 s command
 * timeout, so the bound still tells the two apart.
 */
const SLACK_MS = 200;

/** POST /quote as the operator stamps it; returns the status, body and how late after the start. */
async function quote() {
  const start = Date.now();
  const res = await h.app.request(
    "/quote",
    jsonPost(quoteBody(), {
      "x-request-start": String(start),
      "x-request-timeout": String(TIMEOUT_MS),
    }),
  );
  return { status: res.status, body: await readJson(res), afterStartMs: Date.now() - start };
}

async function noQuoteCount(reason: string): Promise<number> {
  const m = await h.metrics.noQuotes.get();
  return m.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

async function waitUntil(ok: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await ok()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`condition not met within ${ms} ms`);
}

describe("Redis killed under the quote path", () => {
  it("answers 404 QUOTE_STORE_UNAVAILABLE inside the deadline (never 5xx), and quotes again once Redis is back", {
    timeout: 30_000,
  }, async () => {
    expect((await quote()).status).toBe(200);
    const before = await noQuoteCount("QUOTE_STORE_UNAVAILABLE");
    await server.kill();
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await quote());
    for (const a of answers) {
      expect(a.status).toBe(404);
      expect(a.afterStartMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    }
    expect(answers[0]?.body.message).toMatch(/quote store is unavailable/);
    expect(await noQuoteCount("QUOTE_STORE_UNAVAILABLE")).toBeGreaterThanOrEqual(before + 20);
    expect(h.service.storeCircuit.state).not.toBe("closed");

    const ready = await h.app.request("/ready");
    expect(ready.status).toBe(503);
    expect((await readJson(ready)).checks.quoteStore).toBe(false);

    await server.start();
    // Reconnect (at most 500 ms apart) and the circuit's probe: back well within a few seconds.
    await waitUntil(async () => (await quote()).status === 200, 5_000);
    expect(h.service.storeCircuit.state).toBe("closed");
  });

  it("reports switches it cannot read as CONTROLS_UNAVAILABLE, not as a pause", {
    timeout: 30_000,
  }, async () => {
    await server.kill();
    try {
      // The controls fail closed after failClosedAfterMs (3 s by default) without a successful read.
      await waitUntil(async () => h.service.controls.outage() !== undefined, 10_000);
      expect(h.service.controls.state().paused).toBe(false);
      const before = await noQuoteCount("CONTROLS_UNAVAILABLE");
      const a = await quote();
      expect(a.status).toBe(404);
      expect(a.body.message).toMatch(/shared switches \(Redis\) cannot be read/);
      expect(await noQuoteCount("CONTROLS_UNAVAILABLE")).toBe(before + 1);
      expect(await noQuoteCount("PAUSED")).toBe(0);
    } finally {
      await server.start();
    }
    await waitUntil(async () => (await quote()).status === 200, 5_000);
  });
});

describe("Redis frozen (accepts connections, answers nothing)", () => {
  it("cuts the store call at the operator's deadline, then fails fast once the circuit has opened", {
    timeout: 30_000,
  }, async () => {
    expect((await quote()).status).toBe(200);
    server.freeze();
    try {
      // Each quote waits for the store no longer than its deadline; the circuit counts a call as failed
      // once the client's own command timeout (1 s) ends it, and opens after three.
      const answers = [];
      const t0 = Date.now();
      while (h.service.storeCircuit.state !== "open" && Date.now() - t0 < 10_000) answers.push(await quote());
      expect(h.service.storeCircuit.state).toBe("open");
      expect(answers.length).toBeGreaterThan(0);
      for (const a of answers) {
        expect(a.status).toBe(404);
        expect(a.afterStartMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      }
      // Open: no waiting on a store known to be gone. A bounded wait cannot end before 250 - 15/2 ms
      // (a timer never fires early); the open circuit answers without one.
      const fast = await quote();
      expect(fast.status).toBe(404);
      expect(fast.afterStartMs).toBeLessThan(200);
    } finally {
      server.thaw();
    }
    await waitUntil(async () => (await quote()).status === 200, 5_000);
  });
});

describe("/swap while the quote store is down", () => {
  it("is answered with an honest rejection in plain words (not the Redis client's text) inside the budget, and nothing is signed", {
    timeout: 30_000,
  }, async () => {
    const http = inProcess(h.app);
    await waitUntil(async () => (await quote()).status === 200, 5_000);
    const { body } = await signedJupFill(h, http, 5_000_000_000n);
    await server.kill();
    try {
      const signs = signer.count;
      const t0 = Date.now();
      const res = await postSwap(http, body);
      expect(Date.now() - t0).toBeLessThan(25_000);
      expect(res.status).toBe(200);
      expect(res.body.state).toBe("rejected");
      // In plain words, never the Redis client's own text (it stays in the log).
      expect(res.body.rejectionReason).toMatch(
        /^quote store unavailable: (Redis could not be reached|failing fast while it is down|no answer within \d+ ms|no time left in the swap budget)$/,
      );
      expect(res.body.rejectionReason).not.toMatch(/Stream|enableOfflineQueue|ECONN/);
      expect(signer.count - signs).toBe(0);
    } finally {
      await server.start();
    }
  });
});

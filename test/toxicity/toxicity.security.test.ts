/**
 * Attacks on the toxic-flow controls that must be refused: the admin routes without the admin key,
 * with the operator's key, from the operator's listener, or with malformed or contradictory edits; a
 * denied or flagged taker dodging its standing through an indicative quote or a quote asked in another
 * taker's name. The service as `npm start` composes it with the paper setup's memory lists (no Redis),
 * the local chain, in-process requests.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fundTaker } from "../../src/chain/local/seed.ts";
import { ADMIN_KEY_HEADER } from "../../src/routes/admin.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Harness,
  inProcess,
  ObservedChain,
  observedHarness,
  operatorFill,
  postSwap,
} from "../support/harness.ts";

const ADMIN_KEY = "admin-key-for-the-security-test";
const API_KEY = "operator-key-for-the-security-test";
const denied = Keypair.generate();
const allowed = Keypair.generate();
const flagged = Keypair.generate();
const clean = Keypair.generate();

let h: Harness;
let signer: CountingSigner;
let chain: ObservedChain;
beforeAll(async () => {
  ({ h, signer, chain } = await observedHarness(
    {
      env: { ADMIN_API_KEY: ADMIN_KEY, API_KEY },
      vary: (f) => ({
        ...f,
        toxicity: {
          ...f.toxicity,
          enabled: true,
          action: "widen",
          deny: [denied.publicKey.toBase58()],
          allow: [allowed.publicKey.toBase58()],
        },
      }),
    },
    (c) => new ObservedChain(c),
  ));
  for (const k of [denied, allowed, flagged, clean]) {
    fundTaker(h.chain, k.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 50_000_000_000n } });
  }
  await h.service.takers?.put("flags", {
    taker: flagged.publicKey.toBase58(),
    reason: "test",
    source: "admin",
    atMs: Date.now(),
    untilMs: Date.now() + 600_000,
  });
});
afterAll(() => h?.close());

const admin = (path: string, init: RequestInit = {}, key: string | null = ADMIN_KEY) =>
  h.service.opsApp.request(path, {
    ...init,
    headers: { "content-type": "application/json", ...(key ? { [ADMIN_KEY_HEADER]: key } : {}) },
  });
const op = (path: string, init: RequestInit) =>
  inProcess(h.app)(path, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), "x-api-key": API_KEY },
  });
const takerOf = () => h.service.takers?.list(Date.now());

describe("the toxic-flow admin routes refuse", () => {
  const victim = Keypair.generate().publicKey.toBase58();
  const edits: [string, RequestInit][] = [
    ["/admin/takers", { method: "GET" }],
    [`/admin/takers/flags/${victim}`, { method: "PUT", body: JSON.stringify({ ttlMs: 60_000 }) }],
    [`/admin/takers/deny/${denied.publicKey.toBase58()}`, { method: "DELETE" }],
    [`/admin/takers/allow/${victim}`, { method: "PUT", body: "{}" }],
  ];

  it("every caller without the admin key, or with the operator's key instead (401), changing nothing", async () => {
    const before = JSON.stringify(takerOf());
    for (const [path, init] of edits) {
      expect((await admin(path, init, null)).status, path).toBe(401);
      expect((await admin(path, init, API_KEY)).status, path).toBe(401);
      expect((await admin(path, init, `${ADMIN_KEY}x`)).status, path).toBe(401);
    }
    expect(JSON.stringify(takerOf())).toBe(before);
  });

  it("the operator's listener, with the operator's key (404: it does not serve /admin)", async () => {
    for (const [path, init] of edits) expect((await op(path, init)).status, path).toBe(404);
    expect(takerOf()?.flags.map((e) => e.taker)).toEqual([flagged.publicKey.toBase58()]);
  });

  it("a flag without a TTL, a TTL over a year, a taker that is not a public key, an unknown list", async () => {
    const noTtl = await admin(`/admin/takers/flags/${victim}`, { method: "PUT", body: "{}" });
    expect(noTtl.status).toBe(400);
    expect(((await noTtl.json()) as { message: string }).message).toMatch(/^ttlMs: required/);
    const long = await admin(`/admin/takers/flags/${victim}`, {
      method: "PUT",
      body: JSON.stringify({ ttlMs: 400 * 86_400_000 }),
    });
    expect(long.status).toBe(400);
    const bad = await admin("/admin/takers/deny/not-a-key", { method: "PUT", body: "{}" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/^taker: /);
    expect((await admin(`/admin/takers/vip/${victim}`, { method: "PUT", body: "{}" })).status).toBe(404);
    expect(takerOf()?.flags.some((e) => e.taker === victim)).toBe(false);
    expect(takerOf()?.deny.some((e) => e.taker === "not-a-key")).toBe(false);
  });

  it("denying an allowed taker, allowing a denied one, removing a configured entry (400, unchanged)", async () => {
    const a = allowed.publicKey.toBase58();
    const d = denied.publicKey.toBase58();
    expect((await admin(`/admin/takers/deny/${a}`, { method: "PUT", body: "{}" })).status).toBe(400);
    expect((await admin(`/admin/takers/allow/${d}`, { method: "PUT", body: "{}" })).status).toBe(400);
    const del = await admin(`/admin/takers/deny/${d}`, { method: "DELETE" });
    expect(del.status).toBe(400);
    expect(((await del.json()) as { message: string }).message).toContain("toxicity.deny");
    expect(h.service.takers?.standing(d, Date.now()).kind).toBe("denied");
    expect(h.service.takers?.standing(a, Date.now()).kind).toBe("allowed");
  });
});

/** rfq_toxic_swaps_rejected_total for one standing. */
const refusedBy = async (standing: string) => {
  const text = await h.metrics.registry.metrics();
  const m = new RegExp(`rfq_toxic_swaps_rejected_total\\{standing="${standing}"\\} (\\d+)`).exec(text);
  return Number(m?.[1] ?? 0);
};

describe("a taker dodging its standing is refused", () => {
  const quote = (taker?: Keypair) =>
    askQuote(h, inProcessWithKey, {
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000_000_000n,
      ...(taker ? { taker: taker.publicKey } : {}),
    });
  const inProcessWithKey = (path: string, init: RequestInit) => op(path, init);

  it("a denied taker: 404 TAKER_DENIED when named, botActivityDetected on an indicative quote, unsigned", async () => {
    const named = await op("/quote", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        requestId: "r-d",
        quoteId: "q-d",
        tokenIn: MINT.JUP,
        tokenOut: MINT.USDC,
        amount: "1000000000",
        quoteType: "exactIn",
        protocol: "v1",
        feeBps: 10,
        taker: denied.publicKey.toBase58(),
      }),
    });
    expect(named.status).toBe(404);
    expect(((await named.json()) as { message: string }).message).toMatch(/^no quote: TAKER_DENIED: /);

    const { response, stored } = await quote();
    const tx = await operatorFill(h, stored, denied.publicKey);
    tx.sign([denied]);
    const before = { signed: signer.count, sent: chain.sends };
    const counted = await refusedBy("denied");
    const swap = await postSwap(inProcessWithKey, { ...response, transaction: tx });
    expect(swap.body.state).toEqual({ rejectedWithReason: "botActivityDetected" });
    expect(swap.body.rejectionReason).toBe(`taker ${denied.publicKey.toBase58()} is on the deny list`);
    expect({ signed: signer.count, sent: chain.sends }).toEqual(before);
    expect(await refusedBy("denied")).toBe(counted + 1);
  });

  it("a flagged taker filling an indicative quote: botActivityDetected, flagged for toxic flow, unsigned, counted by standing", async () => {
    const { response, stored } = await quote();
    const tx = await operatorFill(h, stored, flagged.publicKey);
    tx.sign([flagged]);
    const before = { signed: signer.count, sent: chain.sends };
    const counted = await refusedBy("flagged");
    const swap = await postSwap(inProcessWithKey, { ...response, transaction: tx });
    expect(swap.body).toEqual({
      quoteId: response.quoteId,
      state: { rejectedWithReason: "botActivityDetected" },
      rejectionReason: `taker ${flagged.publicKey.toBase58()} is flagged for toxic flow`,
    });
    expect({ signed: signer.count, sent: chain.sends }).toEqual(before);
    expect(await refusedBy("flagged")).toBe(counted + 1);
  });

  it("a flagged taker filling the (widened) quote asked in its own name, and an allowed or clean taker an indicative one: accepted", async () => {
    const own = await quote(flagged);
    const tx = await operatorFill(h, own.stored, flagged.publicKey);
    tx.sign([flagged]);
    expect((await postSwap(inProcessWithKey, { ...own.response, transaction: tx })).body.state).toBe(
      "accepted",
    );
    for (const taker of [allowed, clean]) {
      const { response, stored } = await quote();
      const fill = await operatorFill(h, stored, taker.publicKey);
      fill.sign([taker]);
      expect((await postSwap(inProcessWithKey, { ...response, transaction: fill })).body.state).toBe(
        "accepted",
      );
    }
  });

  it("a flagged taker asking in a clean taker's name and filling with its own key (refused, unsigned)", async () => {
    const { response, stored } = await quote(clean);
    const tx = await operatorFill(h, stored, flagged.publicKey);
    tx.sign([flagged]);
    const before = { signed: signer.count, sent: chain.sends };
    const swap = await postSwap(inProcessWithKey, { ...response, transaction: tx });
    expect(swap.body.state).toBe("rejected");
    expect(swap.body.rejectionReason).toMatch(/^INVALID_TAKER/);
    expect({ signed: signer.count, sent: chain.sends }).toEqual(before);
  });

  it("an allowed taker is never widened or refused (the control: same amounts as a clean taker)", async () => {
    const a = await quote(allowed);
    const c = await quote(clean);
    const f = await quote(flagged);
    expect(a.response.amountOut).toBe(c.response.amountOut);
    expect(BigInt(f.response.amountOut)).toBeLessThan(BigInt(c.response.amountOut));
  });
});

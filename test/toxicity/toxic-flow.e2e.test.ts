/**
 * The toxic-flow controls through the real path: the webhook and its admin API on real HTTP sockets,
 * a real Redis (quote store, journal, prices from the maker's engine, the shared taker lists), the
 * real fill ledger (the test PostgreSQL server) and the local chain. A taker fills, then the script
 * moves the Redis price feed against the maker; its 60 s markouts (horizons shortened) come out with
 * the move's sign and size, the flagger reads them back from the ledger and flags the taker, and its
 * next quote is widened by exactly the configured spread (or refused 404 `TAKER_FLAGGED`), while its
 * fill of an indicative quote is refused `botActivityDetected`, unsigned and unsent.
 */
import { Keypair } from "@solana/web3.js";
import { afterAll, describe, expect, it } from "vitest";
import type { FileConfig } from "../../config/schema.ts";
import { publishPrice } from "../../pricing/redis.ts";
import { fundTaker } from "../../src/chain/local/seed.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { ADMIN_KEY_HEADER } from "../../src/routes/admin.ts";
import { freshLedger } from "../ledger/support.ts";
import { MINT } from "../support/config.ts";
import {
  askQuote,
  type CountingSigner,
  type Fetcher,
  type Harness,
  listen,
  ObservedChain,
  observedHarness,
  operatorFill,
  postSwap,
} from "../support/harness.ts";
import { fileRedis } from "../support/redis.ts";

const { redis, prefix } = fileRedis();
const ADMIN_KEY = "admin-key-for-the-toxic-flow-test";
const JUP = 1_000_000n; // JUP has 6 decimals, like USDC
const SPREAD_BPS = 15n; // the shipped JUP/USDC level up to 20,000 JUP
const WIDEN_BPS = 30;

interface Stack {
  h: Harness;
  signer: CountingSigner;
  chain: ObservedChain;
  ledger: Ledger;
  op: Awaited<ReturnType<typeof listen>>;
  admin: Awaited<ReturnType<typeof listen>>;
  names: { keyPrefix: string; channel: string };
}

async function stack(name: string, toxicity: Partial<FileConfig["toxicity"]>): Promise<Stack> {
  const names = { keyPrefix: `${prefix}${name}:price:`, channel: `${prefix}${name}:prices` };
  await publishPrice(redis, "JUP/USDC", { ts: Date.now(), mid: "0.80" }, names);
  const ledger = await freshLedger("postgres");
  const { h, signer, chain } = await observedHarness(
    {
      env: { ADMIN_API_KEY: ADMIN_KEY },
      redis: { redis, prefix: `${prefix}${name}:svc:` },
      ledger,
      ledgerWriter: { intervalMs: 50 },
      markoutHorizons: [
        { label: "0s", ms: 0 },
        { label: "60s", ms: 400 },
      ],
      vary: (f) => ({
        ...f,
        pairs: f.pairs.map((p) =>
          p.base === "JUP" && p.quote === "USDC" ? { ...p, priceSource: "engine" } : p,
        ),
        priceSources: {
          ...f.priceSources,
          engine: { kind: "redis", ...names, maxAgeMs: 600_000, pollMs: 50 },
        },
        toxicity: { ...f.toxicity, enabled: true, widenBps: WIDEN_BPS, flagBelowBps: -50, ...toxicity },
      }),
    },
    (c) => new ObservedChain(c),
  );
  const op = await listen(h.app);
  const admin = await listen(h.service.opsApp);
  return { h, signer, chain, ledger, op, admin, names };
}

async function closeStack(s: Stack | undefined): Promise<void> {
  if (!s) return;
  await s.op.close();
  await s.admin.close();
  await s.h.close();
  await s.ledger.db.close();
}

/** Waits until a mid is what the webhook's price source holds (the feed is pub/sub plus a poll). */
async function priceIs(s: Stack, mid: string): Promise<void> {
  await publishPrice(redis, "JUP/USDC", { ts: Date.now(), mid }, s.names);
  const want = Number(mid);
  const until = Date.now() + 5_000;
  for (;;) {
    const source = s.h.service.priceSources.get("engine");
    const p = source?.price("JUP/USDC");
    if (p && Number(p.mid.num) / Number(p.mid.den) === want) return;
    if (Date.now() > until) throw new Error(`the engine's price did not reach ${mid}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Every markout horizon sampled, journaled, judged, and written to the ledger. */
async function markoutsDone(s: Stack): Promise<void> {
  const m = s.h.service.markouts;
  const until = Date.now() + 20_000;
  while ((m?.scheduled ?? 0) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  expect(m?.scheduled).toBe(0);
  await m?.idle();
  await s.h.service.ledgerWriter?.drain();
}

/**
 * The script: the taker sells `amount` JUP at mid 0.80 (a firm quote, or an indicative one), the fill
 * lands, then the mid falls 2% to 0.784. Returns the fill's price (USDC per JUP).
 */
async function toxicFill(s: Stack, taker: Keypair, indicative = false): Promise<number> {
  await priceIs(s, "0.80");
  const { response, stored } = await askQuote(s.h, s.op.fetch, {
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount: 1_000n * JUP,
    ...(indicative ? {} : { taker: taker.publicKey }),
  });
  const tx = await operatorFill(s.h, stored, taker.publicKey);
  tx.sign([taker]);
  const swap = await postSwap(s.op.fetch, {
    requestId: response.requestId,
    quoteId: response.quoteId,
    transaction: tx,
  });
  expect(swap.body.state).toBe("accepted");
  expect(await s.h.confirmations.settled(response.quoteId)).toBe("landed");
  await priceIs(s, "0.784");
  await markoutsDone(s);
  return Number(stored.response.amountOut) / Number(stored.response.amountIn);
}

const adminGet = (s: Stack, path: string) =>
  s.admin.fetch(path, { headers: { [ADMIN_KEY_HEADER]: ADMIN_KEY } });

async function quoteStatus(
  f: Fetcher,
  taker: Keypair | undefined,
  amount = 1_000n * JUP,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await f("/quote", {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-timeout": "10000" },
    body: JSON.stringify({
      requestId: `r-${Math.random()}`,
      quoteId: `q-${Math.random()}`,
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: amount.toString(),
      quoteType: "exactIn",
      protocol: "v1",
      feeBps: 10,
      ...(taker ? { taker: taker.publicKey.toBase58() } : {}),
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("toxic flow, action widen: a taker made toxic by a scripted price move", () => {
  let s: Stack | undefined;
  afterAll(() => closeStack(s));

  it("gets markouts of the move's sign and size, is flagged after N fills, then quoted wider by exactly widenBps and refused botActivityDetected on an indicative quote", {
    timeout: 180_000,
  }, async () => {
    s = await stack("widen", { minFills: 2, action: "widen" });
    const taker = Keypair.generate();
    const clean = Keypair.generate();
    for (const k of [taker, clean]) {
      fundTaker(s.h.chain, k.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 50_000n * JUP } });
    }

    // Fill 1 (firm quote): one markout, fewer than minFills: not flagged.
    const price = await toxicFill(s, taker);
    const expected60s = ((0.784 - price) / 0.784) * 10_000; // the maker bought JUP before a 2% fall
    const rows = await s.ledger.db.query<{ horizon: string; markout_bps: number; taker: string }>(
      "SELECT horizon, markout_bps, taker FROM markouts ORDER BY horizon_ms",
    );
    expect(rows.map((r) => r.horizon)).toEqual(["0s", "60s"]);
    expect(rows[0]?.markout_bps).toBeGreaterThan(0); // the spread kept at fill time
    expect(rows[1]?.markout_bps).toBeCloseTo(expected60s, 6);
    expect(rows[1]?.markout_bps).toBeLessThan(-180); // about -2% less the 15 bps spread
    expect(rows[1]?.markout_bps).toBeGreaterThan(-190);
    expect(rows[1]?.taker).toBe(taker.publicKey.toBase58());
    expect(s.h.service.takers?.standing(taker.publicKey.toBase58(), Date.now()).kind).toBe("none");

    // Fill 2 on an indicative quote: not flagged yet, so accepted; its markout flags the taker.
    await toxicFill(s, taker, true);
    const listed = (await (await adminGet(s, "/admin/takers")).json()) as {
      flags: { taker: string; source: string; fills: number; avgBps: number; untilMs: number }[];
    };
    expect(listed.flags).toHaveLength(1);
    expect(listed.flags[0]).toMatchObject({
      taker: taker.publicKey.toBase58(),
      source: "markouts",
      fills: 2,
    });
    expect(listed.flags[0]?.avgBps).toBeCloseTo(expected60s, 4);
    expect(listed.flags[0]?.untilMs).toBeGreaterThan(Date.now() + 86_000_000); // the default 24 h

    // Its next quote, 1,000.000007 JUP sold at mid 0.80: the taker receives floor(amount x mid x
    // (1 - (15 + 30) bps)), the clean taker the same with 15 bps only.
    await priceIs(s, "0.80");
    const amount = 1_000n * JUP + 7n;
    const widened = await quoteStatus(s.op.fetch, taker, amount);
    const normal = await quoteStatus(s.op.fetch, clean, amount);
    expect(widened.status).toBe(200);
    expect(normal.status).toBe(200);
    const out = (bps: bigint, sold = amount) => (sold * 80n * (10_000n - bps)) / (100n * 10_000n); // floor
    expect(normal.body.amountOut).toBe(out(SPREAD_BPS).toString());
    expect(widened.body.amountOut).toBe(out(SPREAD_BPS + BigInt(WIDEN_BPS)).toString());
    expect(out(SPREAD_BPS + 30n)).toBe(796_400_005n); // 796,400,005.57: rounded down, the maker's way

    // Buying 1,000 JUP exactOut: the flagged taker pays ceil(amount x mid x (1 + 45 bps)).
    const buy = await s.op.fetch("/quote", {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-timeout": "10000" },
      body: JSON.stringify({
        requestId: "r-buy",
        quoteId: "q-buy",
        tokenIn: MINT.USDC,
        tokenOut: MINT.JUP,
        amount: (1_000n * JUP + 3n).toString(),
        quoteType: "exactOut",
        protocol: "v1",
        feeBps: 10,
        taker: taker.publicKey.toBase58(),
      }),
    });
    const paid = ((1_000n * JUP + 3n) * 80n * 10_045n + 100n * 10_000n - 1n) / (100n * 10_000n);
    expect(((await buy.json()) as { amountIn: string }).amountIn).toBe(paid.toString());

    // Its fill of an indicative quote (asked with no taker, so not widened): botActivityDetected,
    // never signed, never sent, nothing moved.
    const { response, stored } = await askQuote(s.h, s.op.fetch, {
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000n * JUP,
    });
    expect(response.amountOut).toBe(out(SPREAD_BPS, 1_000n * JUP).toString());
    const tx = await operatorFill(s.h, stored, taker.publicKey);
    tx.sign([taker]);
    const before = { signed: s.signer.count, sent: s.chain.sends };
    const swap = await postSwap(s.op.fetch, {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.status).toBe(200);
    expect(swap.body.state).toEqual({ rejectedWithReason: "botActivityDetected" });
    expect({ signed: s.signer.count, sent: s.chain.sends }).toEqual(before);

    // The same indicative quote is still open to a taker in good standing (nothing was claimed).
    const cleanTx = await operatorFill(s.h, stored, clean.publicKey);
    cleanTx.sign([clean]);
    const cleanSwap = await postSwap(s.op.fetch, {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: cleanTx,
    });
    expect(cleanSwap.body.state).toBe("accepted");

    const metrics = await s.h.metrics.registry.metrics();
    expect(metrics).toMatch(/rfq_toxic_flags_total\{source="markouts"\} 1\n/);
    expect(metrics).toMatch(/rfq_toxic_quotes_total\{action="widened",reason="TAKER_FLAGGED"\} 2\n/);
    expect(metrics).toMatch(/rfq_toxic_swaps_rejected_total\{standing="flagged"\} 1\n/);
    expect(metrics).toMatch(/rfq_swaps_total\{state="rejectedWithReason",reason="botActivityDetected"\} 1\n/);
    expect(metrics).not.toContain(taker.publicKey.toBase58());
  });
});

describe("toxic flow, action refuse", () => {
  let s: Stack | undefined;
  afterAll(() => closeStack(s));

  it("refuses a flagged taker's quote 404 TAKER_FLAGGED, its indicative fill botActivityDetected; the admin API's removal and expiry give it back its quotes", {
    timeout: 120_000,
  }, async () => {
    s = await stack("refuse", { minFills: 1, action: "refuse" });
    const taker = Keypair.generate();
    fundTaker(s.h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 50_000n * JUP } });
    await toxicFill(s, taker);
    await priceIs(s, "0.80");

    const refused = await quoteStatus(s.op.fetch, taker);
    expect(refused.status).toBe(404);
    expect(String(refused.body.message)).toMatch(
      new RegExp(`^no quote: TAKER_FLAGGED: taker ${taker.publicKey.toBase58()} is flagged`),
    );

    const { response, stored } = await askQuote(s.h, s.op.fetch, {
      tokenIn: MINT.JUP,
      tokenOut: MINT.USDC,
      amount: 1_000n * JUP,
    });
    const tx = await operatorFill(s.h, stored, taker.publicKey);
    tx.sign([taker]);
    const before = { signed: s.signer.count, sent: s.chain.sends };
    const swap = await postSwap(s.op.fetch, {
      requestId: response.requestId,
      quoteId: response.quoteId,
      transaction: tx,
    });
    expect(swap.body.state).toEqual({ rejectedWithReason: "botActivityDetected" });
    expect({ signed: s.signer.count, sent: s.chain.sends }).toEqual(before);

    // The admin API removes the flag: quoted again at once.
    const who = taker.publicKey.toBase58();
    const auth = { [ADMIN_KEY_HEADER]: ADMIN_KEY, "content-type": "application/json" };
    const del = await s.admin.fetch(`/admin/takers/flags/${who}`, { method: "DELETE", headers: auth });
    expect(del.status).toBe(200);
    expect((await quoteStatus(s.op.fetch, taker)).status).toBe(200);

    // A flag added through the admin API with a 1.5 s TTL refuses until it lapses.
    const put = await s.admin.fetch(`/admin/takers/flags/${who}`, {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ ttlMs: 1_500, reason: "watching it" }),
    });
    expect(put.status).toBe(200);
    const flaggedAt = Date.now();
    expect((await quoteStatus(s.op.fetch, taker)).status).toBe(404);
    await new Promise((r) => setTimeout(r, Math.max(0, flaggedAt + 1_700 - Date.now())));
    expect((await quoteStatus(s.op.fetch, taker)).status).toBe(200);

    // The deny list refuses with its own reason.
    const deny = await s.admin.fetch(`/admin/takers/deny/${who}`, {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ reason: "known arbitrage bot" }),
    });
    expect(deny.status).toBe(200);
    const denied = await quoteStatus(s.op.fetch, taker);
    expect(denied.status).toBe(404);
    expect(String(denied.body.message)).toContain("TAKER_DENIED");

    const metrics = await s.h.metrics.registry.metrics();
    expect(metrics).toMatch(/rfq_toxic_quotes_total\{action="refused",reason="TAKER_FLAGGED"\} 2\n/);
    expect(metrics).toMatch(/rfq_toxic_quotes_total\{action="refused",reason="TAKER_DENIED"\} 1\n/);
    expect(metrics).toMatch(/rfq_no_quote_total\{reason="TAKER_FLAGGED"\} 2\n/);
    expect(metrics).toMatch(/rfq_toxic_flags_total\{source="admin"\} 1\n/);
  });
});

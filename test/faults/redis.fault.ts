/**
 * Fault: Redis killed (SIGKILL) for 5 s under 500 quotes/s, then started again, with its data
 * (append-only file, fsync always) and without it. A /swap is posted during the outage.
 *
 * Pass criteria (correctness, with margins for a shared 2-core machine):
 *  - no 5xx and every request answered;
 *  - the outage adds no tail of its own: the outage window's p99 (from x-request-start) stays within
 *    twice the baseline's (or the 250 ms budget's) plus 250 ms, where the failure this guards against
 *    held quotes behind a dead connection for 1.5 s; answers later than 250 ms are counted and
 *    printed for both windows (the target is 0; a shared 2-core machine adds its own lateness);
 *  - the webhook's Redis client connected again within 3 s of Redis answering, and quoting back
 *    within 3 s (the target, 1 s, is printed as measured; judged only when the machine kept up with
 *    the load before the kill, since a saturated machine declines nearly everything by deadline);
 *  - the /swap during the outage answered within 25 s, rejected, and nothing signed (no transaction
 *    on the chain for it; the taker's balance unchanged).
 */
import { PublicKey } from "@solana/web3.js";
import { afterEach, describe, expect, it } from "vitest";
import { tokenBalance } from "../../src/chain/local/seed.ts";
import { MINT } from "../support/config.ts";
import { BUDGET_MS, between, figures, QUOTE_RATE, quoteLoad, report } from "./load.ts";
import { type FaultStack, faultStack, metric, postSwap, signedFill } from "./stack.ts";

const RATE = QUOTE_RATE;
const KILL_AT_MS = 3_000;
const OUTAGE_MS = 5_000;
const RUN_MS = 12_000;

let stack: FaultStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function scenario(persistence: boolean) {
  const s = await faultStack({ persistence });
  stack = s;
  // Warm-up (connections, JIT), not measured.
  await quoteLoad(s.url, { rate: RATE, durationMs: 1_000 });
  const fill = await signedFill(s);
  const jup = new PublicKey(MINT.JUP);
  const takerJupBefore = tokenBalance(s.chain, fill.taker.publicKey, jup);
  const storeBefore = await metric(s, "rfq_no_quote_total", { reason: "QUOTE_STORE_UNAVAILABLE" });
  const controlsBefore = await metric(s, "rfq_no_quote_total", { reason: "CONTROLS_UNAVAILABLE" });
  const pausedBefore = await metric(s, "rfq_no_quote_total", { reason: "PAUSED" });

  const t0 = Date.now();
  const load = quoteLoad(s.url, { rate: RATE, durationMs: RUN_MS });
  await new Promise((r) => setTimeout(r, KILL_AT_MS));
  const killedAt = Date.now();
  await s.redis.kill();
  await new Promise((r) => setTimeout(r, 1_000));
  const swap = await postSwap(s, fill.body);
  const readyDuring = await fetch(`${s.url}/ready`);
  const readyBody = (await readyDuring.json()) as { checks?: Record<string, boolean> };
  await new Promise((r) => setTimeout(r, Math.max(0, killedAt + OUTAGE_MS - Date.now())));
  await s.redis.start();
  const upAt = Date.now();
  // The webhook's own view of the recovery: its main Redis client connected again.
  let reconnectedMs = Number.NaN;
  while (Date.now() - upAt < 10_000) {
    if ((await metric(s, "rfq_redis_up", { client: "main" })) === 1) {
      reconnectedMs = Date.now() - upAt;
      break;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  const answers = await load;

  const all = figures(answers);
  const baseline = figures(between(answers, t0, killedAt));
  const outage = figures(between(answers, killedAt, upAt));
  const after = between(answers, upAt, Number.POSITIVE_INFINITY);
  const firstQuote = after.find((a) => a.status === 200);
  const recoveredMs = firstQuote ? firstQuote.startMs - upAt : Number.NaN;
  // Sustained: every request sent after the first 200 that was answered 200 (or a non-store reason).
  const afterRecovery = firstQuote
    ? figures(between(after, firstQuote.startMs, Number.POSITIVE_INFINITY))
    : undefined;
  const retry = await postSwap(s, fill.body);

  report(
    `Redis killed ${OUTAGE_MS / 1000} s under ${RATE} quotes/s, persistence ${persistence ? "on" : "off"}`,
    {
      "answers by status": all.byStatus,
      "late (>250 ms) overall": all.late,
      "late in the baseline before the kill": `${baseline.late} of ${baseline.sent}`,
      "late during the outage": `${outage.late} of ${outage.sent}`,
      "slowest answer / p99 (ms)": `${all.maxMs} / ${all.p99Ms}`,
      "404 reasons during the outage": outage.noQuote,
      "rfq_no_quote_total QUOTE_STORE_UNAVAILABLE":
        (await metric(s, "rfq_no_quote_total", { reason: "QUOTE_STORE_UNAVAILABLE" })) - storeBefore,
      "rfq_no_quote_total CONTROLS_UNAVAILABLE":
        (await metric(s, "rfq_no_quote_total", { reason: "CONTROLS_UNAVAILABLE" })) - controlsBefore,
      "rfq_no_quote_total PAUSED":
        (await metric(s, "rfq_no_quote_total", { reason: "PAUSED" })) - pausedBefore,
      "/ready during the outage": `${readyDuring.status} ${JSON.stringify(readyBody.checks)}`,
      "client reconnected after Redis returned (ms)": reconnectedMs,
      "first 200 after Redis returned (ms)": recoveredMs,
      "after recovery, by status": afterRecovery?.byStatus,
      "/swap during the outage": `${swap.body.state === "accepted" ? "accepted" : JSON.stringify(swap.body)} in ${swap.ms} ms`,
      "/swap retried after recovery": JSON.stringify(retry.body).slice(0, 140),
      "load generator's own max lag (ms)": all.maxSendLagMs,
    },
  );

  expect(Object.keys(all.byStatus).filter((k) => k.startsWith("5") || k.startsWith("error"))).toEqual([]);
  expect(all.sent).toBe(Math.round((RATE * RUN_MS) / 1000));
  // The outage adds no tail of its own: answers during it are no later than the machine's own
  // baseline allows (a saturated shared machine is slow everywhere; the old failure was answers
  // held behind a dead connection for 1.5 s while the baseline was fine).
  expect(outage.p99Ms).toBeLessThanOrEqual(Math.max(baseline.p99Ms, BUDGET_MS) * 2 + BUDGET_MS);
  expect(outage.byStatus["404"]).toBeGreaterThan(0);
  expect(reconnectedMs).toBeLessThan(3_000);
  // Quoting back within 3 s, judged when the machine kept up with the load before the kill (a
  // saturated machine answers nearly everything 404 "deadline" with or without Redis).
  const saturated = baseline.late > baseline.sent / 2;
  if (saturated)
    console.log(
      `  (machine saturated: ${baseline.late} of ${baseline.sent} baseline answers late; quote recovery not judged)`,
    );
  else expect(recoveredMs).toBeLessThan(3_000);
  expect(readyDuring.status).toBe(503);
  expect(readyBody.checks?.quoteStore).toBe(false);
  expect((await metric(s, "rfq_no_quote_total", { reason: "PAUSED" })) - pausedBefore).toBe(0);
  expect(swap.status).toBe(200);
  expect(swap.ms).toBeLessThan(25_000);
  expect(swap.body.state).toBe("rejected");
  expect(String(swap.body.rejectionReason)).toMatch(/quote store unavailable/);
  expect(swap.body.txSignature).toBeUndefined();
  // Nothing was signed for it during the outage: the taker's tokens did not move then. (With its data
  // back, the retry may fill the still-valid quote: that is the claim working, after the outage.)
  if (retry.body.state !== "accepted") {
    expect(tokenBalance(s.chain, fill.taker.publicKey, jup)).toBe(takerJupBefore);
  }
}

describe("fault: Redis killed under quote load", () => {
  it("without its data (persistence off)", { timeout: 180_000 }, () => scenario(false));
  it("with its data (append-only file)", { timeout: 180_000 }, () => scenario(true));
});

/**
 * With the default level settings (rfqV2.quoteExpirySeconds 10, refreshSeconds 5), how long the
 * operator keeps a level set the maker has withdrawn, read through the real gRPC stream at the
 * operator's stand-in: after a pause, a pair switch, a stale price and an empty inventory the stream
 * sends nothing more for the pair (there is no withdraw message and an empty book is refused), so the
 * last set the operator holds lives until its timestamp + quote_expiry_time. Each test reads that
 * from the set the stand-in holds and pins it at most 10 s after the withdrawal. A dependency of the
 * fill failing (the fill path's health, the object /quote asks) withdraws every pair the same way,
 * and the levels come back within one refresh of its recovery.
 */
import { Keypair } from "@solana/web3.js";
import { describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../config/schema.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import { RfqV2StandIn } from "../../sandbox/rfq-v2/server.ts";
import { FillPathHealth } from "../../src/health/fill-path.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { makeWorld } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { startV2Channel, until } from "../support/rfq-v2.ts";

const MAKER_ID = "maker-window";
const TOKEN = "jwt-for-the-window-0123456789";
/** The operator's minimum expiry, and the bound the defaults keep: seconds. */
const OPERATOR_MINIMUM_S = 10;

const closers = cleanupsAfterEach();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A feed per pair whose price time the test sets (stale when older than 2 s). */
function feed(mids: Record<string, { num: bigint; den: bigint }>) {
  const updatedAt: Record<string, number> = {};
  const source: PriceSource = {
    name: "static",
    maxAgeMs: 2_000,
    price: (pair) => {
      const mid = mids[pair];
      return mid ? { mid, updatedAtMs: updatedAt[pair] ?? Date.now() } : undefined;
    },
    start: async () => {},
    close: async () => {},
  };
  return { source, updatedAt };
}

/** The maker's service streaming SOL/USDC and JUP/USDC with the default rfqV2 settings. */
async function stream(sources?: ReadonlyMap<string, PriceSource>, fillPath?: FillPathHealth) {
  // Only the pairs: the expiry and the refresh are the defaults under test.
  const w = makeWorld((f) => ({ ...f, rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC", "JUP/USDC"] } }));
  const standIn = new RfqV2StandIn({ makers: [{ makerId: MAKER_ID, token: TOKEN }], heartbeatMs: 60_000 });
  const url = await standIn.listen();
  closers.push(() => standIn.close());
  const { inventory, controls, service, registry } = await startV2Channel({
    w,
    url,
    makerId: MAKER_ID,
    token: TOKEN,
    closers,
    ...(sources ? { sources } : {}),
    ...(fillPath ? { deps: { fillPath } } : {}),
  });
  const held = (base: string) => standIn.liveSet(MAKER_ID, base, MINT.USDC);
  await until(() => held(MINT.SOL) !== undefined && held(MINT.JUP) !== undefined, "both pairs' levels");
  /** The level sets the stand-in accepted (NEW or UPDATED) since `from` (an index into its updates). */
  const accepted = (from: number) =>
    standIn.updates
      .slice(from)
      .filter(
        (u) => u.update.update_type === "UPDATE_TYPE_NEW" || u.update.update_type === "UPDATE_TYPE_UPDATED",
      );
  return { w, standIn, inventory, controls, service, registry, held, accepted };
}

/**
 * What the operator holds for SOL/USDC once the maker stopped taking it at `withdrawnAtMs`: the set's
 * expiry as sent, and how long after the withdrawal it stays valid there (timestamp + quote_expiry_time,
 * the SDKs' own expiry test, which the stand-in applies).
 */
function heldAfter(s: Awaited<ReturnType<typeof stream>>, withdrawnAtMs: number) {
  const live = s.held(MINT.SOL);
  expect(live).toBeDefined();
  const expiryS = Number(live!.quote.quote_expiry_time);
  const validUntilMs = Number(BigInt(live!.quote.timestamp) / 1000n) + expiryS * 1000;
  expect(validUntilMs).toBe(live!.validUntilMs);
  return { expiryS, windowMs: validUntilMs - withdrawnAtMs, sequence: live!.quote.sequence_number };
}

describe("with the default settings, the operator holds a withdrawn level set at most 10 s (the operator's minimum expiry)", () => {
  it("after a pause: the stream sends nothing more, and the set the operator holds expires at most 10 s after the pause", async () => {
    const s = await stream();
    const mark = s.standIn.updates.length;
    const pausedAt = Date.now();
    await s.controls.pause("test");
    // More than a tick (1 s): neither the tick nor the switch sends anything for either pair.
    await sleep(1_500);
    expect(s.accepted(mark)).toEqual([]);
    const h = heldAfter(s, pausedAt);
    expect(h.expiryS).toBe(OPERATOR_MINIMUM_S);
    expect(h.windowMs).toBeLessThanOrEqual(OPERATOR_MINIMUM_S * 1000);
    expect(s.service.streamed.valid("SOL/USDC")).toEqual([]);
  });

  it("after a pair switch (SOL/USDC disabled): that pair is sent nothing more and its held set expires at most 10 s after the switch; the other pair keeps streaming", async () => {
    const s = await stream();
    const mark = s.standIn.updates.length;
    const jupBefore = s.held(MINT.JUP)!.quote.sequence_number;
    const switchedAt = Date.now();
    await s.controls.setPair("SOL/USDC", false);
    const h = heldAfter(s, switchedAt);
    expect(h.expiryS).toBe(OPERATOR_MINIMUM_S);
    expect(h.windowMs).toBeLessThanOrEqual(OPERATOR_MINIMUM_S * 1000);
    // JUP/USDC is re-sent within its refresh (5 s); SOL/USDC's held set is still the one before the switch.
    await until(() => s.held(MINT.JUP)!.quote.sequence_number !== jupBefore, "JUP/USDC refreshed", 7_000);
    expect(s.held(MINT.SOL)!.quote.sequence_number).toBe(h.sequence);
    const sent = s.accepted(mark).map((u) => u.sequence);
    expect(sent).not.toContain(h.sequence);
    expect(s.service.streamed.valid("SOL/USDC")).toEqual([]);
    expect(s.service.streamed.valid("JUP/USDC")).not.toEqual([]);
  });

  it("after SOL/USDC's price goes stale: that pair stops streaming (withdrawn on the next tick) and its held set expires at most 10 s after the price went stale; JUP/USDC keeps streaming", async () => {
    const f = feed({ "SOL/USDC": { num: 18_025n, den: 100n }, "JUP/USDC": { num: 8_125n, den: 10_000n } });
    const s = await stream(new Map([["static", f.source]]));
    const mark = s.standIn.updates.length;
    // The price last seen 1.5 s ago and not again, with a 2 s age limit: stale in 0.5 s.
    const staleAt = Date.now() + 500;
    f.updatedAt["SOL/USDC"] = staleAt - 2_000;
    await until(() => s.service.streamed.valid("SOL/USDC").length === 0, "the stale pair withdrawn", 3_000);
    const h = heldAfter(s, staleAt);
    expect(h.expiryS).toBe(OPERATOR_MINIMUM_S);
    expect(h.windowMs).toBeLessThanOrEqual(OPERATOR_MINIMUM_S * 1000);
    const jupBefore = s.held(MINT.JUP)!.quote.sequence_number;
    await until(() => s.held(MINT.JUP)!.quote.sequence_number !== jupBefore, "JUP/USDC refreshed", 7_000);
    // Every set accepted since the price went stale is JUP/USDC's: SOL/USDC's held set is unchanged.
    expect(s.held(MINT.SOL)!.quote.sequence_number).toBe(h.sequence);
    expect(s.accepted(mark).map((u) => u.sequence)).not.toContain(h.sequence);
    const withdrawn = (await s.registry.getSingleMetric("rfq_v2_withdrawals_total")!.get()).values;
    expect(withdrawn).toContainEqual(
      expect.objectContaining({ labels: { pair: "SOL/USDC", reason: "PRICE_STALE" }, value: 1 }),
    );
  });

  it("after the inventory runs empty for SOL/USDC (its SOL, then its USDC reserved by other fills): nothing more is sent for it and its held set expires at most 10 s after", async () => {
    const s = await stream();
    /** Reserves every atom of `mint` the inventory still grants (as fills on the other channel would). */
    const drain = async (mint: string) => {
      let lo = 0n;
      let hi = 10n ** 20n;
      while (hi - lo > 1n) {
        const mid = (lo + hi) / 2n;
        if (s.inventory.check({ outMint: mint, outAmount: mid }).ok) lo = mid;
        else hi = mid;
      }
      const r = await s.inventory.reserve({
        quoteId: `drain-${mint}`,
        mint,
        amount: lo,
        expiresAtMs: Date.now() + 60_000,
      });
      expect(r.ok).toBe(true);
    };
    // No SOL: the asks go, a set of bids alone replaces the held one at once.
    await drain(MINT.SOL);
    await until(() => s.held(MINT.SOL)?.quote.ask_levels.length === 0, "a set without asks");
    const mark = s.standIn.updates.length;
    // No USDC either: nothing left to stream for the pair.
    const emptiedAt = Date.now();
    await drain(MINT.USDC);
    await until(() => s.service.streamed.valid("SOL/USDC").length === 0, "SOL/USDC withdrawn");
    await sleep(1_200);
    const h = heldAfter(s, emptiedAt);
    expect(h.expiryS).toBe(OPERATOR_MINIMUM_S);
    expect(h.windowMs).toBeLessThanOrEqual(OPERATOR_MINIMUM_S * 1000);
    expect(s.accepted(mark).map((u) => u.sequence)).not.toContain(h.sequence);
    // A swap on the held set (its bids: the taker sells SOL) is let pass: the maker forgot the set.
    const r = await s.standIn.offerSwap({
      makerId: MAKER_ID,
      taker: Keypair.generate(),
      baseMint: MINT.SOL,
      quoteMint: MINT.USDC,
      baseTokenProgram: TOKEN_PROGRAM,
      quoteTokenProgram: TOKEN_PROGRAM,
      baseDecimals: 9,
      takerSide: "ask",
      inAmount: 1_000_000_000n,
      timeoutMs: 1_000,
    });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    const withdrawn = (await s.registry.getSingleMetric("rfq_v2_withdrawals_total")!.get()).values;
    expect(withdrawn).toContainEqual(
      expect.objectContaining({ labels: expect.objectContaining({ pair: "SOL/USDC" }) }),
    );
  });

  it("while a dependency of the fill fails (the fill path's health): every pair is sent nothing more, each held set expires at most 10 s after it was seen failing; the levels are sent again within one refresh of its recovery", async () => {
    let down = false;
    let recoveredAt = 0;
    const health = new FillPathHealth({ log: createLogger("silent") });
    // The signer service as the fill path sees it: its probe answers or not (the real thresholds and timing).
    const signer = health.track({
      name: "signer",
      what: "the signer service (test)",
      timeoutMs: 1_000,
      probe: async () => {
        if (down) throw new Error("connect ECONNREFUSED signer.sock");
      },
    });
    await health.start();
    closers.push(() => health.close());
    const s = await stream(undefined, health);
    down = true;
    await until(() => signer.failing, "the signer seen failing", 3_000);
    const failingAt = Date.now();
    await until(
      () =>
        s.service.streamed.valid("SOL/USDC").length === 0 &&
        s.service.streamed.valid("JUP/USDC").length === 0,
      "both pairs withdrawn",
      2_000,
    );
    const mark = s.standIn.updates.length;
    // More than a tick (1 s): nothing is sent for either pair while it fails.
    await sleep(1_500);
    expect(s.accepted(mark)).toEqual([]);
    const h = heldAfter(s, failingAt);
    expect(h.windowMs).toBeLessThanOrEqual(OPERATOR_MINIMUM_S * 1000);
    const jupHeld = s.held(MINT.JUP)!.quote.sequence_number;
    const withdrawn = (await s.registry.getSingleMetric("rfq_v2_withdrawals_total")!.get()).values;
    for (const pair of ["SOL/USDC", "JUP/USDC"]) {
      expect(withdrawn).toContainEqual(
        expect.objectContaining({ labels: { pair, reason: "SIGNER_UNAVAILABLE" }, value: 1 }),
      );
    }

    down = false;
    recoveredAt = Date.now();
    const refreshMs = s.w.config.file.rfqV2.refreshSeconds * 1000;
    await until(
      () =>
        s.held(MINT.SOL)!.quote.sequence_number !== h.sequence &&
        s.held(MINT.JUP)!.quote.sequence_number !== jupHeld,
      "both pairs streamed again",
      refreshMs,
    );
    expect(Date.now() - recoveredAt).toBeLessThanOrEqual(refreshMs);
    expect(s.service.streamed.valid("SOL/USDC")).not.toEqual([]);
    expect(s.service.streamed.valid("JUP/USDC")).not.toEqual([]);
  });
});

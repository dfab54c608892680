import { afterAll, describe, expect, it, vi } from "vitest";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { feesOwedByMint } from "../../src/ledger/report.ts";
import { createHarness, type Harness, listen, postSwap } from "../support/harness.ts";
import { fileRedis, testRedis } from "../support/redis.ts";
import { signedJupFill } from "../swap/setup.ts";
import { BACKENDS, freshLedger } from "./support.ts";

const shared = fileRedis();

async function honestSwap(
  h: Harness,
  http: Awaited<ReturnType<typeof listen>>["fetch"],
  jup = 5_000_000_000n,
) {
  const { taker, response, body } = await signedJupFill(h, http, jup);
  return { taker, response, body, swap: await postSwap(http, body) };
}

describe.each(BACKENDS)("the swap path's ledger on %s", (backend) => {
  let ledger: Ledger;
  const open: Harness[] = [];
  afterAll(async () => {
    for (const h of open) await h.close();
    await ledger?.db.close();
  });

  it("records each decision once, the landed fill with the chain's slot and the journal's fee", {
    timeout: 120_000,
  }, async () => {
    ledger = await freshLedger(backend);
    const h = await createHarness({
      redis: { redis: shared.redis, prefix: `${shared.prefix}${backend}:a:` },
      ledger,
      ledgerWriter: { intervalMs: 50 },
    });
    open.push(h);
    const server = await listen(h.app);
    try {
      const ok = await honestSwap(h, server.fetch);
      expect(ok.swap.body.state).toBe("accepted");
      expect(await h.confirmations.settled(ok.response.quoteId)).toBe("landed");
      const retry = await postSwap(server.fetch, ok.body);
      expect(retry.body).toEqual(ok.swap.body);
      const poor = await honestSwap(h, server.fetch, 1n);
      expect(poor.swap.body.state).toEqual({ rejectedWithReason: "insufficientBalance" });
      const unknown = await postSwap(server.fetch, { ...ok.body, quoteId: "never-quoted" });
      expect(unknown.body.state).toBe("rejected");

      // The answer does not wait for the outbox append (the ledger never slows /swap): drain until
      // the three decisions are there.
      const decisions = await vi.waitFor(
        async () => {
          await h.service.ledgerWriter?.drain();
          const rows = await ledger.decisions();
          expect(rows).toHaveLength(3);
          return rows;
        },
        { timeout: 15_000, interval: 100 },
      );
      const byQuote = (q: string) => decisions.filter((d) => d.quote_id === q);
      expect(byQuote(ok.response.quoteId)).toMatchObject([
        {
          decision: "accepted",
          tx_signature: ok.swap.body.txSignature,
          pair: "JUP/USDC",
          side: "buy",
          taker: ok.taker.publicKey.toBase58(),
        },
      ]);
      expect(byQuote(poor.response.quoteId)).toMatchObject([
        { decision: "rejectedWithReason", code: "INSUFFICIENT_BALANCE" },
      ]);
      expect(byQuote("never-quoted")).toMatchObject([{ decision: "rejected", code: "QUOTE_NOT_FOUND" }]);
      expect(byQuote("never-quoted")[0]?.reason).toContain("unknown quote");
      expect(decisions).toHaveLength(3);

      const fees = await h.journal.feesOwed();
      const fills = await ledger.fills();
      expect(fills).toHaveLength(1);
      const status = await h.chain.getSignatureStatus(ok.swap.body.txSignature as string);
      expect(status.state).toBe("confirmed");
      expect(fills[0]).toMatchObject({
        tx_signature: ok.swap.body.txSignature,
        outcome: "landed",
        slot: status.state === "confirmed" ? status.slot.toString() : "",
        fee_mint: fees[0]?.mint,
        fee_owed: fees[0]?.amount,
      });
      expect(BigInt(fees[0]?.amount ?? "0")).toBeGreaterThan(0n);
      // What `npm run report` prints as fees owed per mint: the sum over the fills the chain landed.
      const byMint = new Map<string, bigint>();
      for (const f of fees) byMint.set(f.mint, (byMint.get(f.mint) ?? 0n) + BigInt(f.amount));
      const owed = await feesOwedByMint(ledger.db, { fromMs: 0, toMs: Date.now() + 60_000 });
      expect(owed.map((o) => [o.mint, BigInt(o.feeOwed)])).toEqual([...byMint.entries()]);
    } finally {
      await server.close();
    }
  });

  it("after a restart, writes what a dead writer held unacknowledged, still one row per decision", {
    timeout: 120_000,
  }, async () => {
    const prefix = `${shared.prefix}${backend}:b:`;
    const first = await createHarness({
      redis: { redis: shared.redis, prefix },
      ledger,
      // Its writer never runs a pass during the test: it stands for a process about to die.
      ledgerWriter: { intervalMs: 3_600_000 },
    });
    open.push(first);
    const server = await listen(first.app);
    const quoteIds: string[] = [];
    try {
      await first.service.ledgerWriter?.stop(0);
      for (let i = 0; i < 3; i++) {
        const s = await honestSwap(first, server.fetch);
        expect(s.swap.body.state).toBe("accepted");
        await first.confirmations.settled(s.response.quoteId);
        quoteIds.push(s.response.quoteId);
      }
    } finally {
      await server.close();
    }
    // The answers did not wait for their outbox appends: every record is in before the writer dies
    // (per fill: its decision, its settlement carrying its acceptance again, its markout at fill time).
    await vi.waitFor(async () => expect(await first.journal.ledgerBacklog()).toBe(12), {
      timeout: 15_000,
      interval: 50,
    });
    // The dying writer took everything, wrote part of it, and was killed before acknowledging.
    const taken = await first.journal.takeLedger("killed-writer", 100, 60_000);
    // Per fill: the decision journaled by the swap path and again with the landed settlement, the
    // settlement, and the markout at fill time.
    expect(taken.filter((e) => e.record.kind === "decision")).toHaveLength(6);
    expect(taken.filter((e) => e.record.kind === "settlement")).toHaveLength(3);
    expect(taken.filter((e) => e.record.kind === "markout")).toHaveLength(3);
    await ledger.write(taken.slice(0, 4).map((e) => e.record));

    const second = await createHarness({
      redis: { redis: shared.redis, prefix },
      chain: first.chain,
      maker: first.maker,
      ledger,
      ledgerWriter: { intervalMs: 50, staleMs: 0 },
    });
    open.push(second);
    await second.service.ledgerWriter?.drain();
    expect(await second.journal.ledgerBacklog()).toBe(0);
    const rows = (await ledger.decisions()).filter((d) => quoteIds.includes(d.quote_id));
    expect(rows.map((r) => r.decision)).toEqual(["accepted", "accepted", "accepted"]);
    const fills = (await ledger.fills()).filter((f) => quoteIds.includes(f.quote_id));
    expect(fills.map((f) => f.outcome)).toEqual(["landed", "landed", "landed"]);
  });
});

// A second connection, so a test above cannot hide a key it leaves behind.
afterAll(async () => {
  const { redis } = testRedis();
  expect(await redis.xlen(`${shared.prefix}postgres:a:swap:{fills}:ledger`)).toBe(0);
  redis.disconnect();
});

/**
 * Confirmation tracking and the fill journal, with a real Redis journal and real fills on the local
 * chain: a process that dies after sending leaves its fill in the journal, and the next process
 * resumes and settles it (reservation committed, fee recorded); several trackers sharing the journal
 * settle a fill exactly once; a fill that never lands is settled as expired and its units released.
 */
import { randomUUID } from "node:crypto";
import { Keypair } from "@solana/web3.js";
import bs58 from "bs58";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillAmountsFromQuote } from "../../sandbox/fill/builder.ts";
import { fundTaker } from "../../src/chain/local/seed.ts";
import type { PendingFill } from "../../src/journal/interface.ts";
import { RedisFillJournal } from "../../src/journal/redis.ts";
import type { DecisionRecord } from "../../src/ledger/records.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import type { RedisClient } from "../../src/redis/client.ts";
import { ConfirmationTracker } from "../../src/swap/confirmations.ts";
import { decision } from "../ledger/support.ts";
import { MINT } from "../support/config.ts";
import { askQuote, createHarness, type Harness, inProcess, operatorFill } from "../support/harness.ts";
import { deleteKeys, topologies } from "../support/redis.ts";

// Set per topology by the describe block below (blocks run one after another).
let redis: RedisClient;
let prefix: string;
let h: Harness;
const log = createLogger("silent");

/** A fill sent to the chain by "a process that then died": reserved, journaled, sent, never tracked. */
async function sentButUntracked(journal: RedisFillJournal, opts: { send: boolean }): Promise<PendingFill> {
  const taker = Keypair.generate();
  fundTaker(h.chain, taker.publicKey, { sol: 100_000_000n, tokens: { [MINT.JUP]: 5_000_000_000n } });
  const { stored } = await askQuote(h, inProcess(h.app), {
    tokenIn: MINT.JUP,
    tokenOut: MINT.USDC,
    amount: 1_000_000_000n,
    taker: taker.publicKey,
  });
  const tx = await operatorFill(h, stored, taker.publicKey);
  tx.sign([taker, h.maker]);
  await h.inventory.reserve({
    quoteId: stored.quoteId,
    mint: MINT.USDC,
    amount: BigInt(stored.response.amountOut),
    expiresAtMs: Date.now() + 600_000,
  });
  const { outputAmount } = fillAmountsFromQuote(stored);
  const fill: PendingFill = {
    quoteId: stored.quoteId,
    requestId: stored.requestId,
    messageHash: "test",
    signature: bs58.encode(tx.signatures[0] as Uint8Array),
    sentAtMs: Date.now(),
    trackUntilMs: opts.send ? Date.now() + 60_000 : Date.now() - 1,
    fee: {
      mint: MINT.USDC,
      amount: (BigInt(stored.response.amountOut) - outputAmount).toString(),
      feeBps: 10,
    },
  };
  await journal.addPending(fill);
  if (opts.send) expect((await h.chain.send(tx)).ok).toBe(true);
  return fill;
}

const tracker = (journal: RedisFillJournal, metrics = new Metrics(), ledger = false) =>
  new ConfirmationTracker({
    chain: h.chain,
    inventory: h.inventory,
    journal,
    metrics,
    log,
    pollMs: 10_000,
    ledger,
  });

/** The acceptance a process journals with its fill before sending it (PendingFill.decision). */
const acceptance = (fill: PendingFill): DecisionRecord =>
  decision({
    quoteId: fill.quoteId,
    requestId: fill.requestId,
    messageHash: fill.messageHash,
    txSignature: fill.signature,
  });

const fillsCounted = async (m: Metrics, outcome: string) =>
  (await m.fills.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

for (const topology of topologies())
  describe(`ConfirmationTracker with a Redis journal (${topology.name})`, () => {
    beforeAll(async () => {
      redis = topology.connect();
      prefix = `test:${randomUUID()}:`;
      h = await createHarness({ redis: { redis, prefix } });
    });
    afterAll(async () => {
      await h.close();
      await deleteKeys(redis, `${prefix}*`);
      redis.disconnect();
    });

    it("resumes a fill journaled before a restart and settles it: committed, fee recorded, counted", async () => {
      const journal = new RedisFillJournal(redis, `${prefix}resume:`);
      const fill = await sentButUntracked(journal, { send: true });
      const metrics = new Metrics();
      const t = tracker(journal, metrics);
      await t.start();
      const settled = t.settled(fill.quoteId);
      await t.pollOnce();
      expect(await settled).toBe("landed");
      await t.stop();
      expect(await journal.listPending()).toEqual([]);
      expect(await journal.feesOwed()).toEqual([
        expect.objectContaining({
          quoteId: fill.quoteId,
          txSignature: fill.signature,
          amount: fill.fee.amount,
        }),
      ]);
      expect(await fillsCounted(metrics, "landed")).toBe(1);
      const open = (await h.inventory.reservations()).find((r) => r.quoteId === fill.quoteId) as
        | { state?: string }
        | undefined;
      expect(open?.state ?? "settled").not.toBe("open");
    });

    it("settled() waits for the whole settle: a caller that asks while the reservation is still being committed resolves only after onLanded ran", async () => {
      const journal = new RedisFillJournal(redis, `${prefix}late:`);
      const fill = await sentButUntracked(journal, { send: true });
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let committing = false;
      const slowInventory = Object.create(h.inventory) as typeof h.inventory;
      slowInventory.commit = async (quoteId: string) => {
        committing = true;
        await gate;
        return h.inventory.commit(quoteId);
      };
      const landed: string[] = [];
      const t = new ConfirmationTracker({
        chain: h.chain,
        inventory: slowInventory,
        journal,
        metrics: new Metrics(),
        log,
        pollMs: 10_000,
        onLanded: (f) => landed.push(f.quoteId),
      });
      await t.start();
      const poll = t.pollOnce();
      while (!committing) await new Promise((r) => setTimeout(r, 5));
      // Decided (a retry's answer may use it), but not yet settled: the markouts hook has not run.
      expect(t.known(fill.quoteId)?.state).toBe("landed");
      let resolved = false;
      const settled = t.settled(fill.quoteId).then((o) => {
        resolved = true;
        return o;
      });
      await new Promise((r) => setTimeout(r, 50));
      expect(resolved).toBe(false);
      release();
      expect(await settled).toBe("landed");
      expect(landed).toEqual([fill.quoteId]);
      await poll;
      await t.stop();
    });

    it("a resumed fill that lands brings the acceptance journaled with it into the ledger outbox (its process died before answering)", async () => {
      const journal = new RedisFillJournal(redis, `${prefix}decision-landed:`);
      const fill = await sentButUntracked(journal, { send: true });
      await journal.addPending({ ...fill, decision: acceptance(fill) });
      const t = tracker(journal, new Metrics(), true);
      await t.start();
      const settled = t.settled(fill.quoteId);
      await t.pollOnce();
      expect(await settled).toBe("landed");
      await t.stop();
      const outbox = (await journal.takeLedger("test", 100, 0)).map((e) => e.record);
      expect(outbox).toEqual([
        expect.objectContaining({
          kind: "decision",
          decision: "accepted",
          quoteId: fill.quoteId,
          txSignature: fill.signature,
        }),
        expect.objectContaining({ kind: "settlement", outcome: "landed", txSignature: fill.signature }),
      ]);
    });

    it("a resumed fill that never lands settles as expired without claiming an acceptance", async () => {
      const journal = new RedisFillJournal(redis, `${prefix}decision-expired:`);
      const fill = await sentButUntracked(journal, { send: false });
      await journal.addPending({ ...fill, decision: acceptance(fill) });
      const t = tracker(journal, new Metrics(), true);
      await t.start();
      await t.pollOnce();
      await t.stop();
      const outbox = (await journal.takeLedger("test", 100, 0)).map((e) => e.record);
      expect(outbox).toEqual([expect.objectContaining({ kind: "settlement", outcome: "expired" })]);
    });

    it("settles a fill once when two instances track it from the same journal", async () => {
      const journal = new RedisFillJournal(redis, `${prefix}twice:`);
      const fill = await sentButUntracked(journal, { send: true });
      const [m1, m2] = [new Metrics(), new Metrics()];
      const [t1, t2] = [tracker(journal, m1), tracker(journal, m2)];
      await Promise.all([t1.start(), t2.start()]);
      await Promise.all([t1.pollOnce(), t2.pollOnce()]);
      await Promise.all([t1.stop(), t2.stop()]);
      expect((await fillsCounted(m1, "landed")) + (await fillsCounted(m2, "landed"))).toBe(1);
      expect((await journal.feesOwed()).filter((f) => f.quoteId === fill.quoteId)).toHaveLength(1);
    });

    it("settles a fill that never reached the chain as expired and releases its reservation", async () => {
      const journal = new RedisFillJournal(redis, `${prefix}expired:`);
      const fill = await sentButUntracked(journal, { send: false });
      const metrics = new Metrics();
      const t = tracker(journal, metrics);
      await t.start();
      await t.pollOnce();
      await t.stop();
      expect(await fillsCounted(metrics, "expired")).toBe(1);
      expect(await journal.feesOwed()).toEqual([]);
      expect((await h.inventory.reservations()).map((r) => r.quoteId)).not.toContain(fill.quoteId);
    });
  });

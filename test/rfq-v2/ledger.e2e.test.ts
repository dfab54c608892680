/**
 * RFQ v2 swaps in the fill ledger, over a real gRPC socket against the sandbox's stand-in of the
 * operator, landing on the local chain, through the fill journal's outbox, the ledger writer and an
 * embedded ledger (PGlite): a co-signed swap the operator confirms is one decision and one fill row of
 * channel rfq-v2 with the levels' amounts, its markout sampled like a webhook fill's; the same
 * SWAP_AVAILABLE delivered twice is still one row; a refused swap is a decision row with its code and
 * no fill; the report shows the swap under rfq-v2 and in the total.
 */
import { Keypair, PublicKey, type VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { describe, expect, it } from "vitest";
import { creditSol, creditToken } from "../../src/chain/local/seed.ts";
import { MemoryFillJournal } from "../../src/journal/memory.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { MarkoutTracker } from "../../src/ledger/markouts.ts";
import { migrate } from "../../src/ledger/migrations.ts";
import { PgliteSqlClient } from "../../src/ledger/pglite.ts";
import { fillRateByChannel, markoutsByChannel } from "../../src/ledger/report.ts";
import { LedgerWriter } from "../../src/ledger/writer.ts";
import { createLogger } from "../../src/observability/logger.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { sweep } from "../../src/program/rfq-v2.ts";
import { decidedInLedger, V2SwapLedger } from "../../src/rfq-v2/ledger.ts";
import { makeWorld } from "../inventory/support.ts";
import { cleanupsAfterEach } from "../support/cleanups.ts";
import { MINT } from "../support/config.ts";
import { solUsdcBid, standInOver, startV2Channel, swapsWith, until } from "../support/rfq-v2.ts";

const MAKER_ID = "maker-ledger";
const TOKEN = "jwt-for-the-stand-in-0123456789";
const log = createLogger("silent");
const closers = cleanupsAfterEach();

async function stack(opts: { land?: boolean } = { land: true }) {
  const w = makeWorld((f) => ({
    ...f,
    rfqV2: { ...f.rfqV2, pairs: ["SOL/USDC"], quoteExpirySeconds: 30, refreshSeconds: 10 },
  }));
  const standIn = standInOver(w.chain, { makerId: MAKER_ID, token: TOKEN, land: opts.land === true });
  const url = await standIn.listen("127.0.0.1", 0);
  closers.push(() => standIn.close());
  w.clock.t = Date.now();
  const db = await PgliteSqlClient.open();
  closers.push(() => db.close());
  await migrate(db);
  const ledger = new Ledger(db);
  const journal = new MemoryFillJournal();
  const metrics = new Metrics();
  const writer = new LedgerWriter({ journal, ledger, metrics, log, intervalMs: 50 });
  writer.start();
  closers.push(() => writer.stop());
  const markouts = new MarkoutTracker({
    config: w.config,
    priceSources: w.sources,
    journal,
    metrics,
    log,
    horizons: [{ label: "0s", ms: 0 }],
  });
  closers.push(() => markouts.close());
  const { registry } = await startV2Channel({
    w,
    url,
    makerId: MAKER_ID,
    token: TOKEN,
    closers,
    log,
    deps: {
      ledger: new V2SwapLedger({
        journal,
        log,
        onLanded: (sig, quoteId, trade, at) => markouts.onLanded(sig, quoteId, trade, at),
      }),
    },
  });
  await until(() => standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC) !== undefined, "SOL/USDC levels", 10_000);
  const taker = Keypair.generate();
  creditSol(w.chain, taker.publicKey, 1_000_000_000n);
  creditToken(w.chain, taker.publicKey, new PublicKey(MINT.USDC), 500_000_000n);
  const offer = solUsdcBid({ makerId: MAKER_ID, taker, inAmount: 250_000_000n });
  return { w, standIn, ledger, writer, markouts, journal, registry, offer, taker };
}

describe("RFQ v2 swaps in the fill ledger", () => {
  it("records a co-signed, confirmed swap once as an rfq-v2 decision and fill with the levels' amounts, even when its SWAP_AVAILABLE is delivered twice", async () => {
    const s = await stack();
    const live = s.standIn.liveSet(MAKER_ID, MINT.SOL, MINT.USDC)!;
    const r = await s.standIn.offerSwap({ ...s.offer, deliveries: 2 });
    expect(r).toMatchObject({ ok: true });
    const signature = (r as { signature: string }).signature;
    expect(signature).toBeTruthy();
    // The redelivery was refused as a duplicate (and so never signed twice).
    await until(
      async () => (await swapsWith(s.registry, "V2_DUPLICATE_SWAP")) === 1,
      "the redelivery refused",
      10_000,
    );
    await until(async () => (await s.ledger.fills()).length === 1, "the fill row", 10_000);
    await s.markouts.idle();
    await s.writer.drain();

    const lot = BigInt(live.quote.lot_size_base);
    const walk = sweep(
      "bid",
      250_000_000n,
      live.quote.ask_levels.map((l) => ({
        perLot: (BigInt(l.price) * lot) / 10n ** 9n,
        lots: BigInt(l.volume) / lot,
      })),
      lot,
    );
    const decisions = await s.ledger.decisions();
    expect(decisions).toEqual([
      expect.objectContaining({
        channel: "rfq-v2",
        quote_id: `v2:${r.swapUuid}`,
        request_id: r.swapUuid,
        decision: "accepted",
        code: null,
        taker: s.taker.publicKey.toBase58(),
        pair: "SOL/USDC",
        side: "sell",
        filled_amount_in: walk.spent.toString(),
        filled_amount_out: walk.out.toString(),
        fee_owed: "0",
        fee_mint: MINT.SOL,
        tx_signature: signature,
        level_sequence: live.quote.sequence_number,
      }),
    ]);
    expect(await s.ledger.fills()).toEqual([
      expect.objectContaining({
        channel: "rfq-v2",
        tx_signature: signature,
        quote_id: `v2:${r.swapUuid}`,
        outcome: "landed",
        fee_owed: "0",
      }),
    ]);
    // Its markout, as a webhook fill's: the 0 s sample at the maker's fill price against the mid.
    const marks = await s.ledger.db.query<{
      tx_signature: string;
      pair: string;
      side: string;
      taker: string;
    }>("SELECT tx_signature, pair, side, taker FROM markouts");
    expect(marks).toEqual([
      { tx_signature: signature, pair: "SOL/USDC", side: "sell", taker: s.taker.publicKey.toBase58() },
    ]);
    const range = { fromMs: Date.now() - 3_600_000, toMs: Date.now() + 60_000 };
    expect(await fillRateByChannel(s.ledger.db, range)).toEqual([
      { channel: "webhook", decided: 0, accepted: 0, landed: 0, honestRejections: 0, fillRate: null },
      { channel: "rfq-v2", decided: 1, accepted: 1, landed: 1, honestRejections: 0, fillRate: 1 },
      { channel: "all", decided: 1, accepted: 1, landed: 1, honestRejections: 0, fillRate: 1 },
    ]);
    expect((await markoutsByChannel(s.ledger.db, range)).map((m) => [m.channel, m.horizon, m.fills])).toEqual(
      [
        ["rfq-v2", "0s", 1],
        ["all", "0s", 1],
      ],
    );
    const confirmed = (await s.registry.getSingleMetric("rfq_v2_confirmed_total")!.get()).values[0]!.value;
    expect(confirmed).toBe(1);
  }, 60_000);

  it("writes the fill of a swap signed before a restart from its decision in the ledger, still one decision row", async () => {
    const s = await stack({ land: false });
    const r = await s.standIn.offerSwap(s.offer);
    expect(r).toMatchObject({ ok: true });
    await s.writer.drain();
    // The restarted process: a new recorder over the same outbox and ledger, remembering nothing.
    const landed: string[] = [];
    const restarted = new V2SwapLedger({
      journal: s.journal,
      log,
      lookup: (quoteId) => decidedInLedger(s.ledger.db, quoteId),
      onLanded: (sig, _quoteId, trade) => landed.push(`${sig} ${trade.pair} ${trade.side} ${trade.taker}`),
    });
    const signature = bs58.encode((r as { tx: VersionedTransaction }).tx.signatures[0]!);
    await restarted.confirmed(r.swapUuid, signature);
    // A confirmation for a swap never signed writes nothing.
    await restarted.confirmed("00000000-0000-4000-8000-000000000000", signature);
    await s.writer.drain();
    expect((await s.ledger.decisions()).map((d) => [d.quote_id, d.decision, d.tx_signature])).toEqual([
      [`v2:${r.swapUuid}`, "accepted", signature],
    ]);
    expect(await s.ledger.fills()).toEqual([
      expect.objectContaining({ channel: "rfq-v2", quote_id: `v2:${r.swapUuid}`, tx_signature: signature }),
    ]);
    expect(landed).toEqual([`${signature} SOL/USDC sell ${s.taker.publicKey.toBase58()}`]);
  }, 60_000);

  it("records a refused swap as an rfq-v2 decision with its code and no fill", async () => {
    const s = await stack();
    const r = await s.standIn.offerSwap({
      ...s.offer,
      timeoutMs: 1_500,
      tamper: (tx) => {
        const route = tx.message.compiledInstructions.find((ix) => ix.data.length > 60)!;
        const data = Buffer.from(route.data);
        data.writeBigUInt64LE(data.readBigUInt64LE(68) - 1n, 68); // the first level one atom per lot cheaper
        route.data = data;
        return tx;
      },
    });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    await s.writer.drain();
    expect(await s.ledger.decisions()).toEqual([
      expect.objectContaining({
        channel: "rfq-v2",
        quote_id: `v2:${r.swapUuid}`,
        decision: "rejected",
        code: "V2_LEVELS_NOT_STREAMED",
        tx_signature: null,
        filled_amount_out: null,
      }),
    ]);
    expect((await s.ledger.decisions())[0]!.reason).toMatch(/level/);
    expect(await s.ledger.fills()).toEqual([]);
  }, 60_000);
});

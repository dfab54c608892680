/**
 * The ledger's reports on both backends over a known set of decisions and fills: fees owed by mint are
 * the sum of the landed fills' fees (failed and expired ones owe nothing), volume by pair counts base
 * and quote from the maker's side, the fill rate by hour leaves honest rejections out, rejections
 * group by their stored refusal code, and the range is [from, to). Then the same through
 * `npm run report` (a real process on the PostgreSQL server: csv, json, usage errors) and through
 * the admin API on a real socket (GET /admin/fees, GET /admin/fills).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { Ledger as LedgerClass } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrations.ts";
import { PostgresSqlClient } from "../../src/ledger/postgres.ts";
import type { DecisionRecord, LedgerRecord } from "../../src/ledger/records.ts";
import {
  feesOwedByChannel,
  feesOwedByMint,
  fillRateByChannel,
  fillRateByHour,
  landedFills,
  ledgerReport,
  markoutsByChannel,
  rejectionsByCode,
  reportRange,
  toxicTakersByChannel,
  volumeByPair,
} from "../../src/ledger/report.ts";
import { formatReport, withSymbolsOf } from "../../src/ledger/report-format.ts";
import { MINT } from "../support/config.ts";
import { listen } from "../support/harness.ts";
import { npmRun } from "../support/npm-run.ts";
import { testService } from "../support/service.ts";
import { BACKENDS, decision, freshDatabase, freshLedger, settlement } from "./support.ts";

const H10 = Date.parse("2026-11-05T10:00:00Z");
const H11 = Date.parse("2026-11-05T11:00:00Z");
const RANGE = reportRange("2026-11-05", "2026-11-05");

/** 5 landed fills, 1 failed, 1 expired, 4 refusals, and one landed fill the day after. */
function dataset(): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  const fill = (
    at: number,
    over: Partial<DecisionRecord>,
    outcome: "landed" | "failed" | "expired" = "landed",
    settleAt = at + 1_000,
  ) => {
    const d = decision({ decidedAtMs: at, receivedAtMs: at - 20, ...over });
    out.push(
      d,
      settlement(d, {
        outcome,
        settledAtMs: settleAt,
        feeOwed: outcome === "landed" ? (d.feeOwed as string) : "0",
      }),
    );
  };
  const solSell = {
    pair: "SOL/USDC",
    side: "sell" as const,
    feeMint: MINT.SOL,
    filledAmountIn: "150000000",
    filledAmountOut: "1000000000",
  };
  fill(H10 + 1_000, { ...solSell, feeOwed: "1000000" });
  fill(H10 + 2_000, { ...solSell, feeOwed: "2000000" });
  fill(H11 + 3_000, { ...solSell, feeOwed: "3000000" });
  const jupBuy = {
    pair: "JUP/USDC",
    side: "buy" as const,
    feeMint: MINT.USDC,
    filledAmountIn: "1000000000",
    filledAmountOut: "800000",
  };
  fill(H10 + 5_000, { ...jupBuy, feeOwed: "811" });
  fill(H11 + 6_000, { ...jupBuy, feeOwed: "812" });
  fill(H11 + 7_000, { ...jupBuy, feeOwed: "999" }, "failed");
  fill(H11 + 8_000, { ...jupBuy, feeOwed: "999" }, "expired");
  fill(Date.parse("2026-11-06T00:00:00Z"), { ...solSell, feeOwed: "7" }); // the next day: outside
  const refuse = (at: number, over: Partial<DecisionRecord>) =>
    out.push(decision({ decidedAtMs: at, txSignature: undefined, feeOwed: undefined, ...over }));
  refuse(H10 + 9_000, {
    decision: "rejected",
    refusal: { code: "QUOTE_EXPIRED", context: "expired 3 s ago" },
  });
  refuse(H11 + 9_000, {
    decision: "rejected",
    refusal: { code: "QUOTE_EXPIRED", context: "expired 9 s ago" },
  });
  refuse(H11 + 9_500, {
    decision: "rejectedWithReason",
    refusal: { code: "INSUFFICIENT_BALANCE", context: "the taker holds 5 of the 10 it sends" },
  });
  refuse(H11 + 9_900, {
    decision: "rejected",
    refusal: {
      code: "QUOTE_NOT_FOUND",
      context: "unknown quote q-17 (never quoted here, or forgotten long after expiry)",
    },
  });
  return out;
}

describe("report ranges", () => {
  it("takes a bare --to date as that whole day, and refuses bad or reversed bounds", () => {
    expect(reportRange("2026-11-01", "2026-11-30")).toEqual({
      fromMs: Date.parse("2026-11-01T00:00:00Z"),
      toMs: Date.parse("2026-12-01T00:00:00Z"),
    });
    expect(reportRange("2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z").toMs).toBe(
      Date.parse("2026-11-01T07:00:00Z"),
    );
    expect(() => reportRange("yesterday", "2026-11-30")).toThrow(/--from: not a date/);
    expect(() => reportRange("2026-11-30", "2026-11-01T00:00:00Z")).toThrow(/must be after/);
  });
});

describe.each(BACKENDS)("ledger reports on %s", (backend) => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await freshLedger(backend);
    await ledger.write(dataset());
  }, 120_000);
  afterAll(async () => {
    await ledger?.db.close();
  });

  it("sums fees owed by mint over landed fills only, within the range", async () => {
    expect(await feesOwedByMint(ledger.db, RANGE)).toEqual(
      [
        { mint: MINT.SOL, fills: 3, feeOwed: "6000000" },
        { mint: MINT.USDC, fills: 2, feeOwed: "1623" },
      ].sort((a, b) => (a.mint < b.mint ? -1 : 1)),
    );
  });

  it("counts volume by pair from the maker's side", async () => {
    expect(await volumeByPair(ledger.db, RANGE)).toEqual([
      { pair: "JUP/USDC", fills: 2, baseVolume: "2000000000", quoteVolume: "1600000" },
      { pair: "SOL/USDC", fills: 3, baseVolume: "3000000000", quoteVolume: "450000000" },
    ]);
  });

  it("gives the fill rate by hour with honest rejections left out", async () => {
    expect(await fillRateByHour(ledger.db, RANGE)).toEqual([
      {
        hour: "2026-11-05T10:00:00.000Z",
        decided: 4,
        accepted: 3,
        landed: 3,
        honestRejections: 0,
        fillRate: 3 / 4,
      },
      {
        hour: "2026-11-05T11:00:00.000Z",
        decided: 7,
        accepted: 4,
        landed: 2,
        honestRejections: 1,
        fillRate: 2 / 6,
      },
    ]);
  });

  it("counts rejections by their stored refusal code, most frequent first", async () => {
    expect(await rejectionsByCode(ledger.db, RANGE)).toEqual([
      { code: "QUOTE_EXPIRED", count: 2 },
      { code: "INSUFFICIENT_BALANCE", count: 1 },
      { code: "QUOTE_NOT_FOUND", count: 1 },
    ]);
  });

  it("lists the landed fills in the range, oldest first, as far as the limit", async () => {
    const all = await landedFills(ledger.db, RANGE);
    expect(all.map((f) => f.landedAt)).toEqual(
      [H10 + 2_000, H10 + 3_000, H10 + 6_000, H11 + 4_000, H11 + 7_000].map((t) => new Date(t).toISOString()),
    );
    expect(all[0]).toMatchObject({
      pair: "SOL/USDC",
      side: "sell",
      feeMint: MINT.SOL,
      feeOwed: "1000000",
      slot: "123456",
    });
    expect(await landedFills(ledger.db, RANGE, 2)).toHaveLength(2);
    const report = await ledgerReport(ledger.db, RANGE);
    expect(report.from).toBe("2026-11-05T00:00:00.000Z");
    expect(report.to).toBe("2026-11-06T00:00:00.000Z");
  });
});

/**
 * Both channels: webhook fills by takers A (twice) and C, one webhook refusal; RFQ v2 fills by B
 * (twice) and C, a v2 refusal and a v2 swap signed that never landed. 60 s markouts: A +5 and +7,
 * C -30 on each channel, B -50 and -40.
 */
function channelDataset(): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  const A = "TakerA111111111111111111111111111111111111";
  const B = "TakerB111111111111111111111111111111111111";
  const C = "TakerC111111111111111111111111111111111111";
  let t = H10;
  const landed = (channel: "webhook" | "rfq-v2", taker: string, bps: number) => {
    t += 1_000;
    const v2 = channel === "rfq-v2";
    const d = decision({ channel, taker, decidedAtMs: t, feeOwed: v2 ? "0" : "1000000", feeMint: MINT.SOL });
    out.push(d, settlement(d, { channel, settledAtMs: t + 500 }), {
      kind: "markout",
      txSignature: d.txSignature as string,
      quoteId: d.quoteId,
      horizon: "60s",
      horizonMs: 60_000,
      pair: "SOL/USDC",
      side: "sell",
      taker,
      price: 150,
      mid: 150,
      markoutBps: bps,
      atMs: t + 60_000,
    });
  };
  landed("webhook", A, 5);
  landed("webhook", A, 7);
  landed("webhook", C, -30);
  landed("rfq-v2", B, -50);
  landed("rfq-v2", B, -40);
  landed("rfq-v2", C, -30);
  out.push(
    decision({
      decidedAtMs: H10 + 20_000,
      decision: "rejected",
      refusal: { code: "QUOTE_EXPIRED", context: "expired" },
      txSignature: undefined,
    }),
    decision({
      channel: "rfq-v2",
      decidedAtMs: H10 + 21_000,
      decision: "rejected",
      refusal: { code: "V2_EXPIRED", context: "expire_at is past" },
      txSignature: undefined,
    }),
    decision({ channel: "rfq-v2", decidedAtMs: H10 + 22_000 }),
  );
  return out;
}

describe.each(BACKENDS)("the report per channel on %s", (backend) => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await freshLedger(backend);
    await ledger.write(channelDataset());
  }, 120_000);
  afterAll(async () => {
    await ledger?.db.close();
  });

  it("gives the fill rate of each channel and of both together", async () => {
    expect(await fillRateByChannel(ledger.db, RANGE)).toEqual([
      { channel: "webhook", decided: 4, accepted: 3, landed: 3, honestRejections: 0, fillRate: 3 / 4 },
      { channel: "rfq-v2", decided: 5, accepted: 4, landed: 3, honestRejections: 0, fillRate: 3 / 5 },
      { channel: "all", decided: 9, accepted: 7, landed: 6, honestRejections: 0, fillRate: 6 / 9 },
    ]);
  });

  it("sums fees owed per channel and mint (RFQ v2 owes none) and in total", async () => {
    expect(await feesOwedByChannel(ledger.db, RANGE)).toEqual([
      { channel: "webhook", mint: MINT.SOL, fills: 3, feeOwed: "3000000" },
      { channel: "rfq-v2", mint: MINT.SOL, fills: 3, feeOwed: "0" },
      { channel: "all", mint: MINT.SOL, fills: 6, feeOwed: "3000000" },
    ]);
    expect(await feesOwedByMint(ledger.db, RANGE)).toEqual([
      { mint: MINT.SOL, fills: 6, feeOwed: "3000000" },
    ]);
  });

  it("averages markouts per channel and in total", async () => {
    expect(await markoutsByChannel(ledger.db, RANGE)).toEqual([
      { channel: "webhook", horizon: "60s", fills: 3, avgBps: -6 },
      { channel: "rfq-v2", horizon: "60s", fills: 3, avgBps: -40 },
      { channel: "all", horizon: "60s", fills: 6, avgBps: -23 },
    ]);
  });

  it("names the takers under the flag line per channel, and those only both channels' fills put under it", async () => {
    const line = { flagBelowBps: -10, minFills: 2 };
    expect(await toxicTakersByChannel(ledger.db, RANGE, line)).toEqual([
      { channel: "rfq-v2", taker: "TakerB111111111111111111111111111111111111", fills: 2, avgBps: -45 },
      { channel: "all", taker: "TakerB111111111111111111111111111111111111", fills: 2, avgBps: -45 },
      { channel: "all", taker: "TakerC111111111111111111111111111111111111", fills: 2, avgBps: -30 },
    ]);
    const text = formatReport(withSymbolsOf(undefined, await ledgerReport(ledger.db, RANGE, line)), "text");
    expect(text).toContain("by channel: fill rate:");
    expect(text).toMatch(/rfq-v2\s+5\s+4\s+3\s+0\s+0\.6000/);
    expect(text).toContain("mean 60s markout below -10 bps over at least 2 fills");
  });
});

// PAPER=1: a DATABASE_URL without RPC_URL is the paper setup only when it says so (issue 47, finding 1).
const npmReport = (args: string[], env: Record<string, string>) =>
  npmRun("report", args, { PAPER: "1", ...env });

describe("npm run report and the admin API", () => {
  let url: string;
  let ledger: Ledger;
  beforeAll(async () => {
    url = await freshDatabase();
    ledger = new LedgerClass(new PostgresSqlClient(url));
    await migrate(ledger.db);
    await ledger.write(dataset());
  }, 60_000);
  afterAll(async () => {
    await ledger?.db.close();
  });

  it("prints fees owed by mint as CSV, and the whole report as JSON", { timeout: 120_000 }, async () => {
    const csv = await npmReport(["--from", "2026-11-05", "--to", "2026-11-05", "--format", "csv"], {
      DATABASE_URL: url,
    });
    expect(csv.stderr).toBe("");
    expect(csv.code).toBe(0);
    const fees = csv.stdout.split("\n\n")[0]?.split("\n");
    expect(fees?.[0]).toBe("# fees owed by mint");
    expect(fees?.[1]).toBe("mint,symbol,fills,fee_owed_units,fee_owed");
    expect(fees).toContain(`${MINT.SOL},SOL,3,6000000,0.006`);
    expect(fees).toContain(`${MINT.USDC},USDC,2,1623,0.001623`);
    const json = await npmReport(["--from", "2026-11-05", "--to", "2026-11-05", "--format", "json"], {
      DATABASE_URL: url,
    });
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.fills).toHaveLength(5);
    expect(report.rejectionsByCode[0]).toEqual({ code: "QUOTE_EXPIRED", count: 2 });
  });

  it("finding 5: defaults to today (UTC): no range at all, and --from alone as the runbook runs it", {
    timeout: 60_000,
  }, async () => {
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
    for (const args of [[], ["--from", today, "--format", "text"]]) {
      const r = await npmReport(args, { DATABASE_URL: url });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        `Fill ledger report, ${today}T00:00:00.000Z to ${tomorrow}T00:00:00.000Z (end excluded)`,
      );
    }
  });

  it("refuses an unknown format or a reversed range with exit 64 and the problem named", {
    timeout: 60_000,
  }, async () => {
    const reversed = await npmReport(["--from", "2026-11-06", "--to", "2026-11-05"], { DATABASE_URL: url });
    expect(reversed.code).toBe(64);
    expect(reversed.stderr).toMatch(/--to \(2026-11-05\) must be after --from/);
    const format = await npmReport(["--from", "2026-11-05", "--to", "2026-11-06", "--format", "xml"], {
      DATABASE_URL: url,
    });
    expect(format.code).toBe(64);
    expect(format.stderr).toMatch(/--format: one of text, csv, json/);
  });

  it("serves GET /admin/fees and GET /admin/fills from the ledger, behind the admin key", {
    timeout: 60_000,
  }, async () => {
    const key = "admin-key-for-the-ledger-test";
    const service = await testService({ env: { ADMIN_API_KEY: key }, ledger });
    const ops = await listen(service.opsApp);
    try {
      const get = (path: string, k = key) => ops.fetch(path, { headers: { "x-admin-api-key": k } });
      const fees = await get("/admin/fees?from=2026-11-05&to=2026-11-05");
      expect(fees.status).toBe(200);
      const body = (await fees.json()) as {
        from: string;
        to: string;
        fees: { mint: string; feeOwed: string; symbol: string }[];
      };
      expect(body.from).toBe("2026-11-05T00:00:00.000Z");
      expect(body.fees.find((f) => f.mint === MINT.SOL)).toMatchObject({
        feeOwed: "6000000",
        symbol: "SOL",
        fills: 3,
      });
      const fills = await get("/admin/fills?from=2026-11-05T11:00:00Z&to=2026-11-06&limit=1");
      expect(fills.status).toBe(200);
      expect(((await fills.json()) as { fills: unknown[] }).fills).toHaveLength(1);
      expect((await get("/admin/fills?from=soon")).status).toBe(400);
      expect((await get("/admin/fees", "wrong-key-wrong-key-wrong")).status).toBe(401);
    } finally {
      await ops.close();
      await service.close();
    }
    const off = await testService({ env: { ADMIN_API_KEY: key } });
    const offOps = await listen(off.opsApp);
    try {
      const r = await offOps.fetch("/admin/fees", { headers: { "x-admin-api-key": key } });
      expect(r.status).toBe(404);
    } finally {
      await offOps.close();
      await off.close();
    }
  });
});

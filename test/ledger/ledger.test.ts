/**
 * The fill ledger's database layer, against a real PostgreSQL server and against PGlite, with the
 * same migrations and queries: the schema migrates once and only once, every write is an idempotent
 * upsert (one row per decision and per fill whatever is delivered twice), a later decision replaces
 * an earlier refusal but never an acceptance, a batch is written all or nothing, the refusal-codes
 * migration names the code of rows written before codes, and the channel migration reads every row
 * written before channels as the webhook's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import { MIGRATIONS, migrate, schemaVersion } from "../../src/ledger/migrations.ts";
import { PostgresSqlClient } from "../../src/ledger/postgres.ts";
import type { DecisionRecord } from "../../src/ledger/records.ts";
import { isRefusalCode } from "../../src/refusal/codes.ts";
import { BACKENDS, decision, freshClient, freshDatabase, freshLedger, settlement } from "./support.ts";

describe.each(BACKENDS)("ledger on %s", (backend) => {
  let ledger: Ledger;
  beforeAll(async () => {
    ledger = await freshLedger(backend);
  }, 120_000);
  afterAll(async () => {
    await ledger?.db.close();
  });

  const rowsFor = async (quoteId: string) => (await ledger.decisions()).filter((r) => r.quote_id === quoteId);

  it("migrates to the latest version, and a second start applies nothing", async () => {
    expect(await schemaVersion(ledger.db)).toBe(Math.max(...MIGRATIONS.map((m) => m.version)));
    expect(await migrate(ledger.db)).toEqual([]);
  });

  it("keeps one row per decision and per fill when records are delivered twice", async () => {
    const d = decision();
    const s = settlement(d);
    await ledger.write([d, s]);
    await ledger.write([d, s]);
    await ledger.write([s]);
    const rows = await rowsFor(d.quoteId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      decision: "accepted",
      fee_owed: "1000000",
      fee_mint: "SOL",
      pair: "SOL/USDC",
      side: "sell",
      filled_amount_out: "999000000",
      tx_signature: d.txSignature,
      decided_at_ms: d.decidedAtMs,
    });
    const fills = (await ledger.fills()).filter((f) => f.quote_id === d.quoteId);
    expect(fills).toEqual([
      {
        tx_signature: d.txSignature,
        channel: "webhook",
        quote_id: d.quoteId,
        outcome: "landed",
        slot: "123456",
        fee_mint: "SOL",
        fee_owed: "1000000",
        settled_at_ms: d.decidedAtMs + 800,
      },
    ]);
  });

  it("keeps amounts past 2^64 exact (NUMERIC, written and read as decimal strings)", async () => {
    const big = "340282366920938463463374607431768211455";
    const d = decision({ feeOwed: big, filledAmountOut: big });
    await ledger.write([d]);
    expect((await rowsFor(d.quoteId))[0]).toMatchObject({ fee_owed: big, filled_amount_out: big });
  });

  it("replaces an earlier refusal with the later acceptance of the same message, never the reverse", async () => {
    const refusedFirst = decision({
      decision: "rejected",
      refusal: { code: "SIMULATION_FAILED", context: "x" },
      txSignature: undefined,
    });
    const acceptedLater = {
      ...refusedFirst,
      decision: "accepted" as const,
      refusal: undefined,
      txSignature: "sig-late",
      decidedAtMs: refusedFirst.decidedAtMs + 5_000,
    };
    const staleRetry = { ...refusedFirst, decidedAtMs: refusedFirst.decidedAtMs + 9_000 };
    // Delivered out of order: the acceptance, then the earlier refusal, then a later refusal.
    await ledger.write([acceptedLater]);
    await ledger.write([refusedFirst, staleRetry]);
    expect(await rowsFor(refusedFirst.quoteId)).toMatchObject([
      { decision: "accepted", tx_signature: "sig-late" },
    ]);

    const a = decision({ decision: "rejected", refusal: { code: "QUOTE_EXPIRED", context: "one" } });
    const b = {
      ...a,
      refusal: { code: "SEND_FAILED" as const, context: "two" },
      decidedAtMs: a.decidedAtMs + 1,
    };
    await ledger.write([b]);
    await ledger.write([a]);
    expect(await rowsFor(a.quoteId)).toMatchObject([
      { decision: "rejected", code: "SEND_FAILED", reason: "two" },
    ]);
  });

  it("keeps a different message for the same quote as its own decision", async () => {
    const first = decision({
      decision: "rejected",
      refusal: { code: "QUOTE_ALREADY_CLAIMED", context: "quote already claimed by a different transaction" },
    });
    const other = decision({ quoteId: first.quoteId });
    await ledger.write([first, other]);
    expect(await rowsFor(first.quoteId)).toHaveLength(2);
  });

  it("writes a batch all or nothing", async () => {
    const good = decision();
    const bad = { ...decision(), decision: "maybe" } as unknown as DecisionRecord;
    await expect(ledger.write([good, bad])).rejects.toThrow();
    expect(await rowsFor(good.quoteId)).toEqual([]);
  });
});

describe.each(BACKENDS)("refusal codes migration on %s", (backend) => {
  it("names the code of rows written before codes from their grouping key or their text, else leaves it null", async () => {
    const db = await freshClient(backend);
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 5),
      );
      const legacy = [
        ["k1", "rejected", "QUOTE_EXPIRED: expired 3 s ago", "QUOTE_EXPIRED"],
        ["k2", "rejectedWithReason", "insufficientBalance", "insufficientBalance"],
        ["k3", "rejected", "unknown quote q-17 (never quoted here)", "unknown quote *"],
        ["k4", "rejected", "quote store unavailable: timed out", "quote store unavailable"],
        ["k5", "rejected", "something no code names", "something no code names"],
        ["k6", "accepted", null, null],
      ];
      for (const [key, decisionKind, reason, reasonCode] of legacy) {
        await db.query(
          `INSERT INTO swap_decisions (decision_key, quote_id, request_id, decision, reason, reason_code,
                                       received_at_ms, decided_at_ms)
           VALUES ($1, 'q', 'r', $2, $3, $4, 1, 2)`,
          [key, decisionKind, reason, reasonCode],
        );
      }
      expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version >= 5).map((m) => m.version));
      const rows = await db.query<{ decision_key: string; code: string | null }>(
        "SELECT decision_key, code FROM swap_decisions ORDER BY decision_key",
      );
      expect(rows).toEqual([
        { decision_key: "k1", code: "QUOTE_EXPIRED" },
        { decision_key: "k2", code: "INSUFFICIENT_BALANCE" },
        { decision_key: "k3", code: "QUOTE_NOT_FOUND" },
        { decision_key: "k4", code: "QUOTE_STORE_UNAVAILABLE" },
        { decision_key: "k5", code: null },
        { decision_key: "k6", code: null },
      ]);
      const columns = await db.query<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'swap_decisions' AND column_name = 'reason_code'",
      );
      expect(columns).toEqual([]);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe.each(BACKENDS)("channel migration (6) on %s", (backend) => {
  it("reads every decision and fill written before channels as the webhook's, and refuses a channel it does not know", async () => {
    const db = await freshClient(backend);
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 6),
      );
      await db.query(
        `INSERT INTO swap_decisions (decision_key, quote_id, request_id, decision, received_at_ms, decided_at_ms)
         VALUES ('q-old:h', 'q-old', 'r', 'accepted', 1, 2)`,
      );
      await db.query(
        `INSERT INTO fills (tx_signature, decision_key, quote_id, request_id, message_hash, outcome, fee_mint,
                            fee_owed, fee_bps, sent_at_ms, settled_at_ms)
         VALUES ('sig-old', 'q-old:h', 'q-old', 'r', 'h', 'landed', 'SOL', 5, 10, 3, 4)`,
      );
      expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version >= 6).map((m) => m.version));
      const ledger = new Ledger(db);
      expect((await ledger.decisions()).map((r) => [r.decision_key, r.channel])).toEqual([
        ["q-old:h", "webhook"],
      ]);
      expect((await ledger.fills()).map((r) => [r.tx_signature, r.channel])).toEqual([
        ["sig-old", "webhook"],
      ]);
      // A record with no channel is the webhook's; an rfq-v2 one keeps its own.
      const plain = decision();
      const v2 = decision({ channel: "rfq-v2" });
      await ledger.write([plain, settlement(plain), v2, settlement(v2, { channel: "rfq-v2" })]);
      const channels = async () =>
        Object.fromEntries((await ledger.decisions()).map((r) => [r.quote_id, r.channel]));
      expect(await channels()).toMatchObject({ [plain.quoteId]: "webhook", [v2.quoteId]: "rfq-v2" });
      expect(Object.fromEntries((await ledger.fills()).map((r) => [r.quote_id, r.channel]))).toMatchObject({
        [plain.quoteId]: "webhook",
        [v2.quoteId]: "rfq-v2",
      });
      const bad = { ...decision(), channel: "fax" } as unknown as DecisionRecord;
      await expect(ledger.write([bad])).rejects.toThrow();
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe.each(BACKENDS)("refusal vocabulary migration (7) on %s", (backend) => {
  it("rewrites every renamed code in rows written before it to its one name, and leaves every other row as it was", async () => {
    const db = await freshClient(backend);
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 7),
      );
      const old: [
        key: string,
        channel: string,
        code: string | null,
        reason: string | null,
        expected: string | null,
      ][] = [
        [
          "a",
          "rfq-v2",
          "V2_MALFORMED_TRANSACTION",
          "cannot read the transaction: empty",
          "MALFORMED_TRANSACTION",
        ],
        [
          "b",
          "rfq-v2",
          "V2_MAKER_NOT_EXCLUSIVE",
          "the maker's key is key 7 of ix 2",
          "INVALID_MAKER_ACCOUNT_USE",
        ],
        [
          "c",
          "rfq-v2",
          "V2_INVENTORY_INSUFFICIENT",
          "INVENTORY_INSUFFICIENT: 5 SOL asked, 2 available",
          "INVENTORY_INSUFFICIENT",
        ],
        [
          "d",
          "rfq-v2",
          "V2_INVENTORY_INSUFFICIENT",
          "EXPOSURE_LIMIT_EXCEEDED: SOL exposure limit",
          "EXPOSURE_LIMIT_EXCEEDED",
        ],
        [
          "e",
          "rfq-v2",
          "V2_INVENTORY_INSUFFICIENT",
          "INVENTORY_STALE: maker balances are not known",
          "INVENTORY_STALE",
        ],
        [
          "f",
          "rfq-v2",
          "V2_INVENTORY_INSUFFICIENT",
          "SOL_FOR_FEES_LOW: maker has 3 lamports",
          "SOL_FOR_FEES_LOW",
        ],
        ["g", "webhook", "SIGNER_UNKNOWN_QUOTE", "no quote q-1 in the store", "QUOTE_NOT_FOUND"],
        ["h", "rfq-v2", "SIGNER_V2_EXPIRY", "expire_at 5 is past", "V2_EXPIRED"],
        ["i", "rfq-v2", "SIGNER_V2_UNEXPECTED_PROGRAM", "ix 3 runs Evil111", "INVALID_PROGRAM"],
        [
          "j",
          "webhook",
          "SIGNER_TAKER_SIGNATURE",
          "the maker's signature slot (0) is not empty",
          "INVALID_MAKER_SIGNATURE_SLOT",
        ],
        [
          "k",
          "webhook",
          "SIGNER_TAKER_SIGNATURE",
          "signature slot 1 is empty",
          "SIGNATURE_VERIFICATION_FAILED",
        ],
        ["l", "webhook", "QUOTE_EXPIRED", "QUOTE_EXPIRED: expired 3 s ago", "QUOTE_EXPIRED"],
        ["m", "rfq-v2", "V2_LEVELS_NOT_STREAMED", "no level set matches", "V2_LEVELS_NOT_STREAMED"],
        ["n", "webhook", null, null, null],
      ];
      for (const [key, channel, code, reason] of old) {
        await db.query(
          `INSERT INTO swap_decisions (decision_key, quote_id, request_id, channel, decision, code, reason,
                                       received_at_ms, decided_at_ms)
           VALUES ($1, 'q', 'r', $2, $3, $4, $5, 1, 2)`,
          [key, channel, code === null ? "accepted" : "rejected", code, reason],
        );
      }
      expect(await migrate(db)).toEqual(MIGRATIONS.filter((m) => m.version >= 7).map((m) => m.version));
      const rows = await db.query<{ decision_key: string; code: string | null; reason: string | null }>(
        "SELECT decision_key, code, reason FROM swap_decisions ORDER BY decision_key",
      );
      expect(rows).toEqual(
        old.map(([key, , , reason, expected]) => ({ decision_key: key, code: expected, reason })),
      );
      for (const { code } of rows) if (code !== null) expect(isRefusalCode(code), code).toBe(true);
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe("migrations on postgres", () => {
  it("two instances starting together on an empty database apply each version once", async () => {
    const url = await freshDatabase();
    const a = new PostgresSqlClient(url);
    const b = new PostgresSqlClient(url);
    try {
      const [x, y] = await Promise.all([migrate(a), migrate(b)]);
      expect([...x, ...y].sort()).toEqual(MIGRATIONS.map((m) => m.version).sort());
      const applied = await a.query<{ n: number }>("SELECT count(*)::int4 AS n FROM ledger_migrations");
      expect(applied[0]?.n).toBe(MIGRATIONS.length);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

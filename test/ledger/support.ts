/**
 * The two ledger backends every ledger test runs against: a real PostgreSQL server (TEST_DATABASE_URL,
 * started by `npm test`'s wrapper, scripts/with-redis.ts --postgres; each file gets its own fresh
 * database on it) and PGlite (in memory). Both migrated as the service migrates at start.
 */
import { randomUUID } from "node:crypto";
import { Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrations.ts";
import { PgliteSqlClient } from "../../src/ledger/pglite.ts";
import { PostgresSqlClient } from "../../src/ledger/postgres.ts";
import type { DecisionRecord, SettlementRecord } from "../../src/ledger/records.ts";
import type { SqlClient } from "../../src/ledger/sql.ts";

export type Backend = "postgres" | "pglite";
export const BACKENDS: readonly Backend[] = ["postgres", "pglite"];

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      "TEST_DATABASE_URL is not set: run the tests through `npm test` (scripts/with-redis.ts --postgres\n" +
        "starts a throwaway PostgreSQL server; Debian: `sudo apt-get install -y postgresql`)",
    );
  }
  return url;
}

/** A fresh, empty database on the test server; its URL. */
export async function freshDatabase(): Promise<string> {
  const admin = new PostgresSqlClient(testDatabaseUrl(), { max: 1 });
  const name = `ledger_${randomUUID().replaceAll("-", "")}`;
  try {
    await admin.exec(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** An unmigrated client on a fresh database of `backend`. */
export async function freshClient(backend: Backend): Promise<SqlClient> {
  return backend === "postgres" ? new PostgresSqlClient(await freshDatabase()) : PgliteSqlClient.open();
}

/** A migrated ledger on a fresh database of `backend`; close with `ledger.db.close()`. */
export async function freshLedger(backend: Backend): Promise<Ledger> {
  const db = await freshClient(backend);
  await migrate(db);
  return new Ledger(db);
}

let n = 0;
/** A decision record with fresh ids; `over` changes any field. */
export function decision(over: Partial<DecisionRecord> = {}): DecisionRecord {
  const i = n++;
  const quoteId = over.quoteId ?? `q-${process.pid}-${i}`;
  const messageHash = over.messageHash ?? `h${i}`.padEnd(64, "0");
  return {
    kind: "decision",
    decisionKey: `${quoteId}:${messageHash}`,
    quoteId,
    requestId: `r-${i}`,
    taker: "Taker1111111111111111111111111111111111111",
    pair: "SOL/USDC",
    side: "sell",
    quote: {
      inputMint: "USDC",
      outputMint: "SOL",
      amountIn: "150000000",
      amountOut: "1000000000",
      quoteType: "exactIn",
      feeBps: 10,
      createdAtMs: 1_700_000_000_000,
      expiresAtMs: 1_700_000_055_000,
    },
    filledAmountIn: "150000000",
    filledAmountOut: "999000000",
    feeBps: 10,
    feeMint: "SOL",
    feeOwed: "1000000",
    decision: "accepted",
    messageHash,
    txSignature: `sig-${i}`,
    receivedAtMs: 1_700_000_001_000,
    decidedAtMs: 1_700_000_001_050,
    ...over,
  };
}

export function settlement(d: DecisionRecord, over: Partial<SettlementRecord> = {}): SettlementRecord {
  return {
    kind: "settlement",
    quoteId: d.quoteId,
    requestId: d.requestId,
    messageHash: d.messageHash ?? "",
    txSignature: d.txSignature ?? "",
    outcome: "landed",
    slot: "123456",
    feeMint: d.feeMint ?? "SOL",
    feeOwed: d.feeOwed ?? "0",
    feeBps: d.feeBps ?? 0,
    sentAtMs: d.decidedAtMs,
    settledAtMs: d.decidedAtMs + 800,
    ...over,
  };
}

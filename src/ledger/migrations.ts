/**
 * The ledger's schema as versioned SQL migrations, applied in order at start by `migrate` (both
 * adapters, the same SQL). A migration once released is never edited: a change is a new version.
 * `ledger_migrations` records what was applied; concurrent starts serialise on an advisory lock, so
 * two instances starting together apply each version once.
 */
import type { SqlClient } from "./sql.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "swap decisions and fills",
    sql: `
      CREATE TABLE swap_decisions (
        decision_key        text PRIMARY KEY,
        quote_id            text NOT NULL,
        request_id          text NOT NULL,
        taker               text,
        pair                text,
        side                text CHECK (side IN ('buy', 'sell')),
        input_mint          text,
        output_mint         text,
        quote_type          text,
        quote_taker         text,
        quoted_amount_in    numeric(40, 0),
        quoted_amount_out   numeric(40, 0),
        quote_fee_bps       integer,
        quote_created_at_ms bigint,
        quote_expires_at_ms bigint,
        filled_amount_in    numeric(40, 0),
        filled_amount_out   numeric(40, 0),
        fee_bps             integer,
        fee_mint            text,
        fee_owed            numeric(40, 0),
        decision            text NOT NULL CHECK (decision IN ('accepted', 'rejected', 'rejectedWithReason')),
        reason              text,
        message_hash        text,
        tx_signature        text,
        received_at_ms      bigint NOT NULL,
        decided_at_ms       bigint NOT NULL
      );
      CREATE INDEX swap_decisions_decided ON swap_decisions (decided_at_ms);
      CREATE INDEX swap_decisions_quote ON swap_decisions (quote_id);

      CREATE TABLE fills (
        tx_signature  text PRIMARY KEY,
        decision_key  text NOT NULL,
        quote_id      text NOT NULL,
        request_id    text NOT NULL,
        message_hash  text NOT NULL,
        outcome       text NOT NULL CHECK (outcome IN ('landed', 'failed', 'expired')),
        slot          bigint,
        detail        text,
        fee_mint      text NOT NULL,
        fee_owed      numeric(40, 0) NOT NULL,
        fee_bps       integer NOT NULL,
        sent_at_ms    bigint NOT NULL,
        settled_at_ms bigint NOT NULL
      );
      CREATE INDEX fills_settled ON fills (settled_at_ms);
      CREATE INDEX fills_decision ON fills (decision_key);
    `,
  },
  {
    version: 2,
    name: "rejection reason codes",
    sql: `
      ALTER TABLE swap_decisions ADD COLUMN reason_code text;
      CREATE INDEX swap_decisions_reason_code ON swap_decisions (reason_code) WHERE decision <> 'accepted';
    `,
  },
  {
    version: 3,
    name: "markouts",
    sql: `
      CREATE TABLE markouts (
        tx_signature text NOT NULL,
        horizon      text NOT NULL,
        horizon_ms   integer NOT NULL,
        quote_id     text NOT NULL,
        pair         text NOT NULL,
        side         text NOT NULL CHECK (side IN ('buy', 'sell')),
        taker        text,
        price        float8 NOT NULL,
        mid_at_fill  float8,
        mid          float8 NOT NULL,
        markout_bps  float8 NOT NULL,
        at_ms        bigint NOT NULL,
        PRIMARY KEY (tx_signature, horizon)
      );
      CREATE INDEX markouts_taker ON markouts (taker, horizon);
      CREATE INDEX markouts_at ON markouts (at_ms);
    `,
  },
  {
    version: 4,
    name: "mode and maker on every row",
    sql: `
      ALTER TABLE swap_decisions ADD COLUMN mode text;
      ALTER TABLE swap_decisions ADD COLUMN maker text;
      ALTER TABLE fills ADD COLUMN mode text;
      ALTER TABLE fills ADD COLUMN maker text;
      ALTER TABLE markouts ADD COLUMN mode text;
      ALTER TABLE markouts ADD COLUMN maker text;
    `,
  },
  {
    version: 5,
    name: "refusal codes",
    // Rows from before refusals were values: their grouping key, or their text's known opening, names
    // the code once, here; a reason none of these names keeps a null code.
    sql: `
      ALTER TABLE swap_decisions ADD COLUMN code text;
      UPDATE swap_decisions SET code = CASE
          WHEN reason_code ~ '^[A-Z][A-Z0-9_]+$' THEN reason_code
          WHEN reason_code = 'insufficientBalance' THEN 'INSUFFICIENT_BALANCE'
          WHEN reason_code = 'insufficientBalanceForAtaCreation' THEN 'INSUFFICIENT_BALANCE_FOR_ATA_CREATION'
          WHEN reason_code = 'signatureVerificationFailed' THEN 'SIGNATURE_VERIFICATION_FAILED'
          WHEN reason_code = 'botActivityDetected' THEN 'BOT_ACTIVITY_DETECTED'
          WHEN reason LIKE 'quote store unavailable%' THEN 'QUOTE_STORE_UNAVAILABLE'
          WHEN reason LIKE 'unknown quote %' THEN 'QUOTE_NOT_FOUND'
          WHEN reason LIKE 'requestId % does not match %' THEN 'INVALID_REQUEST_ID'
          WHEN reason LIKE 'the transaction was already submitted for another quote%' THEN 'MESSAGE_BOUND_TO_OTHER_QUOTE'
          WHEN reason LIKE 'quote already claimed by a different transaction%' THEN 'QUOTE_ALREADY_CLAIMED'
          WHEN reason LIKE 'could not read the chain clock%' THEN 'CHAIN_CLOCK_UNAVAILABLE'
          WHEN reason LIKE 'could not check the recent blockhash%' THEN 'BLOCKHASH_CHECK_UNAVAILABLE'
          WHEN reason LIKE 'inventory unavailable%' THEN 'INVENTORY_UNAVAILABLE'
          WHEN reason LIKE 'issuance unavailable%' THEN 'ISSUANCE_STORE_UNAVAILABLE'
          WHEN reason LIKE 'the swap ran out of its time budget%' THEN 'BUDGET_EXCEEDED'
          WHEN reason LIKE 'the maker signature could not be produced%' THEN 'SIGNATURE_UNAVAILABLE'
          WHEN reason LIKE 'internal error while processing the swap%' THEN 'INTERNAL_ERROR'
        END
        WHERE decision <> 'accepted';
      DROP INDEX swap_decisions_reason_code;
      ALTER TABLE swap_decisions DROP COLUMN reason_code;
      CREATE INDEX swap_decisions_code ON swap_decisions (code) WHERE decision <> 'accepted';
    `,
  },
  {
    version: 6,
    name: "channel on decisions and fills",
    // Every row before this version came through the webhook (POST /swap): the default names it so.
    // level_sequence: the RFQ v2 level set a v2 swap was judged against (null for the webhook).
    sql: `
      ALTER TABLE swap_decisions ADD COLUMN channel text NOT NULL DEFAULT 'webhook'
        CHECK (channel IN ('webhook', 'rfq-v2'));
      ALTER TABLE fills ADD COLUMN channel text NOT NULL DEFAULT 'webhook'
        CHECK (channel IN ('webhook', 'rfq-v2'));
      ALTER TABLE swap_decisions ADD COLUMN level_sequence numeric(40, 0);
      CREATE INDEX swap_decisions_channel ON swap_decisions (channel, decided_at_ms);
      CREATE INDEX fills_channel ON fills (channel, settled_at_ms);
    `,
  },
  {
    version: 7,
    name: "one refusal vocabulary",
    // Codes renamed when every channel's refusals joined one list (src/refusal/codes.ts): one idea, one
    // name. A v2 inventory refusal named the inventory's own code at the head of its context; the
    // signer's taker-signature refusal is the swap path's two codes, told apart by its context.
    sql: `
      UPDATE swap_decisions SET code = CASE
          WHEN code = 'V2_MALFORMED_TRANSACTION' THEN 'MALFORMED_TRANSACTION'
          WHEN code = 'V2_MAKER_NOT_EXCLUSIVE' THEN 'INVALID_MAKER_ACCOUNT_USE'
          WHEN code = 'V2_INVENTORY_INSUFFICIENT' AND reason LIKE 'EXPOSURE_LIMIT_EXCEEDED:%' THEN 'EXPOSURE_LIMIT_EXCEEDED'
          WHEN code = 'V2_INVENTORY_INSUFFICIENT' AND reason LIKE 'INVENTORY_STALE:%' THEN 'INVENTORY_STALE'
          WHEN code = 'V2_INVENTORY_INSUFFICIENT' AND reason LIKE 'SOL_FOR_FEES_LOW:%' THEN 'SOL_FOR_FEES_LOW'
          WHEN code = 'V2_INVENTORY_INSUFFICIENT' THEN 'INVENTORY_INSUFFICIENT'
          WHEN code = 'SIGNER_UNKNOWN_QUOTE' THEN 'QUOTE_NOT_FOUND'
          WHEN code = 'SIGNER_V2_EXPIRY' THEN 'V2_EXPIRED'
          WHEN code = 'SIGNER_V2_UNEXPECTED_PROGRAM' THEN 'INVALID_PROGRAM'
          WHEN code = 'SIGNER_TAKER_SIGNATURE' AND reason LIKE '%the maker''s signature slot%' THEN 'INVALID_MAKER_SIGNATURE_SLOT'
          WHEN code = 'SIGNER_TAKER_SIGNATURE' THEN 'SIGNATURE_VERIFICATION_FAILED'
          ELSE code
        END
        WHERE code IN ('V2_MALFORMED_TRANSACTION', 'V2_MAKER_NOT_EXCLUSIVE', 'V2_INVENTORY_INSUFFICIENT',
                       'SIGNER_UNKNOWN_QUOTE', 'SIGNER_V2_EXPIRY', 'SIGNER_V2_UNEXPECTED_PROGRAM',
                       'SIGNER_TAKER_SIGNATURE');
    `,
  },
];

/** An arbitrary constant: the advisory lock migrations hold (pg_advisory_xact_lock). */
const MIGRATION_LOCK = 7_201_013;

/** Applies every migration not yet applied; returns the versions it applied. */
export async function migrate(
  db: SqlClient,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  // Under the lock too: two concurrent CREATE TABLE IF NOT EXISTS can still collide in PostgreSQL.
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(`
      CREATE TABLE IF NOT EXISTS ledger_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  });
  const applied: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    const done = await db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      const seen = await tx.query("SELECT 1 FROM ledger_migrations WHERE version = $1", [m.version]);
      if (seen.length > 0) return false;
      // One statement at a time: the extended protocol takes one statement per query.
      for (const statement of splitStatements(m.sql)) await tx.query(statement);
      await tx.query("INSERT INTO ledger_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}

/** The migration's statements (no semicolons inside literals or bodies in these migrations). */
function splitStatements(sql: string): string[] {
  return sql
    .split(";")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** The highest migration version applied. */
export async function schemaVersion(db: SqlClient): Promise<number> {
  const rows = await db.query<{ v: number | null }>("SELECT max(version)::int4 AS v FROM ledger_migrations");
  return rows[0]?.v ?? 0;
}

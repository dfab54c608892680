/** SqlClient over a PostgreSQL server (`DATABASE_URL`), with the `postgres` client (a small pool). */
import postgres from "postgres";
import { redactUrl } from "../chain/rpc.ts";
import { type SqlClient, type SqlQueries, type SqlValue, toParams } from "./sql.ts";

type Sql = postgres.Sql<Record<string, never>>;

const queriesOf = (sql: Sql | postgres.TransactionSql<Record<string, never>>): SqlQueries => ({
  async query<T extends object>(text: string, params?: readonly SqlValue[]): Promise<T[]> {
    const rows = await sql.unsafe(text, toParams(params));
    return rows as unknown as T[];
  },
});

/** The longest wait before connecting again after a failed connection (s). */
export const MAX_RECONNECT_DELAY_S = 0.2;

/**
 * Seconds to wait before connecting again after `failures` failed connections in a row: postgres.js'
 * own curve (3^n / 100 s, jittered down to half) capped at MAX_RECONNECT_DELAY_S, so that a server
 * back from an outage is connected to within that time while one that stays down is not hammered.
 */
export function reconnectDelayS(failures: number, random: () => number = Math.random): number {
  return (0.5 + random() / 2) * Math.min(3 ** failures / 100, MAX_RECONNECT_DELAY_S);
}

export class PostgresSqlClient implements SqlClient {
  readonly kind = "postgres" as const;
  readonly description: string;
  private readonly sql: Sql;
  readonly query: SqlQueries["query"];

  constructor(url: string, opts: { max?: number; connectTimeoutS?: number } = {}) {
    this.description = `postgres ${redactUrl(url)}`;
    this.sql = postgres(url, {
      max: opts.max ?? 4,
      connect_timeout: opts.connectTimeoutS ?? 5,
      idle_timeout: 60,
      // postgres.js waits up to 20 s (3^n / 100 s, n the failures in a row) before connecting again
      // after failed connections: a server back from an outage would wait that long for its first
      // query. A capped wait lets the next attempt follow soon after it is back.
      backoff: reconnectDelayS,
      // The ledger's NOTICEs (CREATE ... IF NOT EXISTS) are not news.
      onnotice: () => {},
    });
    this.query = queriesOf(this.sql).query;
  }

  async exec(text: string): Promise<void> {
    await this.sql.unsafe(text);
  }

  async transaction<R>(fn: (tx: SqlQueries) => Promise<R>): Promise<R> {
    return (await this.sql.begin((tx) => fn(queriesOf(tx)))) as R;
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}

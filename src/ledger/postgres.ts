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

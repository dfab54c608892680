/**
 * SqlClient over PGlite (PostgreSQL compiled to WebAssembly, in this process), its files in a folder
 * (`<DATA_DIR>/ledger` by default) or in memory. One process may open a folder at a time.
 */
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { type SqlClient, type SqlQueries, type SqlValue, toParams } from "./sql.ts";

type Queryable = Pick<PGlite, "query">;

const queriesOf = (db: Queryable): SqlQueries => ({
  async query<T extends object>(text: string, params?: readonly SqlValue[]): Promise<T[]> {
    const res = await db.query<T>(text, toParams(params));
    return res.rows;
  },
});

export class PgliteSqlClient implements SqlClient {
  readonly kind = "pglite" as const;
  private readonly q: SqlQueries;

  private constructor(
    private readonly db: PGlite,
    readonly description: string,
  ) {
    this.q = queriesOf(db);
  }

  /** Opens (creating when new) the database in `dir`; in memory when `dir` is undefined. */
  static async open(dir?: string): Promise<PgliteSqlClient> {
    if (dir) mkdirSync(dir, { recursive: true });
    const db = dir ? await PGlite.create(dir) : await PGlite.create();
    return new PgliteSqlClient(db, dir ? `pglite ${dir}` : "pglite (in memory)");
  }

  query<T extends object = Record<string, unknown>>(
    text: string,
    params?: readonly SqlValue[],
  ): Promise<T[]> {
    return this.q.query<T>(text, params);
  }

  async exec(text: string): Promise<void> {
    await this.db.exec(text);
  }

  transaction<R>(fn: (tx: SqlQueries) => Promise<R>): Promise<R> {
    return this.db.transaction((tx) => fn(queriesOf(tx)));
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}

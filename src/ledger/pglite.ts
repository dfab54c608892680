/**
 * SqlClient over PGlite (PostgreSQL compiled to WebAssembly, in this process), its files in a folder
 * (`<DATA_DIR>/ledger` by default) or in memory. One process may open a folder at a time: the one
 * that has it writes its pid to `<dir>.pid`, and another open of the folder is refused while that
 * process lives (two PGlite instances on one folder would corrupt it).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
    private readonly pidFile: string | undefined,
  ) {
    this.q = queriesOf(db);
  }

  /** Opens (creating when new) the database in `dir`; in memory when `dir` is undefined. */
  static async open(dir?: string): Promise<PgliteSqlClient> {
    if (!dir) return new PgliteSqlClient(await PGlite.create(), "pglite (in memory)", undefined);
    mkdirSync(dir, { recursive: true });
    const pidFile = `${dir}.pid`;
    const holder = livingHolder(pidFile);
    if (holder !== undefined) {
      throw new Error(
        `the embedded ledger ${dir} is open in process ${holder} (one process at a time): stop it, or ask its admin API (GET /admin/fees, /admin/fills)`,
      );
    }
    writeFileSync(pidFile, `${process.pid}\n`);
    try {
      return new PgliteSqlClient(await PGlite.create(dir), `pglite ${dir}`, pidFile);
    } catch (e) {
      rmSync(pidFile, { force: true });
      throw e;
    }
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
    if (this.pidFile && livingHolder(this.pidFile) === process.pid) rmSync(this.pidFile, { force: true });
  }
}

/** The pid in `pidFile` when that process is alive (this one included); undefined otherwise. */
function livingHolder(pidFile: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, "utf8").trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (e) {
    // EPERM: alive, but another user's.
    return (e as NodeJS.ErrnoException).code === "EPERM" ? pid : undefined;
  }
}

/**
 * SqlClient over PGlite (PostgreSQL compiled to WebAssembly, in this process), its files in a folder
 * (`<DATA_DIR>/ledger` by default) or in memory. One process may open a folder at a time: the one
 * that has it writes its pid to `<dir>.pid`, and another open of the folder is refused while that
 * process lives (two PGlite instances on one folder would corrupt it).
 *
 * A new folder is created (PostgreSQL's initdb) by a short-lived child process, and only then opened
 * here. PGlite runs initdb inside the process that creates the database and keeps what it used
 * referenced after it (what that costs in memory: docs/ledger.md). With the child, the webhook's first
 * start costs what every later start does (test/ledger/pglite.test.ts).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
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
  readonly query: SqlQueries["query"];

  private constructor(
    private readonly db: PGlite,
    readonly description: string,
    private readonly pidFile: string | undefined,
  ) {
    this.query = queriesOf(db).query;
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
      if (!existsSync(join(dir, "PG_VERSION"))) await createInChild(dir);
      return new PgliteSqlClient(await PGlite.create(dir), `pglite ${dir}`, pidFile);
    } catch (e) {
      rmSync(pidFile, { force: true });
      throw e;
    }
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

/**
 * Creates the database in the new folder `dir` in a child process that exits once it is made: the
 * memory initdb used leaves with it. The child runs this Node.js without the parent's flags (a
 * profiler's, say) and loads the same PGlite package (its CommonJS build); its error ends up in ours.
 */
async function createInChild(dir: string): Promise<void> {
  const script = `
    const { PGlite } = require(${JSON.stringify(createRequire(import.meta.url).resolve("@electric-sql/pglite"))});
    PGlite.create(process.argv[1]).then((db) => db.close()).then(
      () => process.exit(0),
      (e) => { console.error(e); process.exit(1); },
    );
  `;
  const child = spawn(process.execPath, ["-e", script, dir], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    if (stderr.length < 4_000) stderr += d;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (c) => resolve(c));
  });
  if (code !== 0)
    throw new Error(`creating the embedded ledger in ${dir} failed (exit ${code}): ${stderr.trim()}`);
}

/** The pid in `pidFile` when that process is alive (this one included); undefined otherwise. */
/** The living process that has the embedded ledger in `dir` open, if any. */
export function embeddedLedgerHolder(dir: string): number | undefined {
  return livingHolder(`${dir}.pid`);
}

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
